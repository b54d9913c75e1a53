import type { Command } from "commander";
import { checkDeployment, formatCheck } from "../publish/check.ts";
import { count } from "./options.ts";

export function register(program: Command): void {
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
}
