import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { synthesize, writeSynthDump } from "../src/gen/synth.ts";
import { nodeBinary, TESTED_NODES } from "./support/node.ts";
import { cliArgs, ROOT, tempDir, treeDigest } from "./support/tree.ts";

/**
 * The CLI builds byte-identical output on every tested Node.js release (20, 22 and 24; README): the
 * public sample and a synthetic network, each built by the same JavaScript under each release, every
 * file compared with the first release's. Number formatting, sorting, hashing, compression and JSON
 * are the engine's; a change in any of them would show here.
 */

const DUMPS = {
  "public sample": path.join(ROOT, "test/fixtures/public-sample/dump"),
  synthetic: "", // written below
};

/** `mesh-api build` under the `node` at `binary`, quiet; resolves with its exit code and stderr. */
function build(binary: string, data: string, out: string): Promise<{ status: number; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(binary, [...cliArgs(), "build", "--data", data, "--out", out, "-q"], { cwd: ROOT });
    let stderr = "";
    child.stderr.on("data", (c) => (stderr += c));
    child.on("close", (status) => resolve({ status: status ?? -1, stderr }));
  });
}

describe("builds under Node.js " + TESTED_NODES.join(", "), () => {
  const binaries = new Map<string, string>();

  beforeAll(async () => {
    for (const version of TESTED_NODES) binaries.set(version, nodeBinary(version));
    DUMPS.synthetic = path.join(tempDir(), "synthetic");
    await writeSynthDump(DUMPS.synthetic, synthesize({ aps: 300, seed: 24 }));
  }, 600_000);

  it("are the releases the README names", () => {
    const majors = TESTED_NODES.map((v) => v.split(".")[0]);
    const readme = readFileSync(path.join(ROOT, "README.md"), "utf8").replace(/\s+/g, " ");
    expect(readme).toContain(`tested on Node.js ${majors.slice(0, -1).join(", ")} and ${majors.at(-1)}`);
  });

  it.each(Object.keys(DUMPS) as (keyof typeof DUMPS)[])("are byte-identical: %s", async (name) => {
    const trees = new Map<string, Map<string, string>>();
    // one release at a time: the machine has two cores, and the builds are what is measured against each other
    for (const version of TESTED_NODES) {
      const out = path.join(tempDir(), `dist-${version}`);
      const r = await build(binaries.get(version)!, DUMPS[name], out);
      expect(r, `Node ${version}`).toEqual({ status: 0, stderr: "" });
      trees.set(version, treeDigest(out));
    }
    const [first, ...others] = TESTED_NODES;
    const reference = trees.get(first)!;
    expect(reference.size, "files of a build").toBeGreaterThan(1000);
    for (const version of others) {
      const tree = trees.get(version)!;
      const differing = [...new Set([...reference.keys(), ...tree.keys()])].filter((f) => reference.get(f) !== tree.get(f));
      expect(differing.slice(0, 20), `files Node ${version} writes otherwise than Node ${first}`).toEqual([]);
    }
  });
});
