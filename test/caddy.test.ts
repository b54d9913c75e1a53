import { describe, expect, it } from "vitest";
import { placeholderValues } from "../src/core/plan.ts";
import { CADDY_LIMITS, caddyLimits } from "../src/hosts/caddy.ts";
import { startCaddy } from "./support/caddy.ts";
import { describeHost } from "./support/hosts-replay.ts";
import { SHARED_LIMITS, split, type Request } from "./support/served.ts";
import type { RawResponse } from "./support/http.ts";
import { sharedBuild } from "./support/shared.ts";

/**
 * Debian's Caddy, started as a child process with the Caddyfile `host-config caddy --standalone`
 * prints for the build it serves, answers every request like the preview (test/support/hosts-replay.ts).
 * A difference is a failure unless it is one of Caddy's listed limits (CADDY_LIMITS, docs/hosting.md).
 */

/** Which limit explains a difference, from the request alone; undefined if none does. */
function limitOf(r: Request, p: RawResponse, n: RawResponse): keyof typeof CADDY_LIMITS | "assetType" | undefined {
  if (SHARED_LIMITS.assetType(r, p, n)) return "assetType";
  if (/%(?![0-9a-f]{2})/i.test(split(r).rawPath) && n.status === 400) return "malformed";
  if (SHARED_LIMITS.paramNames(r)) return "paramNames";
  if (SHARED_LIMITS.escapedUnreserved(r, n)) return "escapedUnreserved";
  return undefined;
}

describeHost({
  name: "caddy",
  start: startCaddy,
  limitOf,
  // Malformed encoding in a path (1 target, 5 methods); an escaped letter in a value (GET, HEAD, OPTIONS; other methods are refused alike), in a name (GET: HEAD and OPTIONS answer alike); three asset types, map.js, leaflet.css and the reference's docs.js (GET, HEAD).
  otherLimits: { malformed: 5, escapedUnreserved: 3, paramNames: 1, assetType: 6 },
});

describe("Caddy's warnings", () => {
  it("warns of no hostile value (every one folds letter by letter), but of a letter whose case folds to two", async () => {
    const values = placeholderValues((await sharedBuild("hostile")).model);
    expect(caddyLimits(values)).toEqual([]);
    const strasse = { ...values, values: { ...values.values, mac: ["straße"] } };
    expect(caddyLimits(strasse).map((w) => w.message)).toEqual([`if_hwaddress="straße": ${CADDY_LIMITS.caseFolding}`]);
  });
});
