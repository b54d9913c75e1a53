import type { Command } from "commander";
import { validate } from "../pipeline.ts";
import { log, quietOption, report } from "./options.ts";

export function register(program: Command): void {
  program
    .command("validate")
    .description("check the dump and report every problem, without writing anything")
    .option("--data <dir>", "dump directory", "data")
    .addOption(quietOption())
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
}
