import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { build } from "../src/index.ts";
import { synthesize, writeSynthDump } from "../src/gen/synth.ts";
import { cli, cliArgs, ROOT, tempDir, treeDigest } from "./support/tree.ts";

/**
 * Ctrl-C or SIGTERM during a build removes its temporary folder and says the previous output was kept;
 * a second build into the same folder while one writes is refused, and a lock a killed build left is
 * taken over. Every build runs as the CLI, in a process of its own, into a fresh temporary folder.
 */

interface Run {
  readonly status: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
}

function startBuild(data: string, out: string, env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [...cliArgs(), "build", "--data", data, "--out", out], {
    cwd: ROOT,
    env: { ...process.env, ...env },
  });
  let stderr = "";
  child.stderr.on("data", (c) => (stderr += c));
  const done = new Promise<Run>((resolve) => child.on("close", (status, signal) => resolve({ status, signal, stderr })));
  return { child, done };
}

/** Waits until the build's temporary folder beside `out` exists: it is writing. */
async function writing(out: string, pid: number, done: Promise<Run>): Promise<void> {
  let ended = false;
  void done.then(() => (ended = true));
  const own = `.${path.basename(out)}.tmp-${pid}-`;
  while (!readdirSync(path.dirname(out)).some((n) => n.startsWith(own))) {
    if (ended) throw new Error(`the build ended before it wrote: ${(await done).stderr}`);
    await new Promise((ok) => setTimeout(ok, 5));
  }
}

// A build of 300 access points writes some 4,400 files: a second or more, far longer than the 5 ms between
// looks. The dump of 1,500 is read long enough for the 2 ms looks of the interrupt before anything is written.
let big: string;
let medium: string;
let small: string;
beforeAll(async () => {
  [big, medium, small] = [tempDir(), tempDir(), tempDir()];
  await writeSynthDump(big, synthesize({ aps: 1500, seed: 4 }));
  await writeSynthDump(medium, synthesize({ aps: 300, seed: 4 }));
  await writeSynthDump(small, synthesize({ aps: 30, seed: 5 }));
}, 60_000);

describe("an interrupted build", () => {
  it("SIGINT: removes its temporary folder, says the previous output was kept, exits 130", async () => {
    const out = path.join(tempDir(), "dist");
    await build({ data: small, out });
    const before = treeDigest(out);
    const { child, done } = startBuild(medium, out);
    await writing(out, child.pid!, done);
    child.kill("SIGINT");
    const r = await done;
    expect(r.status, r.stderr).toBe(130);
    expect(r.stderr).toMatch(/^mesh-api: interrupted, previous output kept \(.*dist is as it was\)$/m);
    expect(r.stderr).not.toMatch(/^built /m);
    expect(readdirSync(path.dirname(out))).toEqual(["dist"]);
    expect(treeDigest(out)).toEqual(before);
  }, 60_000);

  it("SIGINT while the writing thread writes (src/io/write/file-calls.ts): it stops before the folder goes, and nothing is left", async () => {
    const out = path.join(tempDir(), "dist");
    await build({ data: small, out });
    const before = treeDigest(out);
    const { child, done } = startBuild(medium, out, { MESH_API_WRITER_THREAD_FROM: "0" });
    await writing(out, child.pid!, done);
    // well into the writing: the thread has made folders and files by now
    const own = `.${path.basename(out)}.tmp-${child.pid}-`;
    const tmp = () => readdirSync(path.dirname(out)).find((n) => n.startsWith(own));
    const filesIn = (dir: string): number => {
      try {
        return readdirSync(dir, { recursive: true }).length;
      } catch {
        return 0;
      }
    };
    let ended = false;
    void done.then(() => (ended = true));
    while (filesIn(path.join(path.dirname(out), tmp() ?? "none")) < 500) {
      if (ended) throw new Error(`the build ended before it wrote 500 files: ${(await done).stderr}`);
      await new Promise((ok) => setTimeout(ok, 2));
    }
    child.kill("SIGINT");
    const r = await done;
    expect(r.status, r.stderr).toBe(130);
    expect(r.stderr).toMatch(/^mesh-api: interrupted, previous output kept \(.*dist is as it was\)$/m);
    expect(r.stderr).not.toMatch(/could not clean up/);
    expect(readdirSync(path.dirname(out))).toEqual(["dist"]);
    expect(treeDigest(out)).toEqual(before);
  }, 60_000);

  it("SIGTERM: with no previous output, nothing is left; exits 143", async () => {
    const out = path.join(tempDir(), "dist");
    const { child, done } = startBuild(medium, out);
    await writing(out, child.pid!, done);
    child.kill("SIGTERM");
    const r = await done;
    expect(r.status, r.stderr).toBe(143);
    expect(r.stderr).toMatch(/^mesh-api: interrupted, nothing written \(.*dist was not made\)$/m);
    expect(readdirSync(path.dirname(out))).toEqual([]);
  }, 60_000);
});

/** Waits until the process has a file under `dir` open: it is reading the dump (Linux's /proc). */
async function reading(pid: number, dir: string, done: Promise<Run>): Promise<void> {
  let ended = false;
  void done.then(() => (ended = true));
  const open = () =>
    readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith(dir + path.sep);
      } catch {
        return false; // closed meanwhile
      }
    });
  while (!open()) {
    if (ended) throw new Error(`the build ended before it read: ${(await done).stderr}`);
    await new Promise((ok) => setTimeout(ok, 2));
  }
}

describe("an interrupt before anything is written", () => {
  it("says so and exits 130; the output is as it was", async () => {
    const out = path.join(tempDir(), "dist");
    await build({ data: small, out });
    const before = treeDigest(out);
    const { child, done } = startBuild(big, out);
    await reading(child.pid!, big, done);
    child.kill("SIGINT");
    const r = await done;
    expect(r.status, r.stderr).toBe(130);
    expect(r.stderr).toBe("mesh-api: interrupted\n");
    expect(readdirSync(path.dirname(out))).toEqual(["dist"]);
    expect(treeDigest(out)).toEqual(before);
  }, 60_000);

  it("leaves a command's own handler alone: the preview closes on SIGTERM and exits 0", async () => {
    const out = path.join(tempDir(), "dist");
    await build({ data: small, out });
    const child = spawn(process.execPath, [...cliArgs(), "preview", "--dir", out, "--port", "0", "-q"], { cwd: ROOT });
    let stderr = "";
    child.stderr.on("data", (c) => (stderr += c));
    const done = new Promise<number | null>((resolve) => child.on("close", (status) => resolve(status)));
    await new Promise<void>((ok) => child.stdout.on("data", (c: Buffer) => c.toString().includes("serving") && ok()));
    child.kill("SIGTERM");
    expect(await done).toBe(0);
    expect(stderr).toBe("");
  }, 60_000);
});

describe("two builds into one folder", () => {
  it("the second is refused with a sentence (exit 2) while the first writes; the first one's output stands", async () => {
    const out = path.join(tempDir(), "dist");
    const first = startBuild(medium, out);
    await writing(out, first.child.pid!, first.done);
    // Held still while the second runs, so that it surely meets the first at work.
    first.child.kill("SIGSTOP");
    let second: ReturnType<typeof cli>;
    try {
      second = cli(["build", "--data", small, "--out", out]);
    } finally {
      first.child.kill("SIGCONT");
    }
    expect(second.status, second.stderr).toBe(2);
    expect(second.stderr).toMatch(
      new RegExp(
        `^mesh-api: refusing to write to ${out}: another mesh-api \\(pid ${first.child.pid}\\) is writing it since \\S+ ` +
          `\\(lock ${path.dirname(out)}/\\.dist\\.lock\\); wait for it to end, or remove .*\\.dist\\.lock if no such process runs\\.\\n$`,
      ),
    );
    const r = await first.done;
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^built /m);
    expect(readdirSync(path.dirname(out))).toEqual(["dist"]);
    const alone = path.join(tempDir(), "dist");
    await build({ data: medium, out: alone });
    expect(treeDigest(out)).toEqual(treeDigest(alone));
  }, 120_000);

  it("a lock left by a process that has ended is taken over, and removed after the build", () => {
    const out = path.join(tempDir(), "dist");
    const dead = spawnSync("true").pid;
    const lock = path.join(path.dirname(out), ".dist.lock");
    writeFileSync(lock, JSON.stringify({ pid: dead, since: "2026-11-22T03:00:00.000Z" }) + "\n");
    const r = cli(["build", "--data", small, "--out", out, "-q"]);
    expect(r.status, r.stderr).toBe(0);
    expect(existsSync(lock)).toBe(false);
    expect(readdirSync(path.dirname(out))).toEqual(["dist"]);
  });
});
