import { Command, CommanderError } from "commander";
import path from "node:path";
import { SYNTH_MAX_APS, synthesize, writeSynthDump } from "../src/gen/synth.ts";
import { RAW_FILES, assertRawReplaceable, writeRawFolder } from "../src/gen/raw-folder.ts";
import { RAW_MAX_STEP } from "../src/gen/raw.ts";
import { assertReplaceable, RefusedOutputError } from "../src/io/write/ownership.ts";

/** What `npm run synth` does (scripts/synth.ts, whose notes say what): the script without its process. */

const whole = (v: string) => (/^[+-]?\d+$/.test(v.trim()) ? Number.parseInt(v, 10) : Number.NaN);

/** A usage error of the script: said, exit code 2. */
class Usage extends Error {}

/** `child` is `parent` or lies inside it. */
const within = (child: string, parent: string) => {
  const rel = path.relative(path.resolve(parent), path.resolve(child));
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
};

/**
 * The script's run for its arguments (those after its name): its exit code, 0, or 2 for a usage error
 * or a folder it may not replace (said on stderr), commander's own for what commander refuses. What
 * scripts/synth.ts runs; the tests run it in their own process too (test/support/tree.ts command).
 */
export async function runSynth(args: readonly string[]): Promise<number> {
  const program = new Command("synth")
    .exitOverride()
    .configureOutput({ writeOut: (t) => process.stdout.write(t), writeErr: (t) => process.stderr.write(t) })
    .requiredOption("--aps <n>", "number of access points", whole)
    .option("--seed <n>", "random seed", whole, 1)
    .option("--out <dir>", "dump directory to (re)create: absent, empty, or written by synth before")
    .option(
      "--raw <dir>",
      "raw sources folder to (re)create (olsr.txt, wiki.html, ondataservice.db): absent, empty, or written by synth --raw",
    )
    .option("--step <n>", `with --raw: the step of the changing sources, 0 to ${RAW_MAX_STEP} (default 0)`, whole)
    .option("--chunk <n>", "records per file", whole, 5000)
    .option("--ndjson", "write links as NDJSON too (default: JSON arrays)");
  try {
    program.parse([...args], { from: "user" });
    await synth(program.opts<Options>());
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    if (!(err instanceof Usage || err instanceof RefusedOutputError)) throw err;
    process.stderr.write(`synth: ${err.message}\n`);
    return 2;
  }
}

interface Options {
  readonly aps: number;
  readonly seed: number;
  readonly out?: string;
  readonly raw?: string;
  readonly step?: number;
  readonly chunk: number;
  readonly ndjson?: boolean;
}

async function synth(opts: Options): Promise<void> {
  const usage = (message: string): never => {
    throw new Usage(message);
  };
  if (!Number.isInteger(opts.aps) || opts.aps < 0 || opts.aps > SYNTH_MAX_APS)
    usage(`--aps must be a whole number from 0 to ${SYNTH_MAX_APS}`);
  if (!Number.isInteger(opts.seed)) usage("--seed must be a whole number");
  if (!Number.isInteger(opts.chunk) || opts.chunk < 1) usage("--chunk must be a whole number from 1 on");
  if (opts.out === undefined && opts.raw === undefined) usage("give --out <dir> for a dump, --raw <dir> for raw sources, or both");
  if (opts.step !== undefined && opts.raw === undefined) usage("--step needs --raw: it chooses the raw sources' step");
  const step = opts.step ?? 0;
  if (!Number.isInteger(step) || step < 0 || step > RAW_MAX_STEP) usage(`--step must be a whole number from 0 to ${RAW_MAX_STEP}`);
  // Each writer replaces its whole folder: one inside the other would take the other's files with it.
  if (opts.out !== undefined && opts.raw !== undefined && (within(opts.out, opts.raw) || within(opts.raw, opts.out)))
    usage("--out and --raw must be separate folders, neither inside the other");

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
