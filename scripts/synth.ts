import { Command } from "commander";
import { synthesize, writeSynthDump } from "../src/gen/synth.ts";

/** npm run synth -- --aps N --seed S --out DIR */
const opts = new Command("synth")
  .requiredOption("--aps <n>", "number of access points", (v) => Number.parseInt(v, 10))
  .option("--seed <n>", "random seed", (v) => Number.parseInt(v, 10), 1)
  .requiredOption("--out <dir>", "dump directory to (re)create")
  .option("--chunk <n>", "records per file", (v) => Number.parseInt(v, 10), 5000)
  .option("--ndjson", "write links as NDJSON too (default: JSON arrays)")
  .parse()
  .opts<{ aps: number; seed: number; out: string; chunk: number; ndjson?: boolean }>();
const dump = synthesize(opts);
await writeSynthDump(opts.out, dump, opts.chunk, opts.ndjson ? "ndjson" : "json");
process.stderr.write(`wrote ${opts.out}: ${dump.accesspoints.length} access points, ${dump.links.length} links\n`);
