import { DEFAULTS } from "../core/defaults.ts";
import type { Command } from "commander";
import { validate } from "../pipeline.ts";
import { ReportedFailure } from "./exit.ts";
import { plural, progressLine, seconds, warningCount } from "./format.ts";
import { allWarningsOption, log, quietOption, report, type ReportOptions } from "./options.ts";

export function register(program: Command): void {
  program
    .command("validate")
    .description("check the dump and report every problem, without writing anything")
    .option("--data <dir>", "dump directory", DEFAULTS.data)
    .addOption(allWarningsOption())
    .addOption(quietOption())
    .action(async (opts: { data: string } & ReportOptions) => {
      const started = performance.now();
      const progress = opts.quiet ? undefined : progressLine(process.stderr, ["reading"]);
      const r = await validate({ data: opts.data, progress: progress?.update });
      progress?.done();
      report(r.problems, r.hostWarnings, opts);
      const errors = r.problems.filter((p) => p.severity === "error").length;
      const warnings = warningCount(r.problems, r.hostWarnings);
      const s = r.summary;
      if (errors > 0) {
        process.stderr.write(`invalid: ${plural(errors, "error")}, ${plural(warnings, "warning")} in ${plural(s.files, "file")}\n`);
        throw new ReportedFailure();
      }
      log(
        opts,
        `valid: ${plural(s.files, "file")}, ${plural(s.accesspoints, "access point")}, ${plural(s.interfaces, "interface")}, ` +
          `${plural(s.links, "link")}, ${plural(s.sites, "site")}, ${plural(warnings, "warning")} (${seconds(performance.now() - started)})`,
      );
    });
}
