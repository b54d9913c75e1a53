import { existsSync } from "node:fs";
import type { Command } from "commander";
import { fetchDump, FetchDumpError } from "../io/fetch.ts";
import { RefusedOutputError } from "../io/ownership.ts";
import { log, quietOption, warn } from "./options.ts";

export function register(program: Command): void {
  program
    .command("fetch-dump")
    .description(
      "download a dump archive (.tar.gz), verify it against <url>.sha256 or the SHA256SUMS beside it, unpack it into --out atomically; prints the dump directory",
    )
    .argument("<url>", "archive URL")
    .requiredOption("--out <dir>", "folder to unpack into (replaced only when absent, empty, or written by fetch-dump before)")
    .addOption(quietOption())
    .action(async (url: string, opts: { out: string; quiet?: boolean }) => {
      if (!/^https?:\/\/[^/?#]+/i.test(url)) {
        process.stderr.write(
          `mesh-api: ${url} is not an http(s) URL; give the address of a .tar.gz archive, e.g. https://example.org/dump.tar.gz\n`,
        );
        process.exitCode = 2;
        return;
      }
      const existed = existsSync(opts.out);
      try {
        // The "not verified" warning is printed even with --quiet: it is about the data's integrity.
        const dir = await fetchDump(url, opts.out, { log: (line) => log(opts, line), warn });
        process.stdout.write(dir + "\n");
      } catch (err) {
        // Handled here as well as at the top level, so the exit codes hold whatever main.ts does.
        if (err instanceof RefusedOutputError) {
          process.stderr.write(`mesh-api: ${err.message}\n`);
          process.exitCode = 2;
        } else if (err instanceof FetchDumpError) {
          process.stderr.write(`mesh-api: ${err.message}; nothing was unpacked${existed ? ` and ${opts.out} was left as it was` : ""}\n`);
          process.exitCode = 1;
        } else {
          throw err;
        }
      }
    });
}
