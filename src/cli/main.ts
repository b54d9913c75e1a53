#!/usr/bin/env node
import { interruptedCode } from "./exit.ts";
import { exitOnInterrupt } from "../io/write/interrupt.ts";
import { interruptLine } from "./format.ts";
import { limitHeapGrowth } from "./memory.ts";
import { runCommandLine } from "./program.ts";

/** The command line: a thin shell over the library, one file per command; how a run ends is decided in exit.ts. */

limitHeapGrowth();
exitOnInterrupt(
  (line) => process.stderr.write(interruptLine(line, process.stderr.isTTY)),
  (signal) => process.exit(interruptedCode(signal)),
);

// No top-level await: the tests run the command line from a CommonJS bundle (test/support/tree.ts).
void runCommandLine(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
