#!/usr/bin/env node
import { CommanderError } from "commander";
import { RefusedOutputError } from "../io/ownership.ts";
import { limitHeapGrowth } from "./memory.ts";
import { createProgram } from "./program.ts";

/** The command line: a thin shell over the library, one file per command. Exit codes: 0 ok, 1 invalid input, 2 usage error. */

limitHeapGrowth();

try {
  await createProgram().parseAsync();
} catch (err) {
  if (err instanceof CommanderError) {
    process.exitCode = err.exitCode === 0 ? 0 : 2;
  } else if (err instanceof RefusedOutputError) {
    process.stderr.write(`mesh-api: ${err.message}\n`);
    process.exitCode = 2;
  } else {
    process.stderr.write(`mesh-api: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
}
