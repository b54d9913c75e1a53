import type { Command } from "commander";
import { DEFAULTS } from "../core/defaults.ts";
import { owned } from "../io/write/ownership.ts";
import { checkDeployment, formatCheck, parseBaseUrl } from "../publish/deployment.ts";
import { ReportedFailure, UsageError } from "./exit.ts";
import { count } from "./options.ts";

/**
 * `mesh-api check`: exit 0 when every route came back identical, 1 when one did not or the host could
 * not be reached (said once, with the cause), 2 for a base URL that is not the bare site.
 */
export function register(program: Command): void {
  program
    .command("check")
    .description("compare a deployment with the local build: every list and filter route, and a sample of details")
    .argument("<base-url>", "where the build is served, http(s)://host[:port], e.g. https://mesh.example.org")
    .option("--dist <dir>", "the local build", DEFAULTS.dist)
    .option("--sample <n>", "detail routes to request, spread over all kinds", count, DEFAULTS.sample)
    .option("--skip-header <name...>", "headers the host cannot set (e.g. Allow on Netlify)")
    .action(async (given: string, opts: { dist: string; sample: number; skipHeader?: string[] }) => {
      const { base, note } = parseBaseUrl(given);
      if (note) process.stderr.write(`note: ${note}\n`);
      // Without a local build there is nothing to compare with: say so, instead of an empty table.
      if ((await owned(opts.dist).catch(() => undefined)) !== "build") {
        throw new UsageError(`${opts.dist} holds no build of mesh-api to compare with; run build first, or name it with --dist`);
      }
      // Progress only for a person watching; a log or a pipe gets the result alone.
      const tty = process.stderr.isTTY === true;
      let shown = false;
      let result;
      try {
        result = await checkDeployment({
          base,
          dist: opts.dist,
          sample: opts.sample,
          skipHeaders: opts.skipHeader,
          progress: tty ? (done, total) => ((shown = true), process.stderr.write(`\r${done}/${total} requests`)) : undefined,
        });
      } finally {
        if (shown) process.stderr.write("\n");
      }
      process.stdout.write(formatCheck(result));
      if (result.stopped) {
        const { cause, answered, total } = result.stopped;
        process.stderr.write(
          `mesh-api: cannot reach ${base} any more: ${cause}; stopped after ${answered} of ${total} requests, ${total - answered} not made\n`,
        );
      }
      if (result.problems.length > 0 || result.rows.length === 0 || result.stopped) throw new ReportedFailure();
    });
}
