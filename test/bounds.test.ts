import { afterAll, describe, expect, it } from "vitest";
import { startPreview, type Preview } from "../src/index.ts";
import { urlFor } from "../src/core/routes.ts";
import { boundMembers, drawnBounds } from "./support/bounds.ts";
import { pool, rawRequest } from "./support/http.ts";
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
    const answers = await pool(cases, 8, ({ param, bound }) => rawRequest(port, "GET", urlFor("accesspoint-list", { [param]: bound })));
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
