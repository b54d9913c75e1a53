import { describe, expect, it } from "vitest";
import { build } from "../src/index.ts";
import { placeholderValues } from "../src/core/plan.ts";
import { API_HEADERS } from "../src/core/routes.ts";
import { APACHE_LIMITS, apacheLimits } from "../src/hosts/apache.ts";
import { hostileDump } from "./support/hostile.ts";
import { startApache } from "./support/apache.ts";
import { describeServed, type Request } from "./support/served.ts";
import type { RawResponse } from "./support/http.ts";
import { tempDir } from "./support/tree.ts";

/**
 * Debian's Apache, started as a child process with the configuration `host-config apache --standalone`
 * prints for the build it serves, answers every request like the preview (test/support/served.ts).
 * A difference is a failure unless it is one of Apache's listed limits (APACHE_LIMITS, docs/hosting.md).
 */

const HEADERS = Object.keys(API_HEADERS).map((h) => h.toLowerCase());

/** Which limit explains a difference, from the request alone; undefined if none does. */
function limitOf(r: Request, p: RawResponse, n: RawResponse): keyof typeof APACHE_LIMITS | undefined {
  const q = r.target.indexOf("?");
  const rawPath = q < 0 ? r.target : r.target.slice(0, q);
  const onlyType =
    p.status === n.status && p.body.equals(n.body) && HEADERS.every((h) => h === "content-type" || p.headers[h] === n.headers[h]);
  if (onlyType && !rawPath.startsWith("/api") && !/\.html?$|\/$/.test(rawPath) && p.status === 200) return "assetType";
  return undefined;
}

describeServed({
  name: "apache",
  start: startApache,
  limitOf,
  // Two asset types (GET, HEAD).
  otherLimits: { assetType: 4 },
});

describe("Apache's warnings", () => {
  it("warns of no hostile value (every one folds letter by letter), but of a letter whose case folds to two", async () => {
    const result = await build({ data: hostileDump(), out: `${tempDir()}/dist` });
    const values = placeholderValues(result.model!);
    expect(apacheLimits(values)).toEqual([]);
    const strasse = { ...values, values: { ...values.values, mac: ["straße"] } };
    expect(apacheLimits(strasse).map((w) => w.message)).toEqual([`if_hwaddress="straße": ${APACHE_LIMITS.caseFolding}`]);
  });
});
