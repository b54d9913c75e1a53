import { createHash } from "node:crypto";
import {
  accessSync,
  constants,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statfsSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import fg from "fast-glob";
import { spawn, spawnSync } from "node:child_process";

/** Every file under `dir` (dot files included) with the SHA-256 of its bytes, sorted by path. */
export function treeDigest(dir: string): Map<string, string> {
  const files = fg.sync("**/*", { cwd: dir, dot: true, onlyFiles: true }).sort();
  return new Map(
    files.map((f) => [
      f,
      createHash("sha256")
        .update(readFileSync(path.join(dir, f)))
        .digest("hex"),
    ]),
  );
}

/**
 * Waits until the outputs that `build` on the command line replaced in `dir` are removed: it hands
 * each to a detached remover (io/write/swap.ts), which may still run when the command has ended. For tests
 * that compare a whole folder holding an output before and after a command.
 */
export function removersDone(dir: string, timeoutMs = 60_000): void {
  const replaced = () => readdirSync(dir).filter((n) => /^\..+\.(?:old|trash)-\d+-\d+$/.test(n));
  const deadline = Date.now() + timeoutMs;
  while (replaced().length > 0) {
    if (Date.now() > deadline) throw new Error(`still being removed in ${dir}: ${replaced().join(", ")}`);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
  }
}

const made: string[] = [];

/**
 * Removes the folders made by tempDir so far. Run after each test file (test/support/setup.ts): vitest
 * ends its workers without an "exit" event, so a process hook alone left every folder behind.
 */
export function removeTempDirs(): void {
  // A detached remover of a test's build (io/write/swap.ts) may still be emptying a folder inside: retried.
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
}
process.once("exit", removeTempDirs);

/**
 * Where the temporary folders go: a RAM file system (tmpfs at /dev/shm) with at least 4 GiB free when
 * there is one, else the system's temporary folder; TMPDIR, when set, decides. The suite writes and
 * removes some 100,000 files, and on a disk each removal of a file already flushed costs 1-3 ms (two
 * minutes of a run on a busy 2-core machine); on tmpfs writing and removing cost next to nothing.
 */
export const TEMP_ROOT = ((): string => {
  if (process.env.TMPDIR) return tmpdir();
  try {
    const fs = statfsSync("/dev/shm");
    if (fs.type === 0x01021994 && fs.bavail * fs.bsize >= 4 * 2 ** 30) {
      accessSync("/dev/shm", constants.W_OK);
      return "/dev/shm";
    }
  } catch {
    // no /dev/shm, or not writable
  }
  return tmpdir();
})();

/** The prefixes of the suite's temporary folders under TEMP_ROOT (sweepLeftovers removes only these). */
const TEMP_PREFIXES = ["mesh-api-test-", "mesh-fuzz-", "mesh-shared-"] as const;
export type TempPrefix = (typeof TEMP_PREFIXES)[number];

/**
 * A new folder under TEMP_ROOT named by its prefix, the pid of the process that made it and six
 * random characters: the pid tells a later run whether its maker still runs (sweepLeftovers).
 */
export function markedTempDir(prefix: TempPrefix, root = TEMP_ROOT): string {
  return mkdtempSync(path.join(root, `${prefix}${process.pid}-`));
}

/** A temporary folder of the test file, removed after it (setup.ts). */
export function tempDir(prefix: TempPrefix = "mesh-api-test-"): string {
  const dir = markedTempDir(prefix);
  made.push(dir);
  return dir;
}

const MARKED = new RegExp(`^(?:${TEMP_PREFIXES.join("|")})(\\d+)-[A-Za-z0-9]{6}$`);

/**
 * Removes the suite's temporary folders whose maker no longer runs: a run stopped by Ctrl-C or a
 * killed worker never reaches its removal, and on /dev/shm what it left holds memory. Only folders
 * named by markedTempDir, of this user, whose pid is gone; a folder of a run going on beside this one
 * is kept. Returns the names removed.
 */
export async function sweepLeftovers(root = TEMP_ROOT): Promise<string[]> {
  // Imported here, not at the top: setup.ts loads this file before each test file, and a module of
  // src/ loaded then would escape that file's vi.mock (shared.ts).
  const { alive } = await import("../../src/io/write/lock.ts");
  const removed: string[] = [];
  const uid = process.getuid?.();
  for (const name of readdirSync(root)) {
    const pid = MARKED.exec(name)?.[1];
    if (pid === undefined || alive(Number(pid))) continue;
    const dir = path.join(root, name);
    const st = lstatSync(dir, { throwIfNoEntry: false });
    if (!st?.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
    rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
    removed.push(name);
  }
  return removed.sort();
}

export const ROOT = new URL("../../", import.meta.url).pathname;

/**
 * The TypeScript compiler the checks and the package's compile run (`tsc`): TypeScript 7, the
 * compiler in Go (`typescript-go` in package.json, scripts/lint.mjs), a third of TypeScript 5's CPU.
 * `typescript` stays 5 for its JavaScript API (transpileModule here, the checks of architecture.test.ts
 * and openapi-lint.test.ts, openapi-typescript).
 */
export const TSC = path.join(path.dirname(createRequire(import.meta.url).resolve("typescript-go/package.json")), "bin", "tsc");

/**
 * src/ and scripts/ as JavaScript (and assets/ as it is): every .ts file through TypeScript's transpileModule (the same code,
 * the types taken out, as tsx does on each run), written once per content into
 * node_modules/.cache/mesh-api-test-js/<digest of the sources, package.json and compiler>/, beside a
 * copy of package.json (main.ts reads its version two folders up), so packages resolve from the
 * project's node_modules. A child process then starts like the installed command does, without the
 * TypeScript loader's start-up (about a second per process on a busy 2-core machine; the suite starts
 * over a hundred). Any edit under src/ or scripts/ gives a new digest, so a run never sees stale code.
 *
 * The commands the tests start (ENTRIES) are also bundled, each into one file beside its module
 * (`main.bundle.cjs`, started through `main.run.cjs`: LOADER): the same transpiled modules and
 * packages, joined by esbuild. Each module's
 * `import.meta.url` is written out as its own file's URL in the tree (what it is there anyway), so
 * that in the bundle too it finds what is beside it (assets, packages through createRequire); an
 * entry must therefore not compare its import.meta.url with process.argv[1] to learn that it is the
 * main module (process.argv[1] is the loader). Loading one file instead of some three hundred modules
 * halves a command's start (0.38 to 0.19 s of CPU, measured; the suite starts about 70 since most command lines run in
 * the test's process, `command` below); the installed package, compiled
 * module by module, is package.test's.
 */
function compiledTree(): string {
  const sources = ["src", "scripts"].flatMap((top) =>
    fg.sync("**/*.ts", { cwd: path.join(ROOT, top), ignore: ["**/*.d.ts"] }).map((f) => `${top}/${f}`),
  );
  sources.sort();
  // Files the code reads beside itself (the map's script), copied as they are.
  const assets = fg.sync("assets/**/*", { cwd: ROOT }).sort();
  const require = createRequire(import.meta.url);
  const tsVersion = (JSON.parse(readFileSync(require.resolve("typescript/package.json"), "utf8")) as { version: string }).version;
  const esbuildVersion = (JSON.parse(readFileSync(require.resolve("esbuild/package.json"), "utf8")) as { version: string }).version;
  // the bundle's options and its loader are part of the tree
  const hash = createHash("sha256").update(
    `typescript ${tsVersion}\nesbuild ${esbuildVersion}\n${TRANSPILE_OPTIONS}\n${bundle}\n${LOADER}\n`,
  );
  for (const f of ["package.json", ...sources, ...assets])
    hash
      .update(`${f}\n`)
      .update(readFileSync(path.join(ROOT, f)))
      .update("\n");
  const cache = path.join(ROOT, "node_modules/.cache/mesh-api-test-js");
  const dir = path.join(cache, hash.digest("hex").slice(0, 16));
  if (existsSync(path.join(dir, "package.json"))) {
    utimesSync(dir, new Date(), new Date()); // in use: not pruned below by a run of other sources
    return dir;
  }

  const ts = require("typescript") as typeof import("typescript");
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  for (const f of sources) {
    const { outputText } = ts.transpileModule(readFileSync(path.join(ROOT, f), "utf8"), {
      fileName: f,
      compilerOptions: { ...JSON.parse(TRANSPILE_OPTIONS), target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
    });
    mkdirSync(path.dirname(path.join(tmp, f)), { recursive: true });
    // what import.meta.url is in this module once the tree is in place, written out: the same in a bundle of it
    const url = JSON.stringify(pathToFileURL(path.join(dir, f.replace(/\.ts$/, ".js"))).href);
    writeFileSync(path.join(tmp, f.replace(/\.ts$/, ".js")), outputText.replaceAll("import.meta.url", url));
  }
  for (const f of assets) {
    mkdirSync(path.dirname(path.join(tmp, f)), { recursive: true });
    writeFileSync(path.join(tmp, f), readFileSync(path.join(ROOT, f)));
  }
  for (const entry of ENTRIES) bundle(require, path.join(tmp, entry.replace(/\.ts$/, ".js")));
  writeFileSync(path.join(tmp, "package.json"), readFileSync(path.join(ROOT, "package.json"))); // last: it marks a complete tree
  try {
    renameSync(tmp, dir);
  } catch {
    rmSync(tmp, { recursive: true, force: true }); // another test process made the same tree first
  }
  for (const entry of ENTRIES) warm(path.join(dir, entry.replace(/\.ts$/, ".js")));
  // Trees of other sources (edited since), once unused for a day.
  for (const name of readdirSync(cache))
    if (path.join(cache, name) !== dir && Date.now() - statSync(path.join(cache, name)).mtimeMs > 86_400_000)
      rmSync(path.join(cache, name), { recursive: true, force: true });
  return dir;
}
/** The commands tests start as processes, bundled (compiledTree). */
const ENTRIES = ["src/cli/main.ts", "scripts/synth.ts"];
const bundled = (file: string) => file.replace(/\.js$/, ".bundle.cjs");
/** The file a test starts: it runs the bundle beside it with V8's code cache (LOADER). */
const loaderOf = (file: string) => file.replace(/\.js$/, ".run.cjs");

/**
 * `entry` and what it imports, packages included, as one CommonJS file beside it, and the loader
 * that runs it (LOADER). CommonJS because only a script, not an ES module, takes V8's code cache on
 * Node.js 20 (vm.Script's cachedData; Node.js 22's module compile cache is not in 20); so the
 * entries have no top-level await. Strict, as the ES modules it is made of are.
 */
function bundle(require: NodeJS.Require, entry: string): void {
  const esbuild = require("esbuild") as typeof import("esbuild");
  esbuild.buildSync({
    entryPoints: [entry],
    // esbuild takes the folder the process was in when esbuild was first loaded, and a command run
    // in the test's process (`host-config netlify-edge` bundles its function) may have loaded it in a
    // temporary folder since removed: then nothing resolves.
    absWorkingDir: ROOT,
    outfile: bundled(entry),
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    logLevel: "error",
    banner: { js: '"use strict";' },
  });
  writeFileSync(loaderOf(entry), LOADER.replaceAll("__BUNDLE__", path.basename(bundled(entry))));
}

/** The code cache made once, by the Node.js running the tests, before any test starts the command. */
function warm(entry: string): void {
  // the name LOADER gives it
  const cache = `${bundled(entry)}.${process.version}-${process.arch}.v8cache`;
  if (existsSync(cache)) return;
  const made = spawnSync(process.execPath, [loaderOf(entry), "--help"], { encoding: "utf8" });
  if (made.status !== 0 || !existsSync(cache))
    throw new Error(`the bundle of ${entry} did not start: ${made.error?.message ?? made.stderr}`);
}

/**
 * Compiles the bundle beside it with the code cache V8 made of it before (one file per Node.js
 * version: node-versions.test starts it with others), or makes that cache if there is none. A cache
 * V8 rejects (other V8 flags) is only not used. The compile of the two-megabyte bundle was about a
 * third of a short command's start; with the cache, a build of data/ takes about 9 % less user CPU.
 */
const LOADER = `"use strict";
// Generated by test/support/tree.ts: runs __BUNDLE__ with V8's code cache.
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");
const Module = require("node:module");
const file = path.join(__dirname, "__BUNDLE__");
const cacheFile = \`\${file}.\${process.version}-\${process.arch}.v8cache\`;
let cachedData;
try {
  cachedData = fs.readFileSync(cacheFile);
} catch {}
// the first line is the entry's #! (the line kept, so that a stack names the bundle's lines)
const script = new vm.Script(Module.wrap(fs.readFileSync(file, "utf8").replace(/^#!.*/, "")), { filename: file, cachedData });
if (cachedData === undefined) {
  const tmp = \`\${cacheFile}.\${process.pid}.tmp\`;
  try {
    fs.writeFileSync(tmp, script.createCachedData());
    fs.renameSync(tmp, cacheFile);
  } catch {}
}
const main = new Module(file, null);
main.filename = file;
main.paths = Module._nodeModulePaths(__dirname);
script.runInThisContext()(main.exports, Module.createRequire(file), main, file, __dirname);
`;

const TRANSPILE_OPTIONS = JSON.stringify({ verbatimModuleSyntax: true, rewriteRelativeImportExtensions: true, sourceMap: false });

let compiled: string | undefined;
/** `<the JavaScript tree>/<file>` for a file under src/ or scripts/, `.ts` named as `.js`; the tree is made on first use. */
export function compiledFile(file: string): string {
  compiled ??= compiledTree();
  return path.join(compiled, file.replace(/\.ts$/, ".js"));
}

/** The arguments of node that run the CLI from the current sources, in one process (a kill reaches the command itself). */
export function cliArgs(): string[] {
  return [commandFile("src/cli/main.ts")];
}

/** A command of ENTRIES as the one file a test starts (compiledTree). */
export function commandFile(file: string): string {
  if (!ENTRIES.includes(file)) throw new Error(`${file} is not bundled: add it to ENTRIES`);
  return loaderOf(compiledFile(file));
}

/** Runs the CLI as a user does, returning exit code and output. */
export function cli(args: string[], cwd = ROOT, env: Record<string, string> = {}): { status: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [...cliArgs(), ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, ...env },
  });
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** What a command line printed and how it ended. */
export interface Ran {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

let running: Promise<unknown> = Promise.resolve();

/**
 * Runs a command line in this process: the same program main.ts runs (src/cli/program.ts
 * runCommandLine: commander's parse, the command, exit.ts's words and code), with the folder, the
 * environment and the output streams of a child process for its time, so about a tenth of the CPU
 * of a child's start and a cold compile (a host-config of data/: 0.1 s against 0.68 s). What only a
 * process shows stays with `cli`: signals and kills, the heap setting, a full disk, the bundle's
 * start (cli.test, crash, interrupt, cycle-faults, machine, node-versions). One
 * command at a time per test process: the folder, the environment and the streams are the
 * process's. Its stdout and stderr are not terminals, as a child's pipes are not.
 */
export function command(
  args: string[],
  cwd = ROOT,
  env: Record<string, string> = {},
  /** the command line's runner: runCommandLine, or another (scripts/synth-command.ts, or a program with a command more) */
  run?: (args: string[]) => Promise<number>,
): Promise<Ran> {
  const ran = running.then(() => commandNow(args, cwd, env, run));
  running = ran.catch(() => undefined);
  return ran;
}

async function commandNow(
  args: string[],
  cwd: string,
  env: Record<string, string>,
  run: ((args: string[]) => Promise<number>) | undefined,
): Promise<Ran> {
  // Imported here: setup.ts loads this file before each test file, and src/ loaded then would escape a file's vi.mock.
  const { runCommandLine } = await import("../../src/cli/program.ts");
  const before = { ...process.env };
  const folder = process.cwd();
  const output = { stdout: "", stderr: "" };
  const streams = (["stdout", "stderr"] as const).map((name) => {
    const stream = process[name];
    const write = Object.getOwnPropertyDescriptor(stream, "write");
    const tty = Object.getOwnPropertyDescriptor(stream, "isTTY");
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      output[name] += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
      const done = rest.find((r) => typeof r === "function") as (() => void) | undefined;
      if (done) queueMicrotask(done);
      return true;
    }) as typeof stream.write;
    Object.defineProperty(stream, "isTTY", { value: undefined, configurable: true, writable: true });
    // each put back as it was: the stream's own property, or none (the prototype's)
    return () => {
      for (const [key, own] of [
        ["write", write],
        ["isTTY", tty],
      ] as const)
        if (own) Object.defineProperty(stream, key, own);
        else delete (stream as unknown as Record<string, unknown>)[key];
    };
  });
  try {
    Object.assign(process.env, env);
    if (cwd !== folder) process.chdir(cwd);
    const status = await (run ?? runCommandLine)(args);
    return { status, ...output };
  } finally {
    if (process.cwd() !== folder) process.chdir(folder);
    for (const key of Object.keys(process.env)) if (!(key in before)) delete process.env[key];
    Object.assign(process.env, before);
    for (const restore of streams) restore();
  }
}

/** The CLI without blocking this process, for commands that talk to a server running in the test. */
export function cliAsync(args: string[], cwd = ROOT): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...cliArgs(), ...args], { cwd });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("close", (status) => resolve({ status: status ?? -1, stdout, stderr }));
  });
}
