import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { rawSources } from "../src/gen/raw.ts";
import { synthesize } from "../src/gen/synth.ts";
import { measuredScript } from "./bench-compiled.ts";
import { removeTree, settle } from "./bench-disk.ts";

/**
 * What the history of issue 42 costs a cycle, and that it stays bounded.
 *
 * - cost: recycled cycles of one network run twice by the same commit (HEAD unless told), each
 *   unpacked with `git archive` into the scratch folder (edits of the working tree during the hour it
 *   takes change nothing), this checkout's node_modules linked in: once as it is, once with
 *   bench/without-history.patch applied (WITHOUT), which leaves out what issue 42 added to a cycle (no
 *   state compared, no events or counts recorded, no changes, feeds, status page, topology by day or
 *   metrics file written) and nothing else, so the difference is the history's and not that of every
 *   other change since it landed. Each side cycles into a state of its own, in ABBA order so that a
 *   slow spell of the disk does not favour one. The headline is the median of the per-step ratios
 *   (time) and the ratio of the highest peaks (memory), over the runs after the second, the first that
 *   recycle.
 * - window: a network whose OLSR changes every run (new access points appear, links leave and come
 *   back, and the cycle of steps repeats so that the network itself stays the same size), run four
 *   times a simulated day for 60 days through cycle: each day the history's files (the dump's
 *   history/, the build's topology by day) and the whole state are measured. Bounded: from the
 *   retention window's end (day 31) on, none of it grows.
 */

/** What the baseline leaves out of the commit measured: the history (issue 42), as a patch that must apply. */
export const WITHOUT = "bench/without-history.patch";

const root = new URL("../", import.meta.url).pathname;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x: number) => Math.round(x * 1000) / 1000;

interface Run {
  seconds: number;
  peakRssMiB: number;
  userSeconds?: number;
  systemSeconds?: number;
  writeMiB?: number | null;
}

function child(checkout: string, args: string[]): Run {
  const r = spawnSync(process.execPath, [measuredScript(checkout, "bench-cycle-run"), ...args], {
    cwd: checkout,
    encoding: "utf8",
    maxBuffer: 1 << 20,
  });
  if (r.status !== 0) throw new Error(`cycle in ${checkout} ${args.join(" ")} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").at(-1)!) as Run;
}

/** The raw sources of each step, written once; `step` of run `run` (the window's steps repeat). */
function sources(dir: string, aps: number, steps: number) {
  const network = synthesize({ aps, seed: 1 });
  const file = (kind: string, step: number) => path.join(dir, `${kind}-${step}.${kind === "olsr" ? "txt" : "html"}`);
  for (let step = 0; step < steps; step++) {
    const raw = rawSources(network, step, 1);
    writeFileSync(file("olsr", step), raw.olsr);
    writeFileSync(file("wiki", step), raw.wiki);
  }
  return file;
}

export interface HistoryCostRow {
  accesspoints: number;
  baseline: string;
  /** the recycled runs compared (after the first two of each state) */
  runs: number;
  withSeconds: number[];
  withoutSeconds: number[];
  /** median of the per-run ratios with / without */
  timeRatio: number;
  withPeakRssMiB: number;
  withoutPeakRssMiB: number;
  /** highest peak with / highest peak without */
  memoryRatio: number;
  firstCycleSeconds: { with: number; without: number };
}

/** A commit of this repository unpacked into `dir`, with this checkout's node_modules, and a patch of it applied. */
function unpack(rev: string, dir: string, patch?: string): string {
  mkdirSync(dir);
  execFileSync("sh", ["-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "sh", root, rev, dir]);
  // a patch that no longer applies stops the bench: the baseline would not be what it says
  // (git apply inside another repository would patch that one's paths: none is looked for above `dir`)
  if (patch)
    execFileSync("git", ["apply", path.join(root, patch)], {
      cwd: dir,
      stdio: "inherit",
      env: { ...process.env, GIT_CEILING_DIRECTORIES: path.dirname(dir) },
    });
  symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"));
  measuredScript(dir, "bench-cycle-run"); // compiled now, not within a measured run
  return dir;
}

export async function historyCostRow(
  aps: number,
  work: string,
  recycled = 3,
  log = (line: string) => void process.stderr.write(line),
  rev = "HEAD",
): Promise<HistoryCostRow & { rev: string }> {
  const dir = path.join(work, `history-cost-${aps}`);
  removeTree(dir);
  mkdirSync(dir, { recursive: true });
  await settle(dir);
  const commit = execFileSync("git", ["-C", root, "rev-parse", "--short", rev], { encoding: "utf8" }).trim();
  const baseline = unpack(commit, path.join(dir, "baseline"), WITHOUT);
  const current = unpack(commit, path.join(dir, "current"));
  const steps = recycled + 2;
  const file = sources(dir, aps, steps);
  const at = (step: number) => new Date(Date.UTC(2026, 10, 20, 10, 6 * step)).toISOString();
  const sides = { with: current, without: baseline } as const;
  const measured: Record<keyof typeof sides, Run[]> = { with: [], without: [] };
  const first: Record<string, number> = {};
  for (let step = 0; step < steps; step++) {
    // ABBA: which side goes first alternates
    const order: (keyof typeof sides)[] = step % 2 === 0 ? ["with", "without"] : ["without", "with"];
    for (const side of order) {
      execFileSync("sync");
      const state = path.join(dir, `state-${side}`);
      const r = child(sides[side], [state, path.join(dir, `www-${side}`), file("olsr", step), file("wiki", step), at(step)]);
      if (step === 0) first[side] = round(r.seconds);
      // the two sides differ by the history, seen in what they serve
      const metrics = existsSync(path.join(dir, `www-${side}`, "metrics"));
      if (metrics !== (side === "with")) throw new Error(`the ${side} side ${metrics ? "writes" : "does not write"} /metrics`);
      if (step >= 2) measured[side].push(r);
      const cpu = r.userSeconds === undefined ? "" : `, user ${r.userSeconds.toFixed(1)} s, system ${r.systemSeconds!.toFixed(1)} s`;
      const written = r.writeMiB == null ? "" : `, ${Math.round(r.writeMiB)} MiB written`;
      log(
        `  ${side} history, run ${step + 1} of ${steps} at ${aps}: ${r.seconds.toFixed(2)} s, ${Math.round(r.peakRssMiB)} MiB${cpu}${written}\n`,
      );
    }
  }
  removeTree(dir);
  const peak = (rs: Run[]) => Math.round(Math.max(...rs.map((r) => r.peakRssMiB)));
  return {
    accesspoints: aps,
    rev: commit,
    baseline: `${commit} with ${WITHOUT}`,
    runs: recycled,
    withSeconds: measured.with.map((r) => round(r.seconds)),
    withoutSeconds: measured.without.map((r) => round(r.seconds)),
    timeRatio: round(median(measured.with.map((r, i) => r.seconds / measured.without[i].seconds))),
    withPeakRssMiB: peak(measured.with),
    withoutPeakRssMiB: peak(measured.without),
    memoryRatio: round(peak(measured.with) / peak(measured.without)),
    firstCycleSeconds: { with: first.with, without: first.without },
  };
}

export interface WindowDay {
  day: number;
  stateBytes: number;
  stateFiles: number;
  eventLines: number;
  eventBytes: number;
  countLines: number;
  /** the topology by day the served build holds */
  days: number;
  historyBytes: number;
  runFolders: number;
  peakRssMiB: number;
}

export interface HistoryWindowRow {
  accesspoints: number;
  simulatedDays: number;
  runsPerDay: number;
  byDay: WindowDay[];
  /** the largest of each figure from day 31 on over its value at day 31: 1 or less is bounded */
  growthAfterWindow: Record<"stateBytes" | "eventLines" | "countLines" | "days" | "historyBytes" | "runFolders", number>;
}

function treeSize(dir: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) {
        bytes += statSync(p).size;
        files++;
      }
    }
  };
  walk(dir);
  return { bytes, files };
}

const lines = (file: string) => (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).length : 0);

export function historyWindowRow(
  aps: number,
  work: string,
  simulatedDays = 60,
  runsPerDay = 4,
  log = (line: string) => void process.stderr.write(line),
): HistoryWindowRow {
  const dir = path.join(work, `history-window-${aps}`);
  removeTree(dir);
  mkdirSync(dir, { recursive: true });
  // 12 days of steps, then again: access points appear and go, the network does not grow without end
  const period = 12 * runsPerDay;
  const file = sources(dir, aps, period);
  const checkout = unpack(
    execFileSync("git", ["-C", root, "rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim(),
    path.join(dir, "current"),
  );
  const state = path.join(dir, "state");
  const serve = path.join(dir, "www");
  const byDay: WindowDay[] = [];
  let peak = 0;
  for (let run = 0; run < simulatedDays * runsPerDay; run++) {
    const at = new Date(Date.UTC(2026, 0, 1) + (run * 86_400_000) / runsPerDay).toISOString();
    const r = child(checkout, [state, serve, file("olsr", run % period), file("wiki", run % period), at]);
    peak = Math.max(peak, r.peakRssMiB);
    if ((run + 1) % runsPerDay !== 0) continue;
    const history = path.join(state, "dump", "history");
    const served = path.join(state, "current", "build", "api", "v1", "netjson", "history");
    const index = JSON.parse(readFileSync(path.join(served, "index.json"), "utf8")) as { days?: unknown[] } | unknown[];
    const size = treeSize(state);
    const day: WindowDay = {
      day: (run + 1) / runsPerDay,
      stateBytes: size.bytes,
      stateFiles: size.files,
      eventLines: lines(path.join(history, "events.ndjson")),
      eventBytes: existsSync(path.join(history, "events.ndjson")) ? statSync(path.join(history, "events.ndjson")).size : 0,
      countLines: lines(path.join(history, "counts.ndjson")),
      days: Array.isArray(index) ? index.length : (index.days?.length ?? 0),
      historyBytes: treeSize(history).bytes + treeSize(served).bytes,
      runFolders: readdirSync(path.join(state, "runs")).length,
      peakRssMiB: Math.round(peak),
    };
    peak = 0;
    byDay.push(day);
    log(`  day ${day.day}: ${JSON.stringify(day)}\n`);
  }
  removeTree(dir);
  const from = byDay.findIndex((d) => d.day === 31);
  const growth = (key: keyof HistoryWindowRow["growthAfterWindow"]) =>
    from < 0 ? NaN : round(Math.max(...byDay.slice(from).map((d) => d[key])) / Math.max(1, byDay[from][key]));
  return {
    accesspoints: aps,
    simulatedDays,
    runsPerDay,
    byDay,
    growthAfterWindow: {
      stateBytes: growth("stateBytes"),
      eventLines: growth("eventLines"),
      countLines: growth("countLines"),
      days: growth("days"),
      historyBytes: growth("historyBytes"),
      runFolders: growth("runFolders"),
    },
  };
}

// Standalone: node --import tsx scripts/bench-history.ts <work> <out> [cost-aps] [window-aps]
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [work, out, costAps = "40000", windowAps = "1000"] = process.argv.slice(2);
  const cost = Number(costAps) > 0 ? await historyCostRow(Number(costAps), work) : null;
  const window = Number(windowAps) > 0 ? historyWindowRow(Number(windowAps), work) : null;
  writeFileSync(out, JSON.stringify({ date: new Date().toISOString(), cost, window }, null, 2) + "\n");
}
