import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ended, EXIT, stopped } from "../src/cli/exit.ts";
import { VERSION } from "../src/cli/package-version.ts";
import { InputError } from "../src/core/problems.ts";
import { runCommandLine } from "../src/cli/program.ts";
import { bugProgram } from "./fixtures/bug-cli.ts";
import { cli, command, ROOT, tempDir, treeDigest } from "./support/tree.ts";

/**
 * Issue 41, item 2: when the machine stops a command (a full disk, missing rights, a read-only file
 * system), it says so in one sentence with the path and what was left as it was, and exits 4, not 1
 * ("invalid input"). A real full disk: a small tmpfs, which only root may mount (CI runs as root).
 */

/** The real program with one more command that fails as a bug would (test/fixtures/bug-cli.ts). */

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

  it("the system's errors about what was given stay failures of input", () => {
    expect(end(caught(() => stopped(errno("ENOENT", { path: "/x" }), {}, "nothing written", "dist")))).toEqual({
      code: EXIT.invalid,
      text: "mesh-api: ENOENT: system words; nothing written\n",
    });
    // fetch's TypeError over a refused connection is the address's fault, not a bug
    expect(end(new TypeError("fetch failed", { cause: errno("ECONNREFUSED") })).code).toBe(EXIT.invalid);
    expect(end(new InputError("a bad snapshot index")).code).toBe(EXIT.invalid);
    expect(end(errno("EAI_AGAIN", { syscall: "getaddrinfo" })).code).toBe(EXIT.invalid);
    // Node's own code for a wrong call is a bug's, not the system's
    expect(end(Object.assign(new TypeError("The argument must be of type string"), { code: "ERR_INVALID_ARG_TYPE" })).code).toBe(EXIT.bug);
  });
});

describe("a bug of mesh-api (issue 43)", () => {
  const bug = () => new TypeError("Cannot read properties of undefined (reading 'main_ip')", { cause: new RangeError("deeper") });

  it("says it is one, how to report it, and exits 70; the stack only on request", () => {
    let text = "";
    const code = ended(
      caught(() => stopped(bug(), {}, "dist left unchanged", "dist")),
      (t) => void (text += t),
      false,
    );
    expect(code).toBe(EXIT.bug);
    expect(code).toBe(70);
    expect(text).toBe(
      "mesh-api: internal error: Cannot read properties of undefined (reading 'main_ip')\n" +
        `This is a bug of mesh-api ${VERSION}, not a problem of what it was given (dist left unchanged). ` +
        "Please report it with the command you ran and what the same command prints with --debug (or MESH_API_DEBUG=1).\n",
    );
    expect(text).not.toContain("    at ");
  });

  it("with debug, the stack and every cause", () => {
    let text = "";
    expect(ended(bug(), (t) => void (text += t), true)).toBe(70);
    expect(text).toMatch(/^TypeError: Cannot read properties of undefined \(reading 'main_ip'\)\n {4}at /m);
    expect(text).toMatch(/^caused by: RangeError: deeper\n {4}at /m);
    // an input error too shows its causes on request, and keeps its code
    text = "";
    expect(ended(new InputError("the source failed", { cause: bug() }), (t) => void (text += t), true)).toBe(EXIT.invalid);
    expect(text).toMatch(/^mesh-api: the source failed\n/);
    expect(text).toMatch(/^caused by: TypeError: Cannot read properties/m);
  });

  it("the command line: exit 70, --debug after the command's name or MESH_API_DEBUG=1 prints the stack", async () => {
    const run = (args: string[], env: Record<string, string> = {}) => command(args, ROOT, env, (a) => runCommandLine(a, bugProgram()));
    const plain = await run(["explode"]);
    expect(plain.status).toBe(70);
    expect(plain.stderr).toMatch(/^mesh-api: internal error: exploded on purpose\nThis is a bug of mesh-api /);
    expect(plain.stderr).not.toContain("    at ");
    for (const r of [
      await run(["explode", "--debug"]),
      await run(["--debug", "explode"]),
      await run(["explode"], { MESH_API_DEBUG: "1" }),
    ]) {
      expect(r.status).toBe(70);
      expect(r.stderr).toMatch(/^TypeError: exploded on purpose\n {4}at .*bug-cli\.ts/m);
      expect(r.stderr).toContain("caused by: Error: the cause");
    }
    // every real command takes --debug after its name; an input error keeps exit 1 with it
    const missing = cli(["validate", "--data", path.join(tempDir(), "no-such-dump"), "--debug"]);
    expect(missing.status).not.toBe(70);
    expect(missing.stderr).not.toContain("internal error");
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
