import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { build, startPreview, type Preview } from "../src/index.ts";
import { rawRequest } from "./support/http.ts";
import { tempDir } from "./support/tree.ts";
import { netlifyRules } from "../src/hosts/netlify.ts";

/** A rebuild while the preview runs: the preview routes by the new build's `_redirects`, as Netlify would after a deploy. */

let preview: Preview | undefined;
afterAll(() => preview?.close());

function dump(version: string): string {
  const data = tempDir();
  mkdirSync(path.join(data, "accesspoints"));
  const aps = [
    { main_ip: "10.0.0.1", mesh_version: version },
    { main_ip: "10.0.0.2", mesh_version: "0.4" },
  ];
  writeFileSync(path.join(data, "accesspoints/a.json"), JSON.stringify(aps));
  mkdirSync(path.join(data, "links"));
  writeFileSync(path.join(data, "links/l.ndjson"), "");
  return data;
}

describe("preview after a rebuild", () => {
  it("routes by the rules of the build it now serves", async () => {
    const out = path.join(tempDir(), "dist");
    // "before 0.5.1" selects what "before 0.5" does: an alias, reached only through a _redirects rule.
    const first = await build({ data: dump("0.5.1"), out });
    expect(netlifyRules(first.values!).text).toContain("firmware_version__before=0.5.1 ");
    preview = await startPreview({ dir: out, port: 0 });
    const port = Number(new URL(preview.url).port);
    const before = async (bound: string) => {
      const r = await rawRequest(port, "GET", `/api/v1/accesspoint/?firmware_version__before=${bound}`);
      return { status: r.status, ips: r.status === 200 ? JSON.parse(r.body.toString()).map((a: { main_ip: string }) => a.main_ip) : [] };
    };
    expect(await before("0.5.1")).toEqual({ status: 200, ips: ["10.0.0.2"] });

    const second = await build({ data: dump("0.6.2"), out });
    expect(netlifyRules(second.values!).text).toContain("firmware_version__before=0.6.2 ");
    await new Promise((r) => setTimeout(r, 1100)); // the preview looks for a new _redirects at most once a second
    expect(await before("0.6.2")).toEqual({ status: 200, ips: ["10.0.0.2"] });
  });
});
