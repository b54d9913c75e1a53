import { execFileSync } from "node:child_process";
import { limitHeapGrowth } from "../src/cli/memory.ts";
import { cycle } from "../src/live/run.ts";
import { CYCLE_SETTINGS } from "./bench-cycle.ts";

/**
 * One measured run of `cycle`, in a process of its own so that its peak RSS is its own: prints a JSON
 * line. Arguments: state, link, OLSR file, wiki file, instant.
 */
limitHeapGrowth(); // as the command line does
const [state, serve, olsr, wiki, at] = process.argv.slice(2);
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
});
execFileSync("sync"); // the files are written when they are on disk
process.stdout.write(
  JSON.stringify({
    seconds: (performance.now() - started) / 1000,
    peakRssMiB: process.resourceUsage().maxRSS / 1024,
    line: r.line,
    steps: r.seconds,
  }) + "\n",
);
