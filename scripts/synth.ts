import { Command } from "commander";
import { SYNTH_MAX_APS, synthesize, writeSynthDump } from "../src/gen/synth.ts";
import { constants } from "node:os";
import { exitOnInterrupt } from "../src/io/interrupt.ts";
import { assertReplaceable, RefusedOutputError } from "../src/io/ownership.ts";

/**
 * npm run synth -- --aps N --seed S --out DIR
 *
 * DIR must be absent, empty or a dump this script wrote before (it carries the marker file); anything
 * else is refused before any work, with exit code 2, and left as it was.
 */
const opts = new Command("synth")
  .requiredOption("--aps <n>", "number of access points", (v) => Number.parseInt(v, 10))
  .option("--seed <n>", "random seed", (v) => Number.parseInt(v, 10), 1)
  .requiredOption("--out <dir>", "dump directory to (re)create: absent, empty, or written by synth before")
  .option("--chunk <n>", "records per file", (v) => Number.parseInt(v, 10), 5000)
  .option("--ndjson", "write links as NDJSON too (default: JSON arrays)")
  .parse()
  .opts<{ aps: number; seed: number; out: string; chunk: number; ndjson?: boolean }>();

const usage = (message: string): never => {
  process.stderr.write(`synth: ${message}\n`);
  process.exit(2);
};
if (!Number.isInteger(opts.aps) || opts.aps < 0 || opts.aps > SYNTH_MAX_APS)
  usage(`--aps must be a whole number from 0 to ${SYNTH_MAX_APS}`);
if (!Number.isInteger(opts.seed)) usage("--seed must be a whole number");
if (!Number.isInteger(opts.chunk) || opts.chunk < 1) usage("--chunk must be a whole number from 1 on");

// Ctrl-C removes the folder being written and says what became of --out, as the command line does.
exitOnInterrupt(
  (line) => process.stderr.write(`\nsynth: ${line}\n`),
  (signal) => process.exit(128 + constants.signals[signal]),
);

try {
  // Checked before the (long) synthesis; writeSynthDump checks again right before it writes.
  await assertReplaceable({ out: opts.out, option: "--out", kind: "dump" });
  const dump = synthesize(opts);
  await writeSynthDump(opts.out, dump, opts.chunk, opts.ndjson ? "ndjson" : "json");
  process.stderr.write(`wrote ${opts.out}: ${dump.accesspoints.length} access points, ${dump.links.length} links\n`);
} catch (err) {
  if (!(err instanceof RefusedOutputError)) throw err;
  usage(err.message);
}
