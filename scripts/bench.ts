import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Command } from "commander";
import fg from "fast-glob";
import { synthesize, writeSynthDump } from "../src/gen/synth.ts";
import { NGINX, servingRates, type ServingRow } from "./bench-serve.ts";
import { cycleRow, type CycleRow } from "./bench-cycle.ts";
import { holdsFreedInodesBack, removedNow, removeTree, settle } from "./bench-disk.ts";
import { measuredScript } from "./bench-compiled.ts";
import { cpuSeconds } from "./bench-cpu.ts";
import { edgeRow, type EdgeRow } from "./bench-edge.ts";
import { historyCostRow, historyWindowRow } from "./bench-history.ts";
import { validate } from "../src/pipeline.ts";

/**
 * npm run bench: builds synthetic networks of 600, 3,000 and 40,000 access points and, right after
 * each build, copies the output tree with `cp -r`, the floor any build that writes these files has.
 * The headline is the ratio build / cp -r, measured in the same run; absolute times vary with the
 * disk. Then the memory case: a dump of at least 100 MiB, all NDJSON, whose build must stay within
 * 1 GiB peak RSS. Each row also counts the rules the Netlify deploy needs (Netlify recommends under
 * 10,000). At 3,000 access points also the rate nginx serves the build at against the preview's
 * (scripts/bench-serve.ts). Each network of the table is then built once more over its previous
 * output, as a periodic job does: rebuild / build, the same dump, must stay at or under 1.0 (issue
 * 26). On each network's build, Netlify's edge function: its size and rule count (the same for every
 * network) and its time per request against Netlify's 50 ms (scripts/bench-edge.ts, issue 30). And
 * validate on a dump holding one 900 kB firmware version against the same dump without it. Writes
 * bench/results.json. Every measured build and cycle runs compiled, in a process of its own, as the
 * installed package runs (scripts/bench-compiled.ts).
 */
const opts = new Command("bench")
  .option("--no-large", "skip the 40,000 access point network")
  .option("--no-sweep", "skip the write-concurrency sweep")
  .option("--no-memory", "skip the 100 MiB NDJSON dump")
  .option("--no-serve", "skip nginx's and the preview's serving rates at 3,000 access points")
  .option("--no-cycle", "skip the cycle against a fresh build (3,000 access points, and 40,000 unless --no-large)")
  .option(
    "--no-history",
    "skip what the history costs a cycle against the same commit without it (bench/without-history.patch; 40,000 access points, 3,000 with --no-large) and its bounds over 60 days",
  )
  .option("--sizes <list>", "comma-separated network sizes", (v) => v.split(",").map(Number))
  .option("--work <dir>", "scratch folder (needs ~10 GB for 40,000)", os.tmpdir())
  .option("--out <file>", "results file", "bench/results.json")
  .parse()
  .opts<{
    large: boolean;
    sweep: boolean;
    memory: boolean;
    serve: boolean;
    cycle: boolean;
    history: boolean;
    sizes?: number[];
    work: string;
    out: string;
  }>();

/** The memory case: access points for an all-NDJSON synthetic dump of at least MEMORY_DUMP_BYTES (checked). */
const MEMORY_APS = 78_000;
const MEMORY_DUMP_BYTES = 100 * 2 ** 20;
const MEMORY_TARGET_MIB = 1024;

const sizes = opts.sizes ?? [600, 3000, ...(opts.large ? [40000] : [])];
/** The network the serving rates are measured on. */
const SERVING_APS = 3000;
const work = mkdtempSync(path.join(opts.work, "mesh-bench-"));
const root = new URL("../", import.meta.url).pathname;

interface Row {
  accesspoints: number;
  dumpBytes: number;
  dumpFormat: "ndjson+json" | "ndjson";
  interfaces: number;
  links: number;
  /** the rules of the deploy's netlify.toml (the route table's and the literal ones), against NETLIFY_RULE_LIMIT */
  netlifyRules: number;
  literalRules: number;
  concurrency: number;
  buildSeconds: number;
  cpSeconds: number;
  ratio: number;
  files: number;
  bytes: number;
  filesPerSecond: number;
  peakRssMiB: number;
  /** CPU seconds of the build's process (its threads, its `sync`, its start) and of `cp -r` (its `sync` apart: a few ms) */
  buildUserSeconds: number;
  buildSystemSeconds: number;
  cpUserSeconds: number;
  cpSystemSeconds: number;
  /** buildSystemSeconds / cpSystemSeconds: item 2 of issue 45 asks at most 1.0 at 3,000 access points */
  systemOverCp: number;
  secondsPerThousandAps: number;
  /** the folder with the most entries (files and sub-folders): Netlify refuses more than 54,000 in one */
  largestFolder?: { folder: string; entries: number };
  /** the same dump built over the previous output, as the command line does (table rows only) */
  rebuildSeconds?: number;
  /** rebuildSeconds / buildSeconds: target at most 1.0 */
  rebuildOverBuild?: number;
  /** how long the detached remover took, after the rebuild returned, to remove the replaced output */
  removeSeconds?: number;
}

/** A removal, noted so that the next measured command waits until this disk has forgotten it (scripts/bench-disk.ts). */
const clean = removeTree;

/** Page-cache write-back decides these timings: both sides start clean and count until their data is on disk. */
function sync() {
  spawnSync("sync");
}

let serving = null as ServingRow | null; // set by measure() at SERVING_APS

/** One build in a process of its own (scripts/bench-build.ts): what it prints. */
function timedBuild(data: string, out: string, concurrency: number, mode: "fresh" | "rebuild") {
  const b = spawnSync(process.execPath, [measuredScript(root, "bench-build"), data, out, mode], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, MESH_API_WRITE_CONCURRENCY: String(concurrency) },
    maxBuffer: 1 << 20,
  });
  if (b.status !== 0) throw new Error(`${mode} build of ${data} failed: ${b.stderr}`);
  return JSON.parse(b.stdout) as {
    seconds: number;
    files: number;
    bytes: number;
    interfaces: number;
    links: number;
    netlifyRules: number;
    literalRules: number;
    peakRssMiB: number;
    userSeconds: number;
    systemSeconds: number;
    layout: unknown;
    largestFolder?: { folder: string; entries: number };
  };
}

/** Waits until the remover a rebuild started has removed the output it replaced beside `out`; its seconds. */
async function removed(out: string): Promise<number> {
  const started = performance.now();
  const prefix = `.${path.basename(out)}.`;
  const replaced = () => readdirSync(path.dirname(out)).some((n) => n.startsWith(prefix) && /\.(?:old|trash)-/.test(n));
  while (replaced()) await new Promise((ok) => setTimeout(ok, 50));
  return (performance.now() - started) / 1000;
}

async function measure(aps: number, concurrency = 32, linksAs: "json" | "ndjson" = "json", serve = false, rebuild = false): Promise<Row> {
  const data = path.join(work, `dump-${aps}`);
  await writeSynthDump(data, synthesize({ aps, seed: 1 }), 5000, linksAs);
  const dumpBytes = fg.sync("**/*", { cwd: data, onlyFiles: true }).reduce((n, f) => n + statSync(path.join(data, f)).size, 0);
  const out = path.join(work, `dist-${aps}`);
  const copy = path.join(work, `copy-${aps}`);
  measuredScript(root, "bench-build"); // compiled now, not within a measured run
  clean(out);
  clean(copy);
  await settle(work);
  sync();
  const r = timedBuild(data, out, concurrency, "fresh");
  const started = performance.now();
  const before = cpuSeconds();
  execFileSync("cp", ["-r", out, copy]);
  const after = cpuSeconds();
  sync();
  const cpSeconds = (performance.now() - started) / 1000;
  const cp = { user: after.user - before.user, system: after.system - before.system };
  if (aps === Math.max(...sizes)) layout = r.layout;
  // The table's networks (the rows that are rebuilt), not the sweep's or the memory case's.
  if (rebuild) {
    process.stderr.write(`the edge function on ${aps} access points…\n`);
    edge.push(await edgeRow(aps, out, work));
  }
  if (serve) {
    process.stderr.write(`serving ${aps} access points: the preview and nginx in turn…\n`);
    serving = await servingRates(data, out, aps);
  }
  // Over the output just made, from a synced start like the fresh build; the remover it leaves
  // running is waited for (and timed) before anything else is measured.
  let again: { rebuildSeconds: number; rebuildOverBuild: number; removeSeconds: number } | undefined;
  if (rebuild) {
    await settle(work);
    sync();
    const seconds = timedBuild(data, out, concurrency, "rebuild").seconds;
    again = { rebuildSeconds: round(seconds), rebuildOverBuild: round(seconds / r.seconds), removeSeconds: round(await removed(out)) };
    removedNow();
  }
  clean(out);
  clean(copy);
  clean(data);
  return {
    accesspoints: aps,
    dumpBytes,
    dumpFormat: linksAs === "json" ? "ndjson+json" : "ndjson",
    interfaces: r.interfaces,
    links: r.links,
    netlifyRules: r.netlifyRules,
    literalRules: r.literalRules,
    concurrency,
    buildSeconds: round(r.seconds),
    cpSeconds: round(cpSeconds),
    ratio: round(r.seconds / cpSeconds),
    files: r.files,
    bytes: r.bytes,
    filesPerSecond: Math.round(r.files / r.seconds),
    peakRssMiB: Math.round(r.peakRssMiB),
    buildUserSeconds: round(r.userSeconds),
    buildSystemSeconds: round(r.systemSeconds),
    cpUserSeconds: round(cp.user),
    cpSystemSeconds: round(cp.system),
    systemOverCp: round(r.systemSeconds / cp.system),
    secondsPerThousandAps: round((r.seconds / aps) * 1000),
    largestFolder: r.largestFolder,
    ...again,
  };
}

const round = (x: number) => Math.round(x * 1000) / 1000;
let layout: unknown;
const edge: EdgeRow[] = [];

/** Under the 1 MiB an NDJSON record may hold (the synthetic dump's access points are NDJSON). */
const LONG_VALUE = 900_000;

/**
 * validate on a small network one of whose access points reports a 900 kB firmware version, over the
 * same network without it, in one run (each the median of 3): a router's value measured against every
 * server's limits once per value, not once per rule (it took a minute before).
 */
async function longValue(): Promise<{ seconds: number; plainSeconds: number; ratio: number; valueBytes: number }> {
  const net = synthesize({ aps: 6, seed: 3 });
  const long = { ...net, accesspoints: net.accesspoints.map((a, i) => (i === 4 ? { ...a, mesh_version: "x".repeat(LONG_VALUE) } : a)) };
  const time = async (n: typeof net, name: string) => {
    const data = path.join(work, name);
    await writeSynthDump(data, n);
    const runs: number[] = [];
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      await validate({ data });
      runs.push((performance.now() - started) / 1000);
    }
    clean(data);
    return runs.sort((a, b) => a - b)[1];
  };
  const plainSeconds = await time(net, "plain-6");
  const seconds = await time(long, "long-6");
  return { seconds: round(seconds), plainSeconds: round(plainSeconds), ratio: round(seconds / plainSeconds), valueBytes: LONG_VALUE };
}

function table(rows: Row[]): string {
  const cols: [string, (r: Row) => string][] = [
    ["access points", (r) => String(r.accesspoints)],
    ["links", (r) => String(r.links)],
    ["Netlify rules", (r) => String(r.netlifyRules)],
    ["writers", (r) => String(r.concurrency)],
    ["files", (r) => String(r.files)],
    ["MB", (r) => (r.bytes / 1e6).toFixed(1)],
    ["build / cp -r", (r) => r.ratio.toFixed(2)],
    ["files/s", (r) => String(r.filesPerSecond)],
    ["peak RSS MiB", (r) => String(r.peakRssMiB)],
    ["build s", (r) => r.buildSeconds.toFixed(2)],
    ["cp -r s", (r) => r.cpSeconds.toFixed(2)],
    ["system s", (r) => r.buildSystemSeconds.toFixed(2)],
    ["cp -r system s", (r) => r.cpSystemSeconds.toFixed(2)],
    ["rebuild / build", (r) => r.rebuildOverBuild?.toFixed(2) ?? "-"],
    ["rebuild s", (r) => r.rebuildSeconds?.toFixed(2) ?? "-"],
  ];
  const cells = [cols.map(([h]) => h), ...rows.map((r) => cols.map(([, f]) => f(r)))];
  const widths = cols.map((_, i) => Math.max(...cells.map((c) => c[i].length)));
  return cells.map((c) => c.map((v, i) => v.padStart(widths[i])).join("  ")).join("\n");
}

const rows: Row[] = [];
const sweep: Row[] = [];
const cycles: CycleRow[] = [];
let history: { cost: unknown; window: unknown; target: string } | null = null;
let memory: (Row & { targetMiB: number; met: boolean }) | null = null;
let long: Awaited<ReturnType<typeof longValue>> | null = null;

/**
 * Writes what is measured so far, after every stage: a run stopped midway (a 40,000 run takes
 * hours, most of them removing trees) keeps its finished rows, marked `complete: false`.
 */
function save(stage: string) {
  const at = (n: number) => rows.find((r) => r.accesspoints === n);
  const scaling = at(40000) && at(3000) ? round(at(40000)!.secondsPerThousandAps / at(3000)!.secondsPerThousandAps) : null;
  const results = {
    date: new Date().toISOString(),
    complete: stage === "done",
    stage,
    machine: {
      cpus: os.cpus().length,
      cpu: os.cpus()[0]?.model,
      memoryGiB: Math.round(os.totalmem() / 2 ** 30),
      platform: `${os.platform()} ${os.release()}`,
      node: process.version,
    },
    method:
      "build and cp -r of its output each timed from a synced start until sync returns (data on disk), back to back; " +
      "then the rows' build once more over that output (rebuild: until sync returns, the replaced output's removal left to its detached remover, timed apart); " +
      "where the file system holds freed inodes back (ext4 without a journal: freedInodesHeldBack), each measured command starts 365 s after the bench's last removal",
    freedInodesHeldBack: holdsFreedInodesBack(work),
    rows,
    scaling: { timePerApAt40000OverAt3000: scaling },
    sweep,
    memory,
    serving,
    cycle: { target: "recycled cycle / fresh build <= 0.6 (issue 45)", rows: cycles },
    history,
    layout: { accesspoints: Math.max(...sizes), byKind: layout },
    edge: { target: "function and rules the same for every network; p99 far under 50 ms", rows: edge },
    longValue: long,
  };
  mkdirSync(path.dirname(opts.out), { recursive: true });
  writeFileSync(opts.out, JSON.stringify(results, null, 2) + "\n");
  return scaling;
}

try {
  for (const n of sizes) {
    process.stderr.write(`building ${n} access points…\n`);
    rows.push(await measure(n, 32, "json", opts.serve && n === SERVING_APS, true));
    save(`rows up to ${n}`);
  }
  if (opts.sweep) {
    // Interleaved twice, so that a slow spell of the disk does not favour one setting.
    for (const round of [1, 2]) {
      for (const c of [4, 8, 16, 32, 64]) {
        process.stderr.write(`write concurrency ${c} at 3000 access points (round ${round})…\n`);
        sweep.push(await measure(3000, c));
      }
    }
    save("sweep");
  }
  if (opts.cycle) {
    for (const n of [3000, ...(opts.large ? [40000] : [])]) {
      process.stderr.write(`cycle against a fresh build at ${n} access points…\n`);
      // the third run is the first that recycles the build of two runs before
      cycles.push(await cycleRow(n, work, n > 3000 ? 3 : 5));
      save(`cycle at ${n}`);
    }
  }
  // What the history of issue 42 costs a recycled cycle, and its bounds (scripts/bench-history.ts).
  if (opts.history) {
    history = { cost: await historyCostRow(opts.large ? 40000 : 3000, work), window: historyWindowRow(1000, work), target: "cost <= 1.10" };
    save("history");
  }
  if (opts.memory) {
    process.stderr.write(`building the memory case: ${MEMORY_APS} access points, all NDJSON…\n`);
    const row = await measure(MEMORY_APS, 32, "ndjson");
    if (row.dumpBytes < MEMORY_DUMP_BYTES)
      throw new Error(`the memory case dump has ${row.dumpBytes} bytes, under ${MEMORY_DUMP_BYTES}: raise MEMORY_APS`);
    memory = { ...row, targetMiB: MEMORY_TARGET_MIB, met: row.peakRssMiB <= MEMORY_TARGET_MIB };
    save("memory");
  }
  process.stderr.write("validate with a 900 kB firmware version…\n");
  long = await longValue();
  const scaling = save("done");
  process.stdout.write(`${table(rows)}\n`);
  if (scaling !== null) process.stdout.write(`time per access point at 40,000 / at 3,000: ${scaling.toFixed(2)}\n`);
  if (memory) {
    process.stdout.write(
      `memory case: ${(memory.dumpBytes / 2 ** 20).toFixed(1)} MiB NDJSON dump (${memory.accesspoints} access points, ${memory.files} files): ` +
        `peak RSS ${memory.peakRssMiB} MiB, target ${MEMORY_TARGET_MIB} MiB: ${memory.met ? "met" : "NOT MET"}; build / cp -r ${memory.ratio.toFixed(2)}\n`,
    );
  }
  if (serving)
    process.stdout.write(
      `serving ${serving.accesspoints} access points (${serving.requests} requests, ${serving.concurrency} in flight, median of ${serving.rounds}): ` +
        `preview ${serving.previewRequestsPerSecond} req/s, nginx ${serving.nginxRequestsPerSecond} req/s: nginx / preview ${serving.nginxOverPreview.toFixed(2)}\n`,
    );
  else if (opts.serve && sizes.includes(SERVING_APS)) process.stdout.write(`serving: not measured (no nginx at ${NGINX})\n`);
  for (const c of cycles)
    process.stdout.write(
      `cycle at ${c.accesspoints} access points: cycle / fresh build ${c.cycleOverFreshBuild.toFixed(2)} (median of ${c.runs}; ` +
        `of the recycled ones ${c.recycledOverFreshBuild?.toFixed(2) ?? "none"}; ` +
        `cycles ${c.cycleSeconds.join(", ")} s, fresh builds ${c.freshBuildSeconds.join(", ")} s), peak RSS ${c.peakRssMiB} MiB (fresh build ${c.freshBuildPeakRssMiB}); ` +
        `the next day's first cycle ${c.nextDayCycleSeconds} s, ${c.nextDayOverCycle.toFixed(2)} of a cycle, peak ${c.nextDayCyclePeakRssMiB} MiB\n`,
    );
  for (const e of edge)
    process.stdout.write(
      `edge function at ${e.accesspoints} access points: ${e.functionBytes} bytes, netlify.toml ${e.tomlBytes} bytes, ${e.rules} rules; ` +
        `per request over ${e.requests}: median ${e.medianMs} ms, p99 ${e.p99Ms} ms, max ${e.maxMs} ms (limit ${e.limitMs} ms of CPU); ` +
        `the slowest with its next() reading the file ${e.maxWithNextMs} ms\n`,
    );
  for (const r of rows)
    if (r.largestFolder)
      process.stdout.write(
        `largest folder at ${r.accesspoints} access points: ${r.largestFolder.folder} with ${r.largestFolder.entries} entries (Netlify's limit 54,000)\n`,
      );
  process.stdout.write(
    `validate with a ${long.valueBytes}-byte firmware version: ${long.seconds} s, without it ${long.plainSeconds} s (ratio ${long.ratio.toFixed(2)})\n`,
  );
  if (sweep.length) process.stdout.write(`\nwrite concurrency at 3,000 access points:\n${table(sweep)}\n`);
  process.stdout.write(`\nwrote ${opts.out}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
