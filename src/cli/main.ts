#!/usr/bin/env node
import { ended } from "./exit.ts";
import { limitHeapGrowth } from "./memory.ts";
import { createProgram } from "./program.ts";

/** The command line: a thin shell over the library, one file per command; how a run ends is decided in exit.ts. */

limitHeapGrowth();

try {
  await createProgram().parseAsync();
} catch (err) {
  process.exitCode = ended(err);
}
