import type { Command } from "commander";
import { fetchDump } from "../io/fetch.ts";
import { log, quietOption } from "./options.ts";

export function register(program: Command): void {
  program
    .command("fetch-dump")
    .description("download a dump archive (.tar.gz), verify it against <url>.sha256 when present, unpack it; prints the dump directory")
    .argument("<url>", "archive URL")
    .requiredOption("--out <dir>", "folder to unpack into (replaced)")
    .addOption(quietOption())
    .action(async (url: string, opts: { out: string; quiet?: boolean }) => {
      process.stdout.write((await fetchDump(url, opts.out, (line) => log(opts, line))) + "\n");
    });
}
