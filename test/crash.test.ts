import { spawn } from "node:child_process";
import { cpSync, readdirSync } from "node:fs";
import path from "node:path";
import fg from "fast-glob";
import { describe, expect, it } from "vitest";
import { build } from "../src/index.ts";
import { synthesize, writeSynthDump } from "../src/gen/synth.ts";
import { cliArgs, ROOT, tempDir, treeDigest } from "./support/tree.ts";

/** SIGKILL a build while it writes: the previous output stays intact, and the next build cleans up and succeeds. */

/**
 * Runs a build of `data` into `out` and SIGKILLs it once its temporary folder holds `files` files. The
 * build is frozen (SIGSTOP) while its files are counted, so a slow count cannot let it run on. Between
 * counts it runs for a time set by the pace it wrote at in its last run: long enough for at most a quarter
 * of the files still missing, never over 20 ms, and 2 ms while its folder does not exist yet. A fixed pace
 * failed once in CI: the folder appeared and the whole build was written within one 90 ms pause.
 */
async function killWhenWritten(data: string, out: string, files: number): Promise<number> {
  const child = spawn(process.execPath, [...cliArgs(), "build", "--data", data, "--out", out, "-q"], { cwd: ROOT });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  let ended = false;
  void exited.then(() => (ended = true));
  const parent = path.dirname(out);
  const own = `.dist.tmp-${child.pid}-`;
  let seen = 0;
  let pause = 2;
  try {
    while (!ended) {
      child.kill("SIGSTOP");
      const tmp = readdirSync(parent).find((n) => n.startsWith(own));
      const before = seen;
      seen = tmp ? fg.sync("**", { cwd: path.join(parent, tmp), onlyFiles: true }).length : 0;
      if (seen >= files) break;
      // Files per millisecond in the last run; the pause that was asked for is a floor of the time it ran.
      const pace = (seen - before) / pause;
      pause = pace > 0 ? Math.min(20, Math.max(1, (files - seen) / 4 / pace)) : 2;
      child.kill("SIGCONT");
      await new Promise((ok) => setTimeout(ok, pause));
    }
  } finally {
    child.kill("SIGKILL");
  }
  const { code, signal } = await exited;
  if (signal !== "SIGKILL") throw new Error(`the build ended (${code}) before ${files} files were written (${seen} seen)`);
  return seen;
}

describe("crash safety", () => {
  it("keeps the previous output through SIGKILLs at several points while writing", async () => {
    const [a, b] = [tempDir(), tempDir()];
    await writeSynthDump(a, synthesize({ aps: 120, seed: 1 }));
    await writeSynthDump(b, synthesize({ aps: 120, seed: 2 }));
    const out = path.join(tempDir(), "dist");
    await build({ data: a, out });
    const before = treeDigest(out);
    // 120 access points write about 2,200 files (400 wrote 7,000 at over 1.5 times the time): the last kill below still
    // comes while the build writes, with a margin.
    expect(before.size).toBeGreaterThan(2000);
    // The same previous output, untouched by kills: a build carries what it replaces (the meshviewer file's first sightings).
    const twin = path.join(tempDir(), "dist");
    cpSync(out, twin, { recursive: true });

    for (const at of [1, 300, 1000, 1800]) {
      const written = await killWhenWritten(b, out, at);
      expect(written).toBeGreaterThanOrEqual(at);
      expect(treeDigest(out)).toEqual(before);
    }
    expect(readdirSync(path.dirname(out)).filter((n) => n.startsWith(".dist.tmp-")).length).toBeGreaterThan(0);

    // The next build removes what the killed ones left and succeeds.
    await build({ data: b, out });
    expect(readdirSync(path.dirname(out))).toEqual(["dist"]);
    await build({ data: b, out: twin });
    expect(treeDigest(out)).toEqual(treeDigest(twin));
  }, 120_000);
});
