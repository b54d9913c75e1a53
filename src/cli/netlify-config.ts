import { writeFile } from "node:fs/promises";
import type { Command } from "commander";
import { netlifyToml } from "../hosts/netlify.ts";

export function register(program: Command): void {
  program
    .command("netlify-config")
    .description("print the generic Netlify rules (netlify.toml) generated from the route table")
    .option("--write", "write them to ./netlify.toml instead")
    .action(async (opts: { write?: boolean }) => {
      if (opts.write) await writeFile("netlify.toml", netlifyToml());
      else process.stdout.write(netlifyToml());
    });
}
