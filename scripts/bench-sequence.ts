import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Command } from "commander";
import { rawSources } from "../src/gen/raw.ts";
import { synthesize } from "../src/gen/synth.ts";
import { measuredScript, type MeasuredScript } from "./bench-compiled.ts";
import { CYCLE_SETTINGS } from "./bench-settings.ts";

/**
 * The cycle row's runs by hand, in an order given, each with what the disk did meanwhile
 * (/proc/diskstats of the work folder's device): to find which run reads what, where the bench
 * only keeps its ratios (docs/performance.md, 2026-12-01). Not part of `npm run bench`.
 *
 *   node --import tsx scripts/bench-sequence.ts --work /var/tmp/seq c1,f1,c2,f2,c3,f3,c4,f4,d5
 *
 * A first cycle (unless the state is there), then each step: `cN` a cycle of the network's step N
 * on day 20, `dN` the same on day 21 (`cN.D`, `dN.D`: on day D of November 2026), `fN` a fresh build of the state's dump into `fresh-N`; a step
 * with a `p` in front (`pd5`) runs under `perf record` of the read requests to the block layer with
 * their stacks (into the work folder). Nothing is removed: the trees stay for a look.
 */
const program = new Command()
  .argument("<steps>", "comma-separated steps: cN, dN (cN.D, dN.D on day D), fN, each optionally prefixed by p")
  .requiredOption("--work <dir>", "a folder of its own (40,000 access points take ~10 GB and 1.2 M inodes a tree)")
  .option("--aps <n>", "access points", Number, 40000)
  .parse();
const [steps] = program.args;
const { work, aps } = program.opts<{ work: string; aps: number }>();
const root = new URL("../", import.meta.url).pathname;
// every step read before any run: a mistyped one stops nothing halfway
const plan = steps.split(",").map((token) => {
  const m = /^(p?)([cdf])(\d+)(?:\.(\d+))?$/.exec(token);
  if (!m) throw new Error(`a step is cN, dN or fN (cN.D, dN.D: on day D of November), optionally prefixed by p: ${token}`);
  const kind = m[2];
  return { token, perf: m[1] === "p", kind, n: Number(m[3]), day: m[4] !== undefined ? Number(m[4]) : kind === "c" ? 20 : 21 };
});

mkdirSync(work, { recursive: true });
const network = synthesize({ aps, seed: 1 });
const source = (kind: "olsr" | "wiki", step: number) => path.join(work, `${kind}-${step}.${kind === "olsr" ? "txt" : "html"}`);
const state = path.join(work, "state");
const at = (step: number, day: number) => new Date(Date.UTC(2026, 10, day, 10, 6 * step)).toISOString();

/** The device's counters: reads completed, sectors read, ms spent reading, sectors written. */
function disk(): { reads: number; readSectors: number; readMs: number; writeSectors: number } {
  const dev = statSync(work).dev;
  const [major, minor] = [Math.floor(dev / 256) & 0xfff, (dev & 0xff) | ((dev >> 12) & 0xfff00)];
  const line = readFileSync("/proc/diskstats", "utf8")
    .split("\n")
    .map((l) => l.trim().split(/\s+/))
    .find((f) => Number(f[0]) === major && Number(f[1]) === minor);
  if (!line) throw new Error(`no /proc/diskstats line for ${work} (device ${major}:${minor})`);
  return { reads: Number(line[3]), readSectors: Number(line[5]), readMs: Number(line[6]), writeSectors: Number(line[9]) };
}

function run(name: string, script: MeasuredScript, args: string[], perf: boolean): void {
  spawnSync("sync");
  const before = disk();
  const command = [process.execPath, measuredScript(root, script), ...args];
  const traced = perf
    ? ["perf", "record", "-o", path.join(work, `perf-${name}.data`), "-e", "block:block_bio_queue", "--filter", 'rwbs ~ "R*"', "-g", "--"]
    : [];
  const all = [...traced, ...command];
  const r = spawnSync(all[0], all.slice(1), { cwd: root, encoding: "utf8", maxBuffer: 1 << 20 });
  if (r.status !== 0) throw new Error(`${name} failed: ${r.stderr}`);
  const after = disk();
  const result = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as Record<string, unknown>;
  const mib = (sectors: number) => Math.round((sectors * 512) / 2 ** 20);
  const device = {
    readRequests: after.reads - before.reads,
    readMiB: mib(after.readSectors - before.readSectors),
    readMs: after.readMs - before.readMs,
    writtenMiB: mib(after.writeSectors - before.writeSectors),
  };
  process.stdout.write(`${JSON.stringify({ name, ...result, line: undefined, device })}\n`);
}

const cycle = (name: string, step: number, day: number, perf: boolean) => {
  const raw = rawSources(network, step, 1);
  for (const kind of ["olsr", "wiki"] as const) writeFileSync(source(kind, step), raw[kind]);
  run(name, "bench-cycle-run", [state, path.join(work, "www"), source("olsr", step), source("wiki", step), at(step, day)], perf);
};

measuredScript(root, "bench-cycle-run"); // compiled before the first measured run
if (!existsSync(state)) cycle("first", 0, 20, false);
for (const { token, perf, kind, n, day } of plan) {
  if (kind === "f")
    run(token, "bench-build", [path.join(state, "dump"), path.join(work, `fresh-${n}`), "timed", JSON.stringify(CYCLE_SETTINGS)], perf);
  else cycle(token, n, day, perf);
}
