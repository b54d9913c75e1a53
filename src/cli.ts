#!/usr/bin/env -S npx tsx
import { writeFile } from "node:fs/promises";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { checkDeployment, formatCheck } from "./check.ts";
import { fetchDump } from "./fetch.ts";
import { build, formatProblem, InvalidDumpError, netlifyToml, snapshot, startPreview, validate, type Problem } from "./index.ts";
import { limitHeapGrowth } from "./memory.ts";

/** The command line: a thin shell over the library. Exit codes: 0 ok, 1 invalid input, 2 usage error. */

limitHeapGrowth();

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
const warn = (line: string) => void process.stderr.write(`warning: ${line}\n`);
/** Invalid input: list every problem, say what was left alone, exit 1. Anything else is not ours to explain. */
const invalid = (err: unknown, opts: { quiet?: boolean }, consequence: string) => {
  if (!(err instanceof InvalidDumpError)) throw err;
  report(err.problems, opts);
  process.stderr.write(`${err.message}; ${consequence}\n`);
  process.exitCode = 1;
};

program
  .command("build")
  .description("validate the dump and write every API response under <out>/api/v1/")
  .option("--data <dir>", "dump directory", "data")
  .option("--out <dir>", "output directory (replaced atomically)", "dist")
  .option("--snapshot", "also write downloadable snapshots under <out>/snapshots/")
  .option("--previous <dir-or-url>", "with --snapshot: earlier snapshots to carry forward (default: those in <out>)")
  .option("--keep <n>", "with --snapshot: how many snapshots to keep", count, 30)
  .addOption(quiet)
  .action(async (opts: { data: string; out: string; snapshot?: boolean; previous?: string; keep: number; quiet?: boolean }) => {
    const started = performance.now();
    try {
      const settings = { previous: opts.previous, keep: opts.keep, warn };
      const r = await build({ data: opts.data, out: opts.out, snapshot: opts.snapshot ? settings : undefined });
      report(r.problems, opts);
      const s = r.summary;
      log(opts, `built ${opts.out}: ${r.output.files} files, ${r.output.bytes} bytes from ${s.files} dump files ` +
        `(${s.accesspoints} access points, ${s.interfaces} interfaces, ${s.links} links, ${s.sites} sites; taken at ${s.takenAt ?? "unknown"}) ` +
        `in ${((performance.now() - started) / 1000).toFixed(2)} s`);
      log(opts, `netlify: ${r.netlify.rules} literal rules in ${opts.out}/_redirects`);
      for (const v of r.netlify.inexpressible) {
        if (!opts.quiet) warn(`${v.param}=${JSON.stringify(v.value)} cannot be written as a Netlify _redirects rule (whitespace, "=" or a leading ":"); Netlify answers 404 for it, the preview serves it`);
      }
    } catch (err) {
      invalid(err, opts, `${opts.out} left unchanged`);
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
  .command("snapshot")
  .description("write the validated dump and the API tree as archives under <dist>/snapshots/, with history")
  .option("--data <dir>", "dump directory the build was made from", "data")
  .option("--dist <dir>", "build output", "dist")
  .option("--previous <dir-or-url>", "earlier snapshots to carry forward: a folder or the deployed index.json URL (default: those in <dist>)")
  .option("--keep <n>", "how many snapshots to keep", count, 30)
  .addOption(quiet)
  .action(async (opts: { data: string; dist: string; previous?: string; keep: number; quiet?: boolean }) => {
    try {
      const index = await snapshot({ ...opts, warn });
      const s = index.snapshots[0];
      log(opts, `snapshot ${s.date}: ${s.files.map((f) => `${f.file} (${f.bytes} bytes)`).join(", ")}; ${index.snapshots.length} snapshots kept in ${opts.dist}/snapshots`);
    } catch (err) {
      invalid(err, opts, "no snapshot written");
    }
  });

program
  .command("check")
  .description("compare a deployment with the local build: every list and filter route, and a sample of details")
  .argument("<base-url>", "where the build is served, e.g. https://mesh.example.org")
  .option("--dist <dir>", "the local build", "dist")
  .option("--sample <n>", "detail routes to request, spread over all kinds", count, 200)
  .option("--skip-header <name...>", "headers the host cannot set (e.g. Allow on Netlify)")
  .action(async (base: string, opts: { dist: string; sample: number; skipHeader?: string[] }) => {
    const tty = process.stderr.isTTY;
    const result = await checkDeployment({
      base,
      dist: opts.dist,
      sample: opts.sample,
      skipHeaders: opts.skipHeader,
      progress: tty ? (done, total) => process.stderr.write(`\r${done}/${total} requests`) : undefined,
    });
    if (tty) process.stderr.write("\n");
    process.stdout.write(formatCheck(result));
    if (result.problems.length > 0 || result.rows.length === 0) process.exitCode = 1;
  });

program
  .command("fetch-dump")
  .description("download a dump archive (.tar.gz), verify it against <url>.sha256 when present, unpack it; prints the dump directory")
  .argument("<url>", "archive URL")
  .requiredOption("--out <dir>", "folder to unpack into (replaced)")
  .addOption(quiet)
  .action(async (url: string, opts: { out: string; quiet?: boolean }) => {
    process.stdout.write((await fetchDump(url, opts.out, (line) => log(opts, line))) + "\n");
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

function count(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("a count is a positive integer");
  return n;
}

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
