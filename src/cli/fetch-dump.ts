import { existsSync } from "node:fs";
import type { Command } from "commander";
import { fetchDump } from "../io/read/fetch.ts";
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
    .option(
      "--allow-unverified",
      "unpack an archive published without <url>.sha256 or SHA256SUMS beside it (with a warning); by default it is refused",
    )
    .addOption(quietOption())
    .action(async (url: string, opts: { out: string; quiet?: boolean; allowUnverified?: boolean }) => {
      const existed = existsSync(opts.out);
      try {
        // The "not verified" warning is printed even with --quiet: it is about the data's integrity.
        const dir = await fetchDump(url, opts.out, { log: (line) => log(opts, line), warn, allowUnverified: opts.allowUnverified });
        process.stdout.write(dir + "\n");
      } catch (err) {
        stopped(err, opts, `nothing was unpacked${existed ? ` and ${opts.out} was left as it was` : ""}`, opts.out);
      }
    });
}
