import { build } from "../src/index.ts";

/** One measured build, in a process of its own so that its peak RSS is its own: prints a JSON line. */
const [data, out] = process.argv.slice(2);
const started = performance.now();
const r = await build({ data, out });
const seconds = (performance.now() - started) / 1000;
process.stdout.write(
  JSON.stringify({
    seconds,
    files: r.output.files,
    bytes: r.output.bytes,
    accesspoints: r.summary.accesspoints,
    interfaces: r.summary.interfaces,
    links: r.summary.links,
    peakRssMiB: process.resourceUsage().maxRSS / 1024,
  }) + "\n",
);
