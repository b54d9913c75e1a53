import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { nodeBinary, TESTED_NODES } from "./support/node.ts";
import { sharedBuild, type SharedName } from "./support/shared.ts";
import { cliArgs, ROOT, tempDir, treeDigest } from "./support/tree.ts";

/**
 * The CLI builds byte-identical output on every tested Node.js release (20, 22 and 24; README): the
 * public sample and a synthetic network (300 access points), each built by the same JavaScript under
 * each release, every file compared with the reference. Number formatting, sorting, hashing,
 * compression and JSON are the engine's; a change in any of them would show here.
 *
 * The reference is the run's shared build of the same dump (test/support/shared.ts), made by the Node.js
 * running the tests: the releases that are not this one build with the CLI, one build each per dump;
 * this one's build is the shared one (the command and the library write the same files, which the
 * comparison checks too when the running release is not a tested one: then all three build).
 */

const DUMPS: Record<string, SharedName> = { "public sample": "public", synthetic: "synth-300" };
const RUNNING = process.version.slice(1);

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
    for (const version of TESTED_NODES) if (version !== RUNNING) binaries.set(version, nodeBinary(version));
  }, 600_000);

  it("are the releases the README names", () => {
    const majors = TESTED_NODES.map((v) => v.split(".")[0]);
    const readme = readFileSync(path.join(ROOT, "README.md"), "utf8").replace(/\s+/g, " ");
    expect(readme).toContain(`tested on Node.js ${majors.slice(0, -1).join(", ")} and ${majors.at(-1)}`);
  });

  it("are all covered: each release not running the tests builds here, the running one made the shared builds", () => {
    expect(binaries.size).toBeGreaterThanOrEqual(TESTED_NODES.length - 1);
    expect([...binaries.keys(), RUNNING]).toEqual(expect.arrayContaining([...TESTED_NODES]));
  });

  it.each(Object.keys(DUMPS))("are byte-identical: %s", async (name) => {
    const shared = await sharedBuild(DUMPS[name]);
    const reference = treeDigest(shared.out);
    expect(reference.size, "files of a build").toBeGreaterThan(1000);
    // one release at a time: the machine has two cores, and the builds are what is measured against each other
    for (const [version, binary] of binaries) {
      const out = path.join(tempDir(), `dist-${version}`);
      const r = await build(binary, shared.data, out);
      expect(r, `Node ${version}`).toEqual({ status: 0, stderr: "" });
      const tree = treeDigest(out);
      const differing = [...new Set([...reference.keys(), ...tree.keys()])].filter((f) => reference.get(f) !== tree.get(f));
      expect(differing.slice(0, 20), `files Node ${version} writes otherwise than Node ${RUNNING} (the shared build)`).toEqual([]);
    }
  });
});
