import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { build, startPreview, type Preview } from "../src/index.ts";
import { rawRequest } from "./support/http.ts";
import { tempDir } from "./support/tree.ts";
import { fileFor, parseRouting } from "../src/core/routes.ts";

/**
 * A rebuild while the preview runs: the preview routes by the filter aliases of the build it now
 * serves (`.mesh-api-aliases.json`, which it looks at again at most once a second), as a host does
 * after a deploy.
 */

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
  it("routes by the .mesh-api-aliases.json of the build it now serves", async () => {
    const out = path.join(tempDir(), "dist");
    /** The bounds that are aliases in the build's .mesh-api-aliases.json: answered by another bound's file. */
    const aliasedBounds = () => [
      ...(parseRouting(readFileSync(out + fileFor("aliases"), "utf8"))
        .aliases.get("bound")
        ?.keys() ?? []),
    ];
    // "before 0.5.1" selects what "before 0.5" does: an alias, not a file of its own.
    await build({ data: dump("0.5.1"), out });
    expect(aliasedBounds()).toContain("0.5.1");
    expect(aliasedBounds()).not.toContain("0.6.2");
    preview = await startPreview({ dir: out, port: 0 });
    const port = Number(new URL(preview.url).port);
    const before = async (bound: string) => {
      const r = await rawRequest(port, "GET", `/api/v1/accesspoint/?firmware_version__before=${bound}`);
      return { status: r.status, ips: r.status === 200 ? JSON.parse(r.body.toString()).map((a: { main_ip: string }) => a.main_ip) : [] };
    };
    expect(await before("0.5.1")).toEqual({ status: 200, ips: ["10.0.0.2"] });
    // Not a present version: answered as the first bound after it ("before 1.0"), both versions.
    expect(await before("0.6.2")).toEqual({ status: 200, ips: ["10.0.0.1", "10.0.0.2"] });

    await build({ data: dump("0.6.2"), out });
    expect(aliasedBounds()).toContain("0.6.2");
    // Until the preview reads the new routing, 0.6.2 answers by the old bounds; then by the new ones. Bounded, not a fixed sleep.
    await vi.waitFor(async () => expect(await before("0.6.2")).toEqual({ status: 200, ips: ["10.0.0.2"] }), {
      timeout: 10_000,
      interval: 50,
    });
  });
});
