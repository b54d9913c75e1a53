import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import fg from "fast-glob";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { snapshot, validate } from "../src/index.ts";
import { fetchDump } from "../src/io/read/fetch.ts";
import { MARKER, markerBody } from "../src/io/write/ownership.ts";
import { sharedBuild } from "./support/shared.ts";
import { cliArgs, command, ROOT, tempDir, treeDigest } from "./support/tree.ts";

/**
 * fetch-dump: refuses folders that are not its own before downloading anything, verifies what
 * `snapshot` publishes (SHA256SUMS, or `<url>.sha256` first), and swaps the unpacked dump in only when
 * everything passed, so a failure or a kill leaves the previous --out as it was.
 *
 * The command runs where what is tested is the command (exit codes, what it prints, folders it
 * refuses, a kill, relative paths); checksum files and archives that are refused are the library's
 * messages, run in this process (`library` below; the command prints the message after "mesh-api: "
 * and exits 1, shown by the tampered archive and the missing one).
 */

const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");

type Route = Buffer | ((res: ServerResponse) => void);

/** A local file server on port 0 that records every request path. */
async function serve(routes: Record<string, Route>) {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(req.url ?? "");
    const route = routes[req.url ?? ""];
    if (typeof route === "function") return route(res);
    res.statusCode = route ? 200 : 404;
    res.end(route ?? "");
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** Every file of a folder as routes under `prefix`. */
function routesOf(dir: string, prefix = ""): Record<string, Buffer> {
  return Object.fromEntries(fg.sync("**/*", { cwd: dir, dot: true }).map((f) => [`${prefix}/${f}`, readFileSync(path.join(dir, f))]));
}

interface Run {
  readonly status: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The CLI as one process, so a kill reaches the command itself; any cwd and environment. */
function start(args: string[], cwd: string, env: Record<string, string> = {}): { child: ChildProcess; done: Promise<Run> } {
  const child = spawn(process.execPath, [...cliArgs(), ...args], {
    cwd,
    env: { ...process.env, ...env },
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (c) => (stdout += c));
  child.stderr!.on("data", (c) => (stderr += c));
  const done = new Promise<Run>((resolve) => child.on("close", (status, signal) => resolve({ status, signal, stdout, stderr })));
  return { child, done };
}

/** The command in this process (support/tree.ts command); `start` where a kill must reach it. */
const run = async (args: string[], cwd = tempDir(), env: Record<string, string> = {}): Promise<Run> => ({
  ...(await command(args, cwd, env)),
  signal: null,
});

/** fetchDump in this process, as the command runs it: the run's outcome in the command's terms (exit 1 for an error). */
async function library(url: string, out: string, allowUnverified = false): Promise<{ status: number; stderr: string }> {
  const lines: string[] = [];
  const say = (line: string) => lines.push(line);
  return fetchDump(url, out, { log: say, warn: (line) => say(`warning: ${line}`), allowUnverified }).then(
    () => ({ status: 0, stderr: lines.map((l) => `${l}\n`).join("") }),
    (err: unknown) => ({ status: 1, stderr: [...lines, `mesh-api: ${(err as Error).message}`].map((l) => `${l}\n`).join("") }),
  );
}

/** A folder's files with their digests, plus its folders (empty ones included). */
function state(dir: string): { files: Map<string, string>; dirs: string[] } {
  return { files: treeDigest(dir), dirs: fg.sync("**", { cwd: dir, dot: true, onlyDirectories: true }).sort() };
}

/** A dump's files without the marker fetch-dump adds, to compare with the dump it came from. */
function dumpDigest(dir: string): Map<string, string> {
  const files = treeDigest(dir);
  files.delete(MARKER);
  return files;
}

/** Nothing the swap or the download left beside `out` (temporary folders, old folders, partial archives). */
const leftovers = (out: string) => readdirSync(path.dirname(out)).filter((n) => n.startsWith(`.${path.basename(out)}.`));

// One real snapshot of the sample dump, as `build` + `snapshot` publish it.
let published: string;
let dumpFile: string;
let dumpBytes: Buffer;
const DATA = path.join(ROOT, "data");

beforeAll(async () => {
  // the run's shared build of data/ (test/support/shared.ts), copied: snapshot writes into it
  const dist = path.join(tempDir(), "dist");
  cpSync((await sharedBuild("data")).out, dist, { recursive: true });
  const { written } = await snapshot({ data: DATA, dist });
  dumpFile = written.files.find((f) => f.kind === "dump")!.file;
  published = path.join(dist, "snapshots");
  dumpBytes = readFileSync(path.join(published, dumpFile));
});

describe("fetch-dump refuses folders that are not its own, before downloading", () => {
  let site: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => (site = await serve(routesOf(published))));
  afterAll(() => site.close());

  it("refuses an unmarked non-empty --out with exit 2 and leaves every file as it was", async () => {
    const out = path.join(tempDir(), "fd");
    mkdirSync(path.join(out, "sub"), { recursive: true });
    writeFileSync(path.join(out, "important.txt"), "do not lose me\n");
    writeFileSync(path.join(out, "sub", "notes.md"), "# notes\n");
    const before = state(out);
    const r = await run(["fetch-dump", `${site.url}/${dumpFile}`, "--out", out]);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      `mesh-api: refusing to write to ${out}: it is not empty and was not written by mesh-api (no ${MARKER} file in it); empty it or choose a new folder for --out.\n`,
    );
    expect(r.stdout).toBe("");
    expect(state(out)).toEqual(before);
    expect(leftovers(out)).toEqual([]);
    expect(site.requests).toEqual([]);
  });

  it("refuses the current folder, an ancestor of it, a file and the home folder", async () => {
    const cwd = tempDir();
    mkdirSync(path.join(cwd, "work"));
    writeFileSync(path.join(cwd, "keep.txt"), "mine\n");
    const before = state(cwd);
    const cases: [string[], string, string, Record<string, string>?][] = [
      [["--out", "."], path.join(cwd), "it is the current folder"],
      [["--out", path.resolve(cwd)], cwd, "it is the current folder"],
      [["--out", ".."], path.join(cwd, "work"), "it contains the current folder"],
      [["--out", "keep.txt"], cwd, "it is a file, not a folder"],
      [["--out", cwd], path.join(cwd, "work"), "it is your home folder", { HOME: cwd }],
    ];
    const results = await Promise.all(
      cases.map(([args, at, , env]) => run(["fetch-dump", `${site.url}/${dumpFile}`, ...args, "-q"], at, env)),
    );
    results.forEach((r, i) => {
      const [args, , why] = cases[i];
      expect(r.status, `${args.join(" ")}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`^mesh-api: refusing to write to [^\\n]*: ${why}; [^\\n]*\\.\\n$`));
    });
    expect(state(cwd)).toEqual(before);
    expect(site.requests).toEqual([]);
  });
});

describe("fetch-dump verifies what snapshot publishes", () => {
  it("fetches the dump archive of a snapshot, verified against SHA256SUMS, into a dump at --out that validates", async () => {
    const site = await serve(routesOf(published, "/snapshots"));
    try {
      const out = path.join(tempDir(), "dump");
      const url = `${site.url}/snapshots/${dumpFile}`;
      const r = await run(["fetch-dump", url, "--out", out]);
      expect(r.status, r.stderr).toBe(0);
      // The archive holds the dump in one top folder; --out is the dump itself, not the folder holding it.
      const dir = out;
      expect(r.stdout).toBe(`${dir}\n`);
      expect(r.stderr).toContain(`verified ${url} against ${site.url}/snapshots/SHA256SUMS`);
      expect(r.stderr).not.toMatch(/warning/);
      expect(site.requests).toEqual([`/snapshots/${dumpFile}`, `/snapshots/${dumpFile}.sha256`, "/snapshots/SHA256SUMS"]);
      // The sample dump, byte for byte, and valid; the folder carries the marker for the next run.
      expect(dumpDigest(dir)).toEqual(treeDigest(DATA));
      const result = await validate({ data: dir });
      expect(result.problems.filter((p) => p.severity === "error")).toEqual([]);
      expect(result.model).toBeDefined();
      expect(JSON.parse(readFileSync(path.join(out, MARKER), "utf8"))).toMatchObject({ kind: "dump" });
      expect(leftovers(out)).toEqual([]);
    } finally {
      site.close();
    }
  });

  it("writes the dump at --out, so that build --data with the same folder builds it (relative paths, as an operator types them)", async () => {
    const site = await serve(routesOf(published));
    try {
      const cwd = tempDir();
      const fetched = await run(["fetch-dump", `${site.url}/${dumpFile}`, "--out", "dump", "-q"], cwd);
      expect(fetched).toMatchObject({ status: 0, stdout: "dump\n", stderr: "" });
      const built = await run(["build", "--data", "dump", "--out", "dist", "-q"], cwd);
      expect(built.status, built.stderr).toBe(0);
      expect(existsSync(path.join(cwd, "dist", "api", "v1", "link", "index.json"))).toBe(true);
    } finally {
      site.close();
    }
  });

  it("takes the dump from the archive's top as well as from its single top folder", async () => {
    const top = path.join(tempDir(), "top.tar.gz");
    execFileSync("tar", ["-czf", top, "-C", DATA, "."]);
    const site = await serve({ "/top.tar.gz": readFileSync(top) });
    try {
      const out = path.join(tempDir(), "dump");
      const r = await library(`${site.url}/top.tar.gz`, out, true);
      expect(r.status, r.stderr).toBe(0);
      expect(dumpDigest(out)).toEqual(treeDigest(DATA));
      expect(leftovers(out)).toEqual([]);
    } finally {
      site.close();
    }
  });

  it("refuses a tampered archive with exit 1, naming the URL and both digests; the previous --out stays byte-identical", async () => {
    const tampered = Buffer.from(dumpBytes);
    tampered[Math.floor(tampered.length / 2)] ^= 0x01;
    const good = await serve(routesOf(published));
    const bad = await serve({ ...routesOf(published), [`/${dumpFile}`]: tampered });
    try {
      const out = path.join(tempDir(), "dump");
      expect((await run(["fetch-dump", `${good.url}/${dumpFile}`, "--out", out, "-q"])).status).toBe(0);
      const before = state(out);
      const url = `${bad.url}/${dumpFile}`;
      const r = await run(["fetch-dump", url, "--out", out]);
      expect(r.status).toBe(1);
      expect(r.stdout).toBe("");
      const err = r.stderr.split("\n").filter((l) => l.startsWith("mesh-api:"));
      expect(err).toHaveLength(1);
      expect(err[0]).toContain(url);
      expect(err[0]).toContain(sha256(tampered));
      expect(err[0]).toContain(sha256(dumpBytes));
      expect(err[0]).toContain("does not match");
      expect(r.stderr).not.toMatch(/^\s+at /m);
      expect(state(out)).toEqual(before);
      expect(leftovers(out)).toEqual([]);
    } finally {
      good.close();
      bad.close();
    }
  });

  it("checks <url>.sha256 first: a mismatch there is refused even when SHA256SUMS agrees, and it wins over a wrong SHA256SUMS", async () => {
    const wrong = "0".repeat(64);
    const sums = readFileSync(path.join(published, "SHA256SUMS"));
    const site = await serve({
      [`/a/${dumpFile}`]: dumpBytes,
      [`/a/${dumpFile}.sha256`]: Buffer.from(`${wrong}  ${dumpFile}\n`),
      "/a/SHA256SUMS": sums,
      [`/b/${dumpFile}`]: dumpBytes,
      [`/b/${dumpFile}.sha256`]: Buffer.from(`${sha256(dumpBytes)}\n`), // a bare digest is accepted too
      "/b/SHA256SUMS": Buffer.from(`${wrong}  ${dumpFile}\n`),
    });
    try {
      const out = path.join(tempDir(), "dump");
      const refused = await library(`${site.url}/a/${dumpFile}`, out);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toMatch(
        new RegExp(`^mesh-api: .*${sha256(dumpBytes)} does not match ${site.url}/a/${dumpFile}\\.sha256 \\(${wrong}\\)`, "m"),
      );
      expect(existsSync(out)).toBe(false);
      expect(site.requests).not.toContain("/a/SHA256SUMS");

      const ok = await library(`${site.url}/b/${dumpFile}`, out);
      expect(ok.status, ok.stderr).toBe(0);
      expect(ok.stderr).toContain(`against ${site.url}/b/${dumpFile}.sha256`);
      expect(site.requests).not.toContain("/b/SHA256SUMS");
    } finally {
      site.close();
    }
  });

  it("refuses a SHA256SUMS without a line for the archive, and malformed checksum files", async () => {
    const other = readFileSync(path.join(published, "SHA256SUMS"), "utf8")
      .split("\n")
      .filter((l) => !l.endsWith(dumpFile))
      .join("\n");
    const site = await serve({
      [`/noline/${dumpFile}`]: dumpBytes,
      "/noline/SHA256SUMS": Buffer.from(other),
      [`/junk/${dumpFile}`]: dumpBytes,
      "/junk/SHA256SUMS": Buffer.from(`<html>not found</html>\n`),
      [`/short/${dumpFile}`]: dumpBytes,
      [`/short/${dumpFile}.sha256`]: Buffer.from(`abc123  ${dumpFile}\n`),
      [`/twice/${dumpFile}`]: dumpBytes,
      "/twice/SHA256SUMS": Buffer.from(`${sha256(dumpBytes)}  ${dumpFile}\n${"1".repeat(64)}  ${dumpFile}\n`),
      [`/error/${dumpFile}`]: dumpBytes,
      "/error/SHA256SUMS": (res) => {
        res.statusCode = 500;
        res.end("oops");
      },
    });
    try {
      const expectations: [string, RegExp][] = [
        ["noline", new RegExp(`SHA256SUMS has no line for ${dumpFile.replace(/\./g, "\\.")}`)],
        ["junk", /SHA256SUMS is malformed: line 1/],
        ["short", /\.sha256 is malformed: line 1/],
        ["twice", /SHA256SUMS is malformed: it gives 2 different digests/],
        ["error", /cannot verify the archive: .*HTTP 404 and .*SHA256SUMS answered HTTP 500/],
      ];
      const outs = expectations.map(() => path.join(tempDir(), "dump"));
      const results = await Promise.all(expectations.map(([dir], i) => library(`${site.url}/${dir}/${dumpFile}`, outs[i])));
      expectations.forEach(([dir, message], i) => {
        expect(results[i].status, dir).toBe(1);
        expect(results[i].stderr, dir).toMatch(new RegExp(`^mesh-api: .*${message.source}`, "m"));
        expect(existsSync(outs[i]), dir).toBe(false);
        expect(leftovers(outs[i]), dir).toEqual([]);
      });
    } finally {
      site.close();
    }
  });

  it("refuses an archive published without any checksum (issue 28, item 8); with --allow-unverified unpacks it with a warning (even with -q)", async () => {
    const site = await serve({ [`/${dumpFile}`]: dumpBytes });
    try {
      const out = path.join(tempDir(), "dump");
      const refused = await run(["fetch-dump", `${site.url}/${dumpFile}`, "--out", out, "-q"]);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toBe(
        `mesh-api: ${site.url}/${dumpFile} cannot be verified: neither ${site.url}/${dumpFile}.sha256 nor ${site.url}/SHA256SUMS is published (HTTP 404); publish one of them beside it, or fetch it unverified with --allow-unverified; nothing was unpacked\n`,
      );
      expect(existsSync(out)).toBe(false);
      const r = await run(["fetch-dump", `${site.url}/${dumpFile}`, "--out", out, "-q", "--allow-unverified"]);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toBe(
        `warning: ${site.url}/${dumpFile} was not verified: neither ${site.url}/${dumpFile}.sha256 nor ${site.url}/SHA256SUMS is published (HTTP 404); unpacking it anyway (--allow-unverified)\n`,
      );
      expect(dumpDigest(r.stdout.trim())).toEqual(treeDigest(DATA));
    } finally {
      site.close();
    }
  });

  it("reruns into its own previous output, replacing it", async () => {
    const site = await serve(routesOf(published));
    try {
      const out = path.join(tempDir(), "dump");
      const first = await run(["fetch-dump", `${site.url}/${dumpFile}`, "--out", out, "-q"]);
      expect(first.status, first.stderr).toBe(0);
      writeFileSync(path.join(out, "stale.txt"), "from before\n"); // the folder is replaced, not merged into
      const before = statSync(path.join(out, MARKER)).ino;
      const second = await run(["fetch-dump", `${site.url}/${dumpFile}`, "--out", out, "-q"]);
      expect(second).toMatchObject({ status: 0, stdout: first.stdout, stderr: "" });
      expect(existsSync(path.join(out, "stale.txt"))).toBe(false);
      expect(statSync(path.join(out, MARKER)).ino).not.toBe(before);
      expect(leftovers(out)).toEqual([]);
    } finally {
      site.close();
    }
  });
});

describe("fetch-dump failures leave --out as it was", () => {
  it("an argument that is not an http(s) URL is a usage error (exit 2)", async () => {
    const out = path.join(tempDir(), "dump");
    const r = await run(["fetch-dump", "notaurl", "--out", out]);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      "mesh-api: notaurl has no scheme; fetch-dump needs the archive's address as http(s)://host[:port]/path/file.tar.gz, e.g. https://mesh.example.org/snapshots/mesh-topology-2026-01-01.tar.gz\n",
    );
    expect(existsSync(out)).toBe(false);
  });

  it("a missing archive is exit 1 with the URL and status; nothing else is requested", async () => {
    const site = await serve({});
    try {
      const out = path.join(tempDir(), "dump");
      const r = await run(["fetch-dump", `${site.url}/missing.tar.gz`, "--out", out]);
      expect(r.status).toBe(1);
      expect(r.stderr).toBe(
        // --out did not exist: nothing is said to be "left as it was".
        `mesh-api: ${site.url}/missing.tar.gz: HTTP 404 Not Found; nothing was unpacked\n`,
      );
      expect(site.requests).toEqual(["/missing.tar.gz"]);
      expect(existsSync(out)).toBe(false);
      expect(leftovers(out)).toEqual([]);
    } finally {
      site.close();
    }
  });

  it("a refused connection is named once, without a stack trace", async () => {
    const site = await serve({});
    site.close(); // nothing listens on its port any more
    const r = await run(["fetch-dump", `${site.url}/d.tar.gz`, "--out", path.join(tempDir(), "dump")]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^mesh-api: http:\/\/127\.0\.0\.1:\d+\/d\.tar\.gz: connection refused \(ECONNREFUSED\); nothing was unpacked/);
    expect(r.stderr.match(/ECONNREFUSED/g)).toHaveLength(1);
    expect(r.stderr.split("\n").filter(Boolean)).toHaveLength(1);
  });

  it("an archive that is not a .tar.gz, or holds no dump, is exit 1 and unpacks nothing", async () => {
    const src = tempDir();
    writeFileSync(path.join(src, "readme.txt"), "no dump here\n");
    const nodump = path.join(tempDir(), "nodump.tar.gz");
    execFileSync("tar", ["-czf", nodump, "-C", src, "readme.txt"]);
    const site = await serve({
      "/garbage.tar.gz": Buffer.from("this is not gzip at all"),
      "/nodump.tar.gz": readFileSync(nodump),
      "/truncated.tar.gz": dumpBytes.subarray(0, 2000),
    });
    try {
      const cases = [
        ["garbage.tar.gz", "not a valid gzip file"],
        ["nodump.tar.gz", "the archive holds no dump"],
        ["truncated.tar.gz", "the archive is truncated"],
      ];
      const outs = cases.map(() => path.join(tempDir(), "dump"));
      const results = await Promise.all(cases.map(([file], i) => library(`${site.url}/${file}`, outs[i], true)));
      cases.forEach(([file, message], i) => {
        const r = results[i];
        expect(r.status, file).toBe(1);
        expect(r.stderr, file).toMatch(new RegExp(`^mesh-api: ${site.url}/${file}: ${message}`, "m"));
        expect(r.stderr, file).toContain("was not verified"); // served without checksums
        expect(existsSync(outs[i]), file).toBe(false);
        expect(leftovers(outs[i]), file).toEqual([]);
      });
    } finally {
      site.close();
    }
  });

  /**
   * Fetches the published dump into a fresh --out, then starts a fetch of one whose download sends
   * 1,000 bytes and hangs, and sends `signal` once the partial download (`<tmp>.download`, beside the
   * temporary folder) has bytes.
   */
  async function interruptDownload(signal: NodeJS.Signals) {
    const site = await serve({
      ...routesOf(published),
      "/slow.tar.gz": (res) => {
        res.writeHead(200, { "content-length": String(dumpBytes.length) });
        res.write(dumpBytes.subarray(0, 1000)); // then nothing more: the download hangs
      },
    });
    try {
      const out = path.join(tempDir(), "dump");
      expect((await run(["fetch-dump", `${site.url}/${dumpFile}`, "--out", out, "-q"])).status).toBe(0);
      const before = state(out);
      const { child, done } = start(["fetch-dump", `${site.url}/slow.tar.gz`, "--out", out], path.dirname(out));
      const downloading = () =>
        leftovers(out).some((n) => {
          const s = statSync(path.join(path.dirname(out), n));
          return s.isFile() && n.endsWith(".download") && s.size > 0;
        });
      for (let i = 0; i < 200 && !downloading(); i++) await new Promise((ok) => setTimeout(ok, 50));
      expect(downloading()).toBe(true);
      child.kill(signal);
      return { out, before, site, result: await done };
    } catch (err) {
      site.close();
      throw err;
    }
  }

  it("a kill during the download leaves the previous --out as it was, and the next run cleans up", async () => {
    const { out, before, site, result } = await interruptDownload("SIGKILL");
    try {
      expect(result.signal).toBe("SIGKILL");
      expect(state(out)).toEqual(before);
      const again = await run(["fetch-dump", `${site.url}/${dumpFile}`, "--out", out, "-q"]);
      expect(again.status, again.stderr).toBe(0);
      expect(leftovers(out)).toEqual([]);
      expect(state(out)).toEqual(before);
    } finally {
      site.close();
    }
  });

  it("Ctrl-C during the download removes the partial download and the temporary folder, keeps --out, exits 130", async () => {
    const { out, before, site, result } = await interruptDownload("SIGINT");
    site.close();
    expect(result.status, result.stderr).toBe(130);
    expect(result.stderr).toMatch(/^mesh-api: interrupted, previous output kept \(.*dump is as it was\)$/m);
    expect(leftovers(out)).toEqual([]);
    expect(state(out)).toEqual(before);
  });
});

describe("fetchDump (library)", () => {
  it("downloads, verifies against .sha256 beside it, and unpacks a tar-made archive to the dump folder", async () => {
    const src = tempDir();
    cpSync(DATA, path.join(src, "nightly"), { recursive: true });
    const archive = path.join(tempDir(), "dump.tar.gz");
    execFileSync("tar", ["-czf", archive, "-C", src, "nightly"]);
    const bytes = readFileSync(archive);
    const site = await serve({
      "/d.tar.gz": bytes,
      "/d.tar.gz.sha256": Buffer.from(`${sha256(bytes)}  d.tar.gz\n`),
      "/bad.tar.gz": bytes,
      "/bad.tar.gz.sha256": Buffer.from("0".repeat(64)),
    });
    try {
      const out = path.join(tempDir(), "out");
      const lines: string[] = [];
      const dir = await fetchDump(`${site.url}/d.tar.gz`, out, { log: (l) => lines.push(l) });
      expect(dir).toBe(out);
      expect(readFileSync(path.join(dir, "network.json"), "utf8")).toContain("mesh-topology-dump/1");
      expect(lines).toContain(`verified ${site.url}/d.tar.gz against ${site.url}/d.tar.gz.sha256`);
      await expect(fetchDump(`${site.url}/bad.tar.gz`, path.join(tempDir(), "out"))).rejects.toThrow("does not match");
      await expect(fetchDump(`${site.url}/missing.tar.gz`, path.join(tempDir(), "out"))).rejects.toThrow("HTTP 404");
    } finally {
      site.close();
    }
  });

  it("refuses archives with paths that leave the folder, links, and leaves the previous --out as it was", async () => {
    const src = tempDir();
    const evil = path.join(tempDir(), "evil.tar.gz");
    execFileSync("sh", ["-c", `mkdir -p ${src}/a && echo x > ${src}/x && tar -czf ${evil} -C ${src}/a --absolute-names ../x`]);
    const linked = path.join(tempDir(), "link.tar.gz");
    execFileSync("sh", ["-c", `cd ${src} && mkdir -p l/accesspoints && ln -s /etc/passwd l/network.json && tar -czf ${linked} l`]);
    const site = await serve({ "/e.tar.gz": readFileSync(evil), "/l.tar.gz": readFileSync(linked) });
    try {
      const out = path.join(tempDir(), "out");
      mkdirSync(out);
      writeFileSync(path.join(out, MARKER), markerBody("dump"));
      writeFileSync(path.join(out, "previous.txt"), "kept\n");
      const before = state(out);
      const unverified = { allowUnverified: true };
      await expect(fetchDump(`${site.url}/e.tar.gz`, out, unverified)).rejects.toThrow(
        `${site.url}/e.tar.gz: unsafe path in archive: "../x"`,
      );
      await expect(fetchDump(`${site.url}/l.tar.gz`, out, unverified)).rejects.toThrow("unsupported entry in archive (symlink)");
      expect(state(out)).toEqual(before);
      expect(existsSync(path.join(path.dirname(out), "x"))).toBe(false);
      expect(leftovers(out)).toEqual([]);
    } finally {
      site.close();
    }
  });
});
