import { describe, expect, it } from "vitest";
import { build } from "../src/index.ts";
import { placeholderValues } from "../src/core/plan.ts";
import { API_HEADERS, isDocsPath } from "../src/core/routes.ts";
import { CADDY_LIMITS, caddyLimits } from "../src/hosts/caddy.ts";
import { hostileDump } from "./support/hostile.ts";
import { startCaddy } from "./support/caddy.ts";
import { describeServed, type Request } from "./support/served.ts";
import type { RawResponse } from "./support/http.ts";
import { tempDir } from "./support/tree.ts";

/**
 * Debian's Caddy, started as a child process with the Caddyfile `host-config caddy --standalone`
 * prints for the build it serves, answers every request like the preview (test/support/served.ts).
 * A difference is a failure unless it is one of Caddy's listed limits (CADDY_LIMITS, docs/hosting.md).
 */

const HEADERS = Object.keys(API_HEADERS).map((h) => h.toLowerCase());

/** Which limit explains a difference, from the request alone; undefined if none does. */
function limitOf(r: Request, p: RawResponse, n: RawResponse): keyof typeof CADDY_LIMITS | "assetType" | undefined {
  const q = r.target.indexOf("?");
  const rawPath = q < 0 ? r.target : r.target.slice(0, q);
  const query = q < 0 ? "" : r.target.slice(q + 1);
  const onlyType =
    p.status === n.status && p.body.equals(n.body) && HEADERS.every((h) => h === "content-type" || p.headers[h] === n.headers[h]);
  // A non-API file other than HTML: Caddy types it by Go's MIME table, the preview as http-server does.
  if (onlyType && (!rawPath.startsWith("/api") || isDocsPath(rawPath)) && !/\.html?$|\/$/.test(rawPath) && p.status === 200)
    return "assetType";
  if (/%(?![0-9a-f]{2})/i.test(rawPath) && n.status === 400) return "malformed";
  if (query.split("&").some((part) => part.split("=")[0].includes("%"))) return "paramNames";
  if (/%(?:[46][1-9a-f]|[57][0-9a]|3[0-9]|2[de]|5f|7e)/i.test(query) && n.status === 404) return "escapedUnreserved";
  return undefined;
}

describeServed({
  name: "caddy",
  start: startCaddy,
  limitOf,
  // Malformed encoding in a path (1 target, 5 methods); an escaped letter in a value (GET, HEAD, OPTIONS; other methods are refused alike), in a name (GET: HEAD and OPTIONS answer alike); three asset types, map.js, leaflet.css and the reference's docs.js (GET, HEAD).
  otherLimits: { malformed: 5, escapedUnreserved: 3, paramNames: 1, assetType: 6 },
});

describe("Caddy's warnings", () => {
  it("warns of no hostile value (every one folds letter by letter), but of a letter whose case folds to two", async () => {
    const result = await build({ data: hostileDump(), out: `${tempDir()}/dist` });
    const values = placeholderValues(result.model!);
    expect(caddyLimits(values)).toEqual([]);
    const strasse = { ...values, values: { ...values.values, mac: ["straße"] } };
    expect(caddyLimits(strasse).map((w) => w.message)).toEqual([`if_hwaddress="straße": ${CADDY_LIMITS.caseFolding}`]);
  });
});
