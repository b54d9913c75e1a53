import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import path from "node:path";
import fg from "fast-glob";
import { describe, expect, it } from "vitest";
import { build } from "../src/index.ts";
import { synthesize, writeSynthDump } from "../src/gen/synth.ts";
import { cliArgs, ROOT, tempDir, treeDigest } from "./support/tree.ts";

/** SIGKILL a build while it writes: the previous output stays intact, and the next build cleans up and succeeds. */

function killWhenWritten(data: string, out: string, files: number): Promise<number> {
  const child = spawn(process.execPath, [...cliArgs(), "build", "--data", data, "--out", out, "-q"], { cwd: ROOT });
  const parent = path.dirname(out);
  return new Promise((resolve, reject) => {
    let seen = 0;
    const poll = setInterval(() => {
      const tmp = readdirSync(parent).find((n) => n.startsWith(".dist.tmp-"));
      seen = tmp ? fg.sync("**", { cwd: path.join(parent, tmp), onlyFiles: true }).length : 0;
      if (seen >= files) {
        clearInterval(poll);
        child.kill("SIGKILL");
      }
    }, 5);
    child.on("exit", (code, signal) => {
      clearInterval(poll);
      if (signal === "SIGKILL") resolve(seen);
      else reject(new Error(`the build ended (${code}) before ${files} files were written (${seen} seen)`));
    });
  });
}

describe("crash safety", () => {
  it("keeps the previous output through SIGKILLs at several points while writing", async () => {
    const [a, b] = [tempDir(), tempDir()];
    await writeSynthDump(a, synthesize({ aps: 400, seed: 1 }));
    await writeSynthDump(b, synthesize({ aps: 400, seed: 2 }));
    const out = path.join(tempDir(), "dist");
    await build({ data: a, out });
    const before = treeDigest(out);
    expect(before.size).toBeGreaterThan(4000);

    for (const at of [1, 300, 1500, 3500]) {
      const written = await killWhenWritten(b, out, at);
      expect(written).toBeGreaterThanOrEqual(at);
      expect(treeDigest(out)).toEqual(before);
    }
    expect(readdirSync(path.dirname(out)).filter((n) => n.startsWith(".dist.tmp-")).length).toBeGreaterThan(0);

    // The next build removes what the killed ones left and succeeds.
    await build({ data: b, out });
    expect(readdirSync(path.dirname(out))).toEqual(["dist"]);
    const fresh = path.join(tempDir(), "dist");
    await build({ data: b, out: fresh });
    expect(treeDigest(out)).toEqual(treeDigest(fresh));
  }, 120_000);
});
