import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { placeholderValues } from "../src/core/plan.ts";
import { NGINX_LIMITS, nginxConfig, nginxLimits, nginxOverlong } from "../src/hosts/nginx.ts";
import { NGINX, startNginx } from "./support/nginx.ts";
import { describeHost } from "./support/hosts-replay.ts";
import { SHARED_LIMITS, type Request } from "./support/served.ts";
import type { RawResponse } from "./support/http.ts";
import { sharedBuild } from "./support/shared.ts";
import { tempDir } from "./support/tree.ts";

/**
 * Debian's nginx, started as a child process with the configuration `host-config nginx --standalone`
 * prints for the build it serves, answers every request like the preview (test/support/hosts-replay.ts).
 * A difference is a failure unless it is one of nginx's listed limits (NGINX_LIMITS, docs/hosting.md).
 */

/** Which limit explains a difference, from the request alone; undefined if none does. */
function limitOf(r: Request, p: RawResponse, n: RawResponse): keyof typeof NGINX_LIMITS | "assetType" | undefined {
  if (SHARED_LIMITS.assetType(r, p, n)) return "assetType";
  if (p.status === 400) return "malformed";
  if (SHARED_LIMITS.paramNames(r)) return "paramNames";
  if (SHARED_LIMITS.escapedUnreserved(r, n)) return "escapedUnreserved";
  return undefined;
}

describeHost({
  name: "nginx",
  start: startNginx,
  overlong: nginxOverlong,
  limitOf,
  // Malformed encoding (3 targets, 5 methods); an escaped letter in a value (GET, HEAD, OPTIONS; other methods are refused alike), in a name (GET: HEAD and OPTIONS answer alike); three asset types, map.js, leaflet.css and the reference's docs.js (GET, HEAD).
  otherLimits: { malformed: 15, escapedUnreserved: 3, paramNames: 1, assetType: 6 },
});

describe("nginx's warnings", () => {
  it("takes the standalone configuration without a warning of its own (nginx -t)", async () => {
    const { out, model } = await sharedBuild("public");
    const prefix = tempDir();
    const config = path.join(prefix, "nginx.conf");
    writeFileSync(config, nginxConfig(placeholderValues(model), { standalone: { root: out, port: 1, prefix } }));
    const t = spawnSync(NGINX, ["-t", "-p", prefix, "-c", config], { encoding: "utf8" });
    expect(t.status).toBe(0);
    expect(t.stderr.split("\n").filter((l) => /\[(warn|emerg|alert|crit|error)\]/.test(l))).toEqual([]);
  });

  it("warns of no hostile value (every one folds letter by letter), but of a letter whose case folds to two", async () => {
    const values = placeholderValues((await sharedBuild("hostile")).model);
    expect(nginxLimits(values)).toEqual([]);
    const strasse = { ...values, values: { ...values.values, mac: ["straße"] } };
    expect(nginxLimits(strasse).map((w) => w.message)).toEqual([`if_hwaddress="straße": ${NGINX_LIMITS.caseFolding}`]);
  });
});
