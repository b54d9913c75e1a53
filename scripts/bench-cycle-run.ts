import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { limitHeapGrowth, loaded } from "../src/cli/memory.ts";
import { cycle } from "../src/live/run.ts";
import { CYCLE_SETTINGS } from "./bench-settings.ts";

/**
 * One measured run of `cycle`, in a process of its own so that its peak RSS is its own: prints a JSON
 * line. Arguments: state, link, OLSR file, wiki file, instant.
 */
limitHeapGrowth("importing"); // as the command line does
const [state, serve, olsr, wiki, at] = process.argv.slice(2);
/** Microseconds some task of the machine stalled on `kind` (Linux's pressure stall information), or null. */
function stalled(kind: "cpu" | "io"): number | null {
  try {
    return Number(/^some .*total=(\d+)/m.exec(readFileSync(`/proc/pressure/${kind}`, "utf8"))![1]);
  } catch {
    return null;
  }
}
const stalls = { cpu: stalled("cpu"), io: stalled("io") };
const started = performance.now();
const r = await cycle({
  state,
  serve,
  olsr: { source: olsr, every: 1 },
  wiki: { source: wiki, every: "changed" },
  sitesEvery: 10,
  at,
  keep: 30,
  settings: CYCLE_SETTINGS,
  loaded,
});
execFileSync("sync"); // the files are written when they are on disk
// what the run asked of the kernel and the disk: where two runs of one wall time differ (Linux only)
const io = (() => {
  try {
    return Object.fromEntries(
      readFileSync("/proc/self/io", "utf8")
        .trim()
        .split("\n")
        .map((l) => l.split(": ") as [string, string])
        .map(([k, v]) => [k, Number(v)]),
    ) as Record<string, number>;
  } catch {
    return {};
  }
})();
const usage = process.resourceUsage();
// the machine's, not this process's: the bench runs nothing else meanwhile
const stalledSeconds = (kind: "cpu" | "io") => {
  const [before, after] = [stalls[kind], stalled(kind)];
  return before === null || after === null ? null : (after - before) / 1e6;
};
process.stdout.write(
  JSON.stringify({
    seconds: (performance.now() - started) / 1000,
    peakRssMiB: usage.maxRSS / 1024,
    userSeconds: usage.userCPUTime / 1e6,
    systemSeconds: usage.systemCPUTime / 1e6,
    writeMiB: io.write_bytes === undefined ? null : io.write_bytes / 2 ** 20,
    // read from the disk, not the page cache: a recycled tree no longer in the cache
    readMiB: io.read_bytes === undefined ? null : io.read_bytes / 2 ** 20,
    syscalls: io.syscr === undefined ? null : io.syscr + io.syscw,
    cpuStalledSeconds: stalledSeconds("cpu"),
    ioStalledSeconds: stalledSeconds("io"),
    line: r.line,
    steps: r.seconds,
  }) + "\n",
);
