import type { Command } from "commander";
import { netlify } from "../hosts/netlify.ts";
import { configure, NETLIFY_TOML, type ConfigFlags } from "./host-config.ts";
import { allWarningsOption, defaultStatusOption, folderLimitOption, quietOption } from "./options.ts";

/** Where netlify-cli reads its configuration: the folder it runs in. */

/** `host-config netlify`, under the name it had first, writing where netlify-cli reads. */
export function register(program: Command): void {
  program
    .command("netlify-config")
    .description(
      "print the Netlify rules (netlify.toml) generated from the route table; with --data, the netlify.toml to deploy a build " +
        "of that dump with: the same rules with a literal rule, in place, for each filter value that is not its own file name",
    )
    .option("--data <dir>", "dump directory of the build to deploy (without it: the generic rules of the committed netlify.toml)")
    .addOption(defaultStatusOption())
    .addOption(folderLimitOption())
    .option(
      "--write",
      "write them to ./netlify.toml instead (netlify-cli deploys with ./netlify.toml); it replaces a netlify.toml it wrote, never the committed generic rules with a dump's, nor a file of yours",
    )
    .option("--force", "with --write: replace ./netlify.toml whatever it holds")
    .addOption(allWarningsOption())
    .addOption(quietOption())
    .action((opts: ConfigFlags & { write?: boolean }) => configure(netlify, opts, opts.write ? NETLIFY_TOML : undefined));
}
