import { constants } from "node:os";
import { exitOnInterrupt } from "../src/io/write/interrupt.ts";
import { runSynth } from "./synth-command.ts";

/**
 * npm run synth -- --aps N [--seed S] [--out DIR] [--raw DIR [--step K]]
 *
 * `--out` writes the network as a dump; `--raw` writes its raw sources (olsr.txt, wiki.html,
 * ondataservice.db) for `mesh-api import opennet` and `mesh-api cycle`, at step K of a changing day
 * (src/gen/raw.ts). Each folder must be absent, empty or one this script wrote before, as that
 * kind (it carries the marker file); anything else is refused before any work, with exit code 2, and
 * left as it was.
 */

// Ctrl-C removes the folder being written and says what became of it, as the command line does.
exitOnInterrupt(
  (line) => process.stderr.write(`\nsynth: ${line}\n`),
  (signal) => process.exit(128 + constants.signals[signal]),
);

// No top-level await: the tests run this script from a CommonJS bundle (test/support/tree.ts).
void runSynth(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
