import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { startPreview, type Preview } from "../src/index.ts";
import { urlFor } from "../src/core/routes.ts";
import { compareVersionKeys, isParseableVersion, versionKey, versionsAtMost } from "../src/core/values/version.ts";
import { boundMembers, drawnBounds } from "./support/bounds.ts";
import { rawRequests } from "./support/http.ts";
import { sharedBuild, type SharedName } from "./support/shared.ts";

/**
 * Every parseable firmware bound is answered as the original answers it (issue 30): not only the
 * bounds the build writes files for, but any bound before, between, after or on the data's versions,
 * each by the file of its class. Over HTTP through the preview, against the members the original's
 * comparison selects (version.ts), for bounds drawn around the versions of two networks.
 */
const open: Preview[] = [];
afterAll(async () => {
  for (const p of open) await p.close();
});

const PARAMS = ["firmware_version__before", "firmware_version__after"] as const;

describe.each<SharedName>(["public", "synth-300"])("firmware bounds on %s", (name) => {
  it("answers every drawn parseable bound with the access points the original selects", async () => {
    const { out, model } = await sharedBuild(name);
    const preview = await startPreview({ dir: out, port: 0 });
    open.push(preview);
    const port = Number(new URL(preview.url).port);
    const bounds = drawnBounds(model, 300, 30);
    expect(bounds.length).toBeGreaterThan(100);
    const cases = PARAMS.flatMap((param) => bounds.map((bound) => ({ param, bound })));
    const answers = await rawRequests(
      port,
      cases.map(({ param, bound }) => ({ method: "GET", target: urlFor("accesspoint-list", { [param]: bound }) })),
    );
    const wrong = cases.flatMap(({ param, bound }, i) => {
      const r = answers[i];
      if (r.status !== 200) return [`${param}=${bound}: ${r.status}`];
      const got = (JSON.parse(r.body.toString()) as { main_ip: string }[]).map((a) => a.main_ip).sort();
      const want = boundMembers(model, param, bound);
      return JSON.stringify(got) === JSON.stringify(want)
        ? []
        : [`${param}=${bound}: ${got.length} access points, the original ${want.length}`];
    });
    expect(wrong.slice(0, 10)).toEqual([]);
    // Both sides were exercised: bounds that select some access points, and some that select none.
    const sizes = cases.map(({ param, bound }) => boundMembers(model, param, bound).length);
    expect(sizes.filter((n) => n === 0).length).toBeGreaterThan(0);
    expect(sizes.filter((n) => n > 0).length).toBeGreaterThan(cases.length / 4);
  });
});

describe("versionsAtMost: a pattern of the versions at or before a bound, for the servers", () => {
  it("matches exactly the parseable versions that sort at or before the bound (fast-check, fixed seed)", () => {
    const number = fc.oneof(
      fc.integer({ min: 0, max: 30 }).map(String),
      fc.integer({ min: 0, max: 9 }).map((n) => `0${n}`),
      fc.integer({ min: 0, max: 2000 }).map(String),
    );
    const version = fc.oneof(
      fc.array(number, { minLength: 1, maxLength: 4 }).map((p) => p.join(".")),
      fc
        .tuple(fc.array(number, { minLength: 2, maxLength: 4 }), fc.boolean(), number, fc.option(fc.constantFrom("ab12", "0", "f")))
        .map(([p, unstable, build, hex]) => `${p.join(".")}${unstable ? "-unstable" : ""}-${build}${hex ? `-${hex}` : ""}`),
      fc.integer({ min: 0, max: 9 }).map((d) => `opennet0.${d}.sdk`),
      fc.constantFrom("garbage", "1.", "-1", "1..2", "opennet0.10.sdk", "1.2-x", "1.2-3-G", ""),
    );
    let matched = 0;
    fc.assert(
      fc.property(version, fc.array(version, { minLength: 1, maxLength: 30 }), (bound, values) => {
        if (!isParseableVersion(bound)) return;
        const pattern = new RegExp(versionsAtMost(bound));
        for (const v of [...values, bound, `${bound}.0`, `0${bound}`]) {
          const atMost = isParseableVersion(v) && compareVersionKeys(versionKey(v), versionKey(bound)) <= 0;
          expect(pattern.test(v), `${v} against ${bound}`).toBe(atMost);
          if (atMost) matched++;
        }
      }),
      { numRuns: 3000, seed: 7 },
    );
    // both sides were exercised
    expect(matched).toBeGreaterThan(5000);
  });
});
