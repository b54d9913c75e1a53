#!/usr/bin/env node
import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { UsageError } from "../core/problems.ts";
import { exitOnInterrupt } from "../io/interrupt.ts";
import { RefusedOutputError } from "../io/ownership.ts";
import { register as build } from "./build.ts";
import { register as check } from "./check.ts";
import { register as fetchDump } from "./fetch-dump.ts";
import { register as importCommand } from "./import.ts";
import { limitHeapGrowth } from "./memory.ts";
import { register as netlifyConfig } from "./netlify-config.ts";
import { register as preview } from "./preview.ts";
import { register as snapshot } from "./snapshot.ts";
import { register as validate } from "./validate.ts";

/** The command line: a thin shell over the library, one file per command. Exit codes: 0 ok, 1 invalid input, 2 usage error. */

limitHeapGrowth();
exitOnInterrupt((line) => process.stderr.write(`mesh-api: ${line}\n`));

// Two levels below the package root both as source (src/cli/) and compiled (lib/cli/).
const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };

const program = new Command("mesh-api")
  .description("Build a static copy of the Mesh Network Topology Read API v1 from raw topology dumps")
  .version(version, "-V, --version", "print the version")
  .exitOverride()
  .configureOutput({ writeErr: (s) => process.stderr.write(s) });

for (const register of [build, validate, snapshot, check, fetchDump, importCommand, preview, netlifyConfig]) register(program);

try {
  await program.parseAsync();
} catch (err) {
  if (err instanceof CommanderError) {
    process.exitCode = err.exitCode === 0 ? 0 : 2;
  } else if (err instanceof RefusedOutputError || err instanceof UsageError) {
    process.stderr.write(`mesh-api: ${err.message}\n`);
    process.exitCode = 2;
  } else {
    process.stderr.write(`mesh-api: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
}
