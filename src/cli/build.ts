import type { Command } from "commander";
import { build } from "../pipeline.ts";
import { count, invalid, log, quietOption, report, warn } from "./options.ts";

interface BuildOptions {
  data: string;
  out: string;
  snapshot?: boolean;
  previous?: string;
  keep: number;
  quiet?: boolean;
}

export function register(program: Command): void {
  program
    .command("build")
    .description("validate the dump and write every API response under <out>/api/v1/")
    .option("--data <dir>", "dump directory", "data")
    .option("--out <dir>", "output directory (replaced atomically)", "dist")
    .option("--snapshot", "also write downloadable snapshots under <out>/snapshots/")
    .option("--previous <dir-or-url>", "with --snapshot: earlier snapshots to carry forward (default: those in <out>)")
    .option("--keep <n>", "with --snapshot: how many snapshots to keep", count, 30)
    .addOption(quietOption())
    .action(async (opts: BuildOptions) => {
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
}
