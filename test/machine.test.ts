import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ended, EXIT, stopped } from "../src/cli/exit.ts";
import { cli, tempDir, treeDigest } from "./support/tree.ts";

/**
 * Issue 41, item 2: when the machine stops a command (a full disk, missing rights, a read-only file
 * system), it says so in one sentence with the path and what was left as it was, and exits 4, not 1
 * ("invalid input"). A real full disk: a small tmpfs, which only root may mount (CI runs as root).
 */

const errno = (code: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(`${code}: system words`), { code, errno: -1, syscall: "write", ...extra });

function end(err: unknown): { code: number; text: string } {
  let text = "";
  const code = ended(err, (t) => void (text += t));
  return { code, text };
}

const caught = (f: () => never) => {
  try {
    f();
  } catch (err) {
    return err;
  }
};

describe("the machine's errors", () => {
  it("a full disk while writing an open file names the folder being written and what was kept, exit 4", () => {
    const r = end(caught(() => stopped(errno("ENOSPC"), {}, "dist left unchanged", "dist")));
    expect(r).toEqual({ code: EXIT.machine, text: "mesh-api: cannot write dist: the disk is full (write), ENOSPC; dist left unchanged\n" });
  });

  it("missing rights and a read-only file system name the system's path", () => {
    const lock = "/srv/state/.state.lock";
    expect(end(caught(() => stopped(errno("EACCES", { path: lock, syscall: "open" }), {}, "nothing changed", "state")))).toEqual({
      code: 4,
      text: `mesh-api: cannot write ${lock}: permission denied (open), EACCES; nothing changed\n`,
    });
    expect(end(errno("EROFS", { path: "/mnt/ro/dist", syscall: "mkdir" })).text).toBe(
      "mesh-api: cannot write /mnt/ro/dist: the file system is read-only (mkdir), EROFS\n",
    );
  });

  it("other errors keep their codes", () => {
    expect(end(caught(() => stopped(new Error("broken"), {}, "nothing written", "dist")))).toEqual({
      code: EXIT.invalid,
      text: "mesh-api: broken\n",
    });
    expect(end(errno("ENOENT", { path: "/x" })).code).toBe(EXIT.invalid);
  });
});

const root = process.getuid?.() === 0;
const mounts: string[] = [];

afterAll(() => {
  for (const m of mounts) spawnSync("umount", ["-l", m]);
});

// Mounting needs root: this machine and CI run the suite as root (scripts/test-deps.mjs installs as root too).
describe.skipIf(!root)("build on a full disk", () => {
  it("stops with exit 4, names the output and leaves the previous build byte for byte, with no temporary folder", () => {
    const disk = path.join(tempDir(), "disk");
    mkdirSync(disk);
    // room for one build of data/ (6.2 MB on tmpfs) and a part of a second
    const mount = spawnSync("mount", ["-t", "tmpfs", "-o", "size=9m", "tmpfs", disk], { encoding: "utf8" });
    expect(mount.status, mount.stderr).toBe(0);
    mounts.push(disk);
    const out = path.join(disk, "dist");
    expect(cli(["build", "--out", out, "--quiet"]).status).toBe(0);
    const before = treeDigest(out);
    const r = cli(["build", "--out", out, "--quiet"]);
    expect(r.stderr).toMatch(new RegExp(`^mesh-api: cannot write .*: the disk is full \\(\\w+\\), ENOSPC; ${out} left unchanged\\n$`));
    expect(r.status).toBe(4);
    expect(treeDigest(out)).toEqual(before);
    expect(readdirSync(disk).sort()).toEqual(["dist"]);
  });
});
