#!/usr/bin/env -S npx tsx
import { writeFile } from "node:fs/promises";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { build, formatProblem, InvalidDumpError, netlifyToml, startPreview, validate, type Problem } from "./index.ts";

/** The command line: a thin shell over the library. Exit codes: 0 ok, 1 invalid input, 2 usage error. */

const program = new Command("mesh-api")
  .description("Build a static copy of the Mesh Network Topology Read API v1 from raw topology dumps")
  .exitOverride()
  .configureOutput({ writeErr: (s) => process.stderr.write(s) });

const quiet = new Option("-q, --quiet", "print nothing but errors");
const log = (opts: { quiet?: boolean }, line: string) => {
  if (!opts.quiet) process.stderr.write(line + "\n");
};
const report = (problems: readonly Problem[], opts: { quiet?: boolean }) => {
  for (const p of problems) if (p.severity === "error" || !opts.quiet) process.stderr.write(formatProblem(p) + "\n");
};

program
  .command("build")
  .description("validate the dump and write every API response under <out>/api/v1/")
  .option("--data <dir>", "dump directory", "data")
  .option("--out <dir>", "output directory (replaced atomically)", "dist")
  .addOption(quiet)
  .action(async (opts: { data: string; out: string; quiet?: boolean }) => {
    const started = performance.now();
    try {
      const r = await build(opts);
      report(r.problems, opts);
      const s = r.summary;
      log(opts, `built ${opts.out}: ${r.output.files} files, ${r.output.bytes} bytes from ${s.files} dump files ` +
        `(${s.accesspoints} access points, ${s.interfaces} interfaces, ${s.links} links, ${s.sites} sites; taken at ${s.takenAt ?? "unknown"}) ` +
        `in ${((performance.now() - started) / 1000).toFixed(2)} s`);
      log(opts, `netlify: ${r.netlify.rules} literal rules in ${opts.out}/_redirects`);
      for (const v of r.netlify.inexpressible) {
        log(opts, `warning: ${v.param}=${JSON.stringify(v.value)} cannot be written as a Netlify _redirects rule (whitespace, "=" or a leading ":"); Netlify answers 404 for it, the preview serves it`);
      }
    } catch (err) {
      if (!(err instanceof InvalidDumpError)) throw err;
      report(err.problems, opts);
      process.stderr.write(`${err.message}; ${opts.out} left unchanged\n`);
      process.exitCode = 1;
    }
  });

program
  .command("validate")
  .description("check the dump and report every problem, without writing anything")
  .option("--data <dir>", "dump directory", "data")
  .addOption(quiet)
  .action(async (opts: { data: string; quiet?: boolean }) => {
    const started = performance.now();
    const r = await validate(opts);
    report(r.problems, opts);
    const errors = r.problems.filter((p) => p.severity === "error").length;
    const warnings = r.problems.length - errors;
    const s = r.summary;
    if (errors > 0) {
      process.stderr.write(`invalid: ${errors} error${errors === 1 ? "" : "s"}, ${warnings} warning${warnings === 1 ? "" : "s"} in ${s.files} files\n`);
      process.exitCode = 1;
      return;
    }
    log(opts, `valid: ${s.files} files, ${s.accesspoints} access points, ${s.interfaces} interfaces, ${s.links} links, ` +
      `${s.sites} sites, ${warnings} warnings (${((performance.now() - started) / 1000).toFixed(2)} s)`);
  });

program
  .command("preview")
  .description("serve the build like the static host does, on a local address")
  .option("--dir <dir>", "build output to serve", "dist")
  .option("--port <port>", "port (0 picks a free one)", port, 8080)
  .option("--host <host>", "address to listen on", "127.0.0.1")
  .addOption(quiet)
  .action(async (opts: { dir: string; port: number; host: string; quiet?: boolean }) => {
    process.noDeprecation = true; // http-server's router touches OutgoingMessage._headers on every request
    const preview = await startPreview({ ...opts, log: opts.quiet ? undefined : (line) => process.stderr.write(line + "\n") });
    process.stdout.write(`serving ${opts.dir} at ${preview.url}/api/v1/\n`);
    const stop = () => void preview.close().then(() => process.exit(0));
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });

program
  .command("netlify-config")
  .description("print the generic Netlify rules (netlify.toml) generated from the route table")
  .option("--write", "write them to ./netlify.toml instead")
  .action(async (opts: { write?: boolean }) => {
    if (opts.write) await writeFile("netlify.toml", netlifyToml());
    else process.stdout.write(netlifyToml());
  });

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError("a port is an integer from 0 to 65535");
  return n;
}

try {
  await program.parseAsync();
} catch (err) {
  if (err instanceof CommanderError) {
    process.exitCode = err.exitCode === 0 ? 0 : 2;
  } else {
    process.stderr.write(`mesh-api: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
}
