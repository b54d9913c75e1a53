import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Command } from "commander";
import { DEFAULTS } from "../src/core/defaults.ts";
import { IMPORT_API_DEFAULTS } from "../src/importers/api.ts";
import { createProgram } from "../src/cli/program.ts";
import { cli, command, ROOT, tempDir } from "./support/tree.ts";

/**
 * What every command shares: the addresses they take and how a run ends. The messages are asked of
 * the in-process command line (support/tree.ts command); that it prints and ends as the command run
 * as a child does is the last describe's.
 */

describe("an address that is no http(s) URL", () => {
  // Each command that takes an address, with its other arguments and what it needs the address for.
  const commands: [string[], string[], string][] = [
    [["check"], ["--dist", "dist"], "check needs the site's address as http(s)://host[:port]"],
    [["import", "api"], ["--out", "dump"], "import api needs the API's address as http(s)://host[:port][/path]"],
    [["fetch-dump"], ["--out", "dump"], "fetch-dump needs the archive's address as http(s)://host[:port]/path/file.tar.gz"],
  ];
  const run = async (args: string[], rest: string[], address: string) => {
    const cwd = tempDir();
    const r = await command([...args, address, ...rest], cwd);
    return { ...r, wrote: existsSync(path.join(cwd, "dump")) };
  };

  it("without a scheme is a usage error (exit 2) in the same words everywhere, with the address it probably meant", async () => {
    const meant: Record<string, [string, string]> = {
      check: ["127.0.0.1:18411", "https://127.0.0.1:18411"],
      "import api": ["127.0.0.1:18411", "https://127.0.0.1:18411/"],
      "fetch-dump": ["127.0.0.1:18411/d.tar.gz", "https://127.0.0.1:18411/d.tar.gz"],
    };
    for (const [command, rest, needs] of commands) {
      const [address, example] = meant[command.join(" ")];
      const r = await run(command, rest, address);
      expect(r.status, command.join(" ")).toBe(2);
      expect(r.stderr).toBe(`mesh-api: ${address} has no scheme; ${needs}, e.g. ${example}\n`);
      expect(r.stdout).toBe("");
      expect(r.wrote).toBe(false);
    }
  });

  it("with another scheme, or a password in it, is a usage error (exit 2) in the same words everywhere", async () => {
    for (const [command, rest, needs] of commands) {
      const ftp = await run(command, rest, "ftp://mesh.example.org/d.tar.gz");
      expect(ftp.status, command.join(" ")).toBe(2);
      expect(ftp.stderr).toMatch(
        new RegExp(
          `^mesh-api: ftp://mesh\\.example\\.org/d\\.tar\\.gz uses ftp:, which ${escape(command.join(" "))} cannot request; ${escape(needs)}, e\\.g\\. https://mesh\\.example\\.org\\n$`,
        ),
      );
      const secret = await run(command, rest, "https://me:secret@mesh.example.org/d.tar.gz");
      expect(secret.status, command.join(" ")).toBe(2);
      expect(secret.stderr).toMatch(/ has user info \(name@ before the host\), which .* does not send; /);
      expect(secret.stderr).not.toContain("secret");
    }
  });
});

describe("help", () => {
  it("help <group> <command> shows that command's help; the group's help lists its commands", async () => {
    const opennet = await command(["help", "import", "opennet"]);
    expect(opennet.status).toBe(0);
    expect(opennet.stdout).toMatch(/^Usage: mesh-api import opennet \[options\]\n/);
    expect(opennet.stdout).toContain("--olsr <file-or-url>");
    expect(opennet.stdout).toContain("--previous <dump-dir>");
    const group = await command(["help", "import"]);
    expect(group.stdout).toMatch(/^Usage: mesh-api import \[options\] \[command\]\n/);
    expect(group.stdout).toMatch(/^ {2}opennet \[options\] /m);
    expect((await command(["help", "fetch-dump"])).stdout).toMatch(/^Usage: mesh-api fetch-dump \[options\] <url>\n/);
    expect((await command(["help"])).stdout).toMatch(/^ {2}help \[command\.\.\.\] /m);
  });

  it("an unknown command is a usage error (exit 2)", async () => {
    const r = await command(["help", "import", "nothing"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe("error: unknown command 'import nothing'\n");
  });
});

describe("a command run without what it needs", () => {
  it("names the missing argument first, then a missing --out (exit 2), before any work", async () => {
    const cwd = tempDir();
    const cases: [string[], string][] = [
      [["fetch-dump"], "error: missing required argument 'url'\n"],
      [["fetch-dump", "http://127.0.0.1:9/d.tar.gz"], "error: required option '--out <dir>' not specified\n"],
      [["import", "api"], "error: missing required argument 'base-url'\n"],
      [["import", "api", "http://127.0.0.1:9/"], "error: required option '--out <dump-dir>' not specified\n"],
    ];
    for (const [args, message] of cases) {
      const r = await command(args, cwd);
      expect(r.status, args.join(" ")).toBe(2);
      expect(r.stderr, args.join(" ")).toBe(message);
    }
  });
});

describe("a command line run in the test's process (support/tree.ts command)", () => {
  it("prints and ends as the same command line run as a child does: output, exit code, folder and environment", async () => {
    const cwd = tempDir();
    const [folder, writes] = [process.cwd(), [process.stdout.write, process.stderr.write]];
    mkdirSync(path.join(cwd, "here"));
    cpSync(path.join(ROOT, "data"), path.join(cwd, "here", "data"), { recursive: true });
    // a dump with a broken record: an input error
    cpSync(path.join(ROOT, "data"), path.join(cwd, "here", "bad"), { recursive: true });
    writeFileSync(path.join(cwd, "here", "bad", "accesspoints", "part-001.ndjson"), '{"main_ip": "10.0.0.1",,}\n');
    // without a run's time in what it prints (validate and build say how long they took)
    const cases: [string[], Record<string, string>][] = [
      [["host-config", "nginx", "--data", "here/data"], {}],
      [["host-config", "caddy", "--data", "here/data", "--write", "here/mesh.caddy"], {}],
      [["frobnicate"], {}],
      [["validate", "--data", "here/bad"], {}],
      [["validate", "--data", "here/no-such-dump", "--debug"], {}],
      [["check", "127.0.0.1:9", "--dist", "here"], { MESH_API_DEBUG: "1" }],
      [["import", "opennet", "--out", "here/dump"], {}],
    ];
    const statuses = new Set<number>();
    for (const [args, env] of cases) {
      const child = cli(args, cwd, env);
      if (args.includes("--write")) rmSync(path.join(cwd, "here", "mesh.caddy"));
      const here = await command(args, cwd, env);
      statuses.add(here.status);
      // a stack names the bundle's lines in the child and the sources' here
      const frames = (text: string) => text.replace(/^ {4}at .*\n/gm, "");
      expect({ ...here, stderr: frames(here.stderr) }, args.join(" ")).toEqual({
        status: child.status,
        stdout: child.stdout,
        stderr: frames(child.stderr),
      });
    }
    // what each wrote is where the child wrote it, and nothing else is left in the test's process
    expect(readFileSync(path.join(cwd, "here", "mesh.caddy"), "utf8")).toMatch(/^# Generated by `mesh-api host-config caddy`/);
    expect(process.cwd()).toBe(folder);
    expect(process.env.MESH_API_DEBUG).toBeUndefined();
    expect([process.stdout.write, process.stderr.write]).toEqual(writes);
    // the statuses cover success, usage and input errors
    expect([...statuses].sort()).toEqual([0, 1, 2]);
  });
});

describe("the options' defaults", () => {
  /** The default of `option` of the command `names` (["import", "api"]). */
  const defaultOf = (names: string[], option: string) => {
    const command = names.reduce<Command>((c, name) => c.commands.find((sub) => sub.name() === name)!, createProgram());
    return command.options.find((o) => o.long === option)!.defaultValue as unknown;
  };

  it("are the library's, stated once (core/defaults.ts, IMPORT_API_DEFAULTS)", () => {
    expect(defaultOf(["build"], "--keep")).toBe(DEFAULTS.keep);
    expect(defaultOf(["snapshot"], "--keep")).toBe(DEFAULTS.keep);
    expect(defaultOf(["check"], "--sample")).toBe(DEFAULTS.sample);
    expect(defaultOf(["preview"], "--port")).toBe(DEFAULTS.port);
    expect(defaultOf(["preview"], "--host")).toBe(DEFAULTS.host);
    expect(defaultOf(["import", "api"], "--timeout")).toBe(IMPORT_API_DEFAULTS.timeoutMs);
    expect(defaultOf(["import", "api"], "--retries")).toBe(IMPORT_API_DEFAULTS.retries);
    expect(defaultOf(["import", "api"], "--retry-delay")).toBe(IMPORT_API_DEFAULTS.retryDelayMs);
    expect(defaultOf(["import", "api"], "--max-bytes")).toBe(IMPORT_API_DEFAULTS.maxBytes);
  });
});

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
