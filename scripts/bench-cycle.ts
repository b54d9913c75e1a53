import { spawnSync } from "node:child_process";
import { mkdirSync, realpathSync, statfsSync, writeFileSync, type StatsFs } from "node:fs";
import path from "node:path";
import { rawSources } from "../src/gen/raw.ts";
import { synthesize } from "../src/gen/synth.ts";
import { measuredScript, type MeasuredScript } from "./bench-compiled.ts";
import { removeTree, settle } from "./bench-disk.ts";
import { CYCLE_SETTINGS } from "./bench-settings.ts";

/**
 * The cycle against a fresh build (issue 26): on a synthetic network whose OLSR changes from run to
 * run (src/gen/raw.ts), a first `cycle` (every source, the sites), then `runs` further cycles, each
 * timed from a synced start until sync returns. Those cycles all fall within one day; one more comes
 * a day after the last (issue 45, item 3): the first cycle of a day of a state with a history, which
 * writes the day's snapshot and starts the topology by day from the day before's carried graph, on a
 * recycled build. The cycles follow each other as the live job runs them; only then is each cycle's
 * dump (kept by hard links) built fresh into an absent folder, timed alike. The headline is the
 * median of cycle / fresh build of its dump, in one run.
 *
 * Why the fresh builds come after the cycles (docs/performance.md, 2026-12-01): a fresh build
 * writes a whole tree (5 GB at 40,000 access points), which pushes the blocks of the served trees'
 * inode tables out of the page cache; the next cycle then reads them back one by one to update the
 * times of the files it writes over. The live job writes nothing between two of its cycles, so the
 * bench does not either.
 */

/** What a run asked of the machine (bench-cycle-run.ts prints it), where two runs of one wall time differ. */
export interface RunCost {
  userSeconds: number | null;
  systemSeconds: number | null;
  writeMiB: number | null;
  /** read from the disk (not from the page cache) */
  readMiB: number | null;
  /** the time some task waited for a CPU, or for the disk (Linux's /proc/pressure), while it ran */
  cpuStalledSeconds: number | null;
  ioStalledSeconds: number | null;
}

export interface CycleRow {
  accesspoints: number;
  runs: number;
  firstCycleSeconds: number;
  cycleSeconds: number[];
  freshBuildSeconds: number[];
  /** median of the per-run ratios cycle / fresh build of the dump that cycle wrote */
  cycleOverFreshBuild: number;
  /**
   * the same median over the cycles that recycled a build (from the third run on: the build before
   * the served one exists then), which issue 45 asks at most 0.6; null in a row of fewer runs
   */
  recycledOverFreshBuild: number | null;
  /** the first cycle's (the import from nothing, the day's snapshot) */
  firstCyclePeakRssMiB: number;
  /** the further cycles' */
  peakRssMiB: number;
  /** the cycle a day after the last of `cycleSeconds`, on the same state: the first of its day */
  nextDayCycleSeconds: number;
  nextDayCyclePeakRssMiB: number;
  /** what each run asked of the machine: the cycles', then the next day's */
  usage: RunCost[];
  /** nextDayCycleSeconds / the median of cycleSeconds (the target: at most 2) */
  nextDayOverCycle: number;
  freshBuildPeakRssMiB: number;
}

const root = new URL("../", import.meta.url).pathname;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x: number) => Math.round(x * 1000) / 1000;
const rounded = (x: number | null | undefined) => (x == null ? null : round(x));

function child(
  script: MeasuredScript,
  args: string[],
): { seconds: number; peakRssMiB: number; line?: string; steps?: Record<string, number> } & Partial<RunCost> {
  const r = spawnSync(process.execPath, [measuredScript(root, script), ...args], {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 1 << 20,
  });
  if (r.status !== 0) throw new Error(`${script} ${args.join(" ")} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").at(-1)!) as ReturnType<typeof child>;
}

/**
 * Stops the row when the file system cannot hold what it keeps until its end: the state's second
 * build, a fresh build a run and the next day's first cycle, each about what the first cycle took
 * (at 40,000 access points 1.2 M inodes and 2 GB). Twice the row ran out of inodes in its third
 * fresh build, a quarter of an hour in (docs/performance.md).
 */
function assertRoom(dir: string, before: StatsFs, builds: number): void {
  const now = statfsSync(dir);
  const need = { inodes: (before.ffree - now.ffree) * builds, bytes: (before.bavail - now.bavail) * now.bsize * builds };
  const free = { inodes: now.ffree, bytes: now.bavail * now.bsize };
  if (free.inodes >= need.inodes && free.bytes >= need.bytes) return;
  removeTree(dir);
  throw new Error(
    `the cycle row needs about ${need.inodes} inodes and ${Math.round(need.bytes / 2 ** 20)} MiB free in ${dir} ` +
      `(${builds} more builds the size of the first cycle's), and ${free.inodes} inodes and ${Math.round(free.bytes / 2 ** 20)} MiB are: ` +
      "free some, or give --work a folder on another file system",
  );
}

/** Hard links of the state's current dump (a run's folders are written once, never changed): nothing copied, nothing written but folder entries. */
function keepDump(state: string, to: string): void {
  const r = spawnSync("cp", ["-al", realpathSync(path.join(state, "dump")), to], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`cp -al of ${state}/dump to ${to} failed: ${r.stderr}`);
}

const cost = (r: ReturnType<typeof child>) =>
  `user ${r.userSeconds?.toFixed(1)} s, system ${r.systemSeconds?.toFixed(1)} s, written ${r.writeMiB?.toFixed(0) ?? "?"} MiB, read ${r.readMiB?.toFixed(0) ?? "?"} MiB, ` +
  `stalled on CPU ${r.cpuStalledSeconds?.toFixed(1) ?? "?"} s, on the disk ${r.ioStalledSeconds?.toFixed(1) ?? "?"} s`;

export async function cycleRow(
  aps: number,
  work: string,
  runs = 3,
  log = (line: string) => void process.stderr.write(line),
): Promise<CycleRow> {
  const dir = path.join(work, `cycle-${aps}`);
  removeTree(dir);
  mkdirSync(dir, { recursive: true });
  const network = synthesize({ aps, seed: 1 });
  const file = (kind: string, step: number) => path.join(dir, `${kind}-${step}.${kind === "olsr" ? "txt" : "html"}`);
  for (let step = 0; step <= runs + 1; step++) {
    const raw = rawSources(network, step, 1);
    writeFileSync(file("olsr", step), raw.olsr);
    writeFileSync(file("wiki", step), raw.wiki);
  }
  const state = path.join(dir, "state");
  const serve = path.join(dir, "www");
  const at = (step: number, day = 20) => new Date(Date.UTC(2026, 10, day, 10, 6 * step)).toISOString();
  measuredScript(root, "bench-cycle-run"); // compiled now, not within a measured run
  // The commands follow each other without a wait: a cycle removes next to nothing (a few dozen files).
  await settle(dir);
  spawnSync("sync");
  const before = statfsSync(dir);
  const first = child("bench-cycle-run", [state, serve, file("olsr", 0), file("wiki", 0), at(0)]);
  // each run's figures as they come: removing the folders at the end can take longer than the runs
  log(`  first cycle of ${aps}: ${first.seconds.toFixed(1)} s, peak ${Math.round(first.peakRssMiB)} MiB (${first.line})\n`);
  assertRoom(dir, before, runs + 2);
  const cycles: ReturnType<typeof child>[] = [];
  for (let step = 1; step <= runs; step++) {
    spawnSync("sync");
    const c = child("bench-cycle-run", [state, serve, file("olsr", step), file("wiki", step), at(step)]);
    cycles.push(c);
    // the run's dump outlives the run's folder (removed two cycles on) for its fresh build
    keepDump(state, path.join(dir, `dump-${step}`));
    log(
      `  cycle ${step + 1} of ${aps}: ${c.seconds.toFixed(2)} s, peak ${Math.round(c.peakRssMiB)} MiB (${JSON.stringify(c.steps)}; ${cost(c)})\n`,
    );
  }
  spawnSync("sync");
  const nextDay = child("bench-cycle-run", [state, serve, file("olsr", runs + 1), file("wiki", runs + 1), at(runs + 1, 21)]);
  log(
    `  the next day's first cycle of ${aps}: ${nextDay.seconds.toFixed(2)} s, peak ${Math.round(nextDay.peakRssMiB)} MiB ` +
      `(${JSON.stringify(nextDay.steps)}; ${cost(nextDay)}; ${nextDay.line})\n`,
  );
  const fresh: { seconds: number; peakRssMiB: number }[] = [];
  for (let step = 1; step <= runs; step++) {
    // Each fresh build into a folder of its own, all removed with the row: a removal of a tree of
    // 1.3 GB slowed this disk (ext4 with discard) for minutes, and the next run measured it.
    spawnSync("sync");
    const b = child("bench-build", [
      path.join(dir, `dump-${step}`),
      path.join(dir, `fresh-${step}`),
      "timed",
      JSON.stringify(CYCLE_SETTINGS),
    ]);
    fresh.push(b);
    log(`  fresh build of cycle ${step + 1}'s dump (${aps}): ${b.seconds.toFixed(2)} s, peak ${Math.round(b.peakRssMiB)} MiB\n`);
  }
  removeTree(dir);
  // cycles[i] is run i + 2
  const recycled = cycles.map((c, i) => c.seconds / fresh[i].seconds).filter((_, i) => i + 2 >= 3);
  return {
    accesspoints: aps,
    runs,
    firstCycleSeconds: round(first.seconds),
    cycleSeconds: cycles.map((c) => round(c.seconds)),
    freshBuildSeconds: fresh.map((b) => round(b.seconds)),
    cycleOverFreshBuild: round(median(cycles.map((c, i) => c.seconds / fresh[i].seconds))),
    recycledOverFreshBuild: recycled.length > 0 ? round(median(recycled)) : null,
    firstCyclePeakRssMiB: Math.round(first.peakRssMiB),
    peakRssMiB: Math.round(Math.max(...cycles.map((c) => c.peakRssMiB))),
    freshBuildPeakRssMiB: Math.round(Math.max(...fresh.map((b) => b.peakRssMiB))),
    nextDayCycleSeconds: round(nextDay.seconds),
    nextDayCyclePeakRssMiB: Math.round(nextDay.peakRssMiB),
    nextDayOverCycle: round(nextDay.seconds / median(cycles.map((c) => c.seconds))),
    usage: [...cycles, nextDay].map((c) => ({
      userSeconds: rounded(c.userSeconds),
      systemSeconds: rounded(c.systemSeconds),
      writeMiB: rounded(c.writeMiB),
      readMiB: rounded(c.readMiB),
      cpuStalledSeconds: rounded(c.cpuStalledSeconds),
      ioStalledSeconds: rounded(c.ioStalledSeconds),
    })),
  };
}
