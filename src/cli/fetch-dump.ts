import { existsSync } from "node:fs";
import type { Command } from "commander";
import { fetchDump } from "../io/fetch.ts";
import { stopped } from "./exit.ts";
import { log, neededOption, quietOption, warn } from "./options.ts";

export function register(program: Command): void {
  program
    .command("fetch-dump")
    .description(
      "download a dump archive (.tar.gz), verify it against <url>.sha256 or the SHA256SUMS beside it, and write the dump it holds (at its top or in its single top folder) at --out atomically, so that build --data <that folder> reads it; prints the folder",
    )
    .argument("<url>", "archive URL")
    .addOption(
      neededOption("--out <dir>", "the dump folder to write (replaced only when absent, empty, or a dump written by mesh-api before)"),
    )
    .addOption(quietOption())
    .action(async (url: string, opts: { out: string; quiet?: boolean }) => {
      const existed = existsSync(opts.out);
      try {
        // The "not verified" warning is printed even with --quiet: it is about the data's integrity.
        const dir = await fetchDump(url, opts.out, { log: (line) => log(opts, line), warn });
        process.stdout.write(dir + "\n");
      } catch (err) {
        stopped(err, opts, `nothing was unpacked${existed ? ` and ${opts.out} was left as it was` : ""}`);
      }
    });
}
