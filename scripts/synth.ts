import { Command } from "commander";
import path from "node:path";
import { SYNTH_MAX_APS, synthesize, writeSynthDump } from "../src/gen/synth.ts";
import { constants } from "node:os";
import { RAW_FILES, assertRawReplaceable, writeRawFolder } from "../src/gen/raw-folder.ts";
import { RAW_MAX_STEP } from "../src/gen/raw.ts";
import { exitOnInterrupt } from "../src/io/write/interrupt.ts";
import { assertReplaceable, RefusedOutputError } from "../src/io/write/ownership.ts";

/**
 * npm run synth -- --aps N [--seed S] [--out DIR] [--raw DIR [--step K]]
 *
 * `--out` writes the network as a dump; `--raw` writes its raw sources (olsr.txt, wiki.html,
 * ondataservice.db) for `mesh-api import opennet` and `mesh-api cycle`, at step K of a changing day
 * (src/gen/raw.ts). Each folder must be absent, empty or one this script wrote before, as that
 * kind (it carries the marker file); anything else is refused before any work, with exit code 2, and
 * left as it was.
 */
const whole = (v: string) => (/^[+-]?\d+$/.test(v.trim()) ? Number.parseInt(v, 10) : Number.NaN);
const opts = new Command("synth")
  .requiredOption("--aps <n>", "number of access points", whole)
  .option("--seed <n>", "random seed", whole, 1)
  .option("--out <dir>", "dump directory to (re)create: absent, empty, or written by synth before")
  .option(
    "--raw <dir>",
    "raw sources folder to (re)create (olsr.txt, wiki.html, ondataservice.db): absent, empty, or written by synth --raw",
  )
  .option("--step <n>", `with --raw: the step of the changing sources, 0 to ${RAW_MAX_STEP} (default 0)`, whole)
  .option("--chunk <n>", "records per file", whole, 5000)
  .option("--ndjson", "write links as NDJSON too (default: JSON arrays)")
  .parse()
  .opts<{ aps: number; seed: number; out?: string; raw?: string; step?: number; chunk: number; ndjson?: boolean }>();

const usage = (message: string): never => {
  process.stderr.write(`synth: ${message}\n`);
  process.exit(2);
};
if (!Number.isInteger(opts.aps) || opts.aps < 0 || opts.aps > SYNTH_MAX_APS)
  usage(`--aps must be a whole number from 0 to ${SYNTH_MAX_APS}`);
if (!Number.isInteger(opts.seed)) usage("--seed must be a whole number");
if (!Number.isInteger(opts.chunk) || opts.chunk < 1) usage("--chunk must be a whole number from 1 on");
if (opts.out === undefined && opts.raw === undefined) usage("give --out <dir> for a dump, --raw <dir> for raw sources, or both");
if (opts.step !== undefined && opts.raw === undefined) usage("--step needs --raw: it chooses the raw sources' step");
const step = opts.step ?? 0;
if (!Number.isInteger(step) || step < 0 || step > RAW_MAX_STEP) usage(`--step must be a whole number from 0 to ${RAW_MAX_STEP}`);
/** `child` is `parent` or lies inside it. */
const within = (child: string, parent: string) => {
  const rel = path.relative(path.resolve(parent), path.resolve(child));
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
};
// Each writer replaces its whole folder: one inside the other would take the other's files with it.
if (opts.out !== undefined && opts.raw !== undefined && (within(opts.out, opts.raw) || within(opts.raw, opts.out)))
  usage("--out and --raw must be separate folders, neither inside the other");

// Ctrl-C removes the folder being written and says what became of it, as the command line does.
exitOnInterrupt(
  (line) => process.stderr.write(`\nsynth: ${line}\n`),
  (signal) => process.exit(128 + constants.signals[signal]),
);

// No top-level await: the tests run this script from a CommonJS bundle (test/support/tree.ts).
async function main(): Promise<void> {
  // Checked before the (long) synthesis; the writers check again right before they write.
  if (opts.out !== undefined) await assertReplaceable({ out: opts.out, option: "--out", kind: "dump" });
  if (opts.raw !== undefined) await assertRawReplaceable(opts.raw);
  const dump = synthesize(opts);
  if (opts.out !== undefined) {
    await writeSynthDump(opts.out, dump, opts.chunk, opts.ndjson ? "ndjson" : "json");
    process.stderr.write(`wrote ${opts.out}: ${dump.accesspoints.length} access points, ${dump.links.length} links\n`);
  }
  if (opts.raw !== undefined) {
    await writeRawFolder(opts.raw, dump, { seed: opts.seed, step });
    const files = Object.values(RAW_FILES).join(", ");
    process.stderr.write(`wrote ${opts.raw}: ${files} of ${dump.accesspoints.length} access points (seed ${opts.seed}, step ${step})\n`);
  }
}

main().catch((err: unknown) => {
  if (!(err instanceof RefusedOutputError)) throw err;
  usage(err.message);
});
