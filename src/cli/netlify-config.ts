import { writeFile } from "node:fs/promises";
import type { Command } from "commander";
import { InvalidDumpError } from "../core/problems.ts";
import { netlifyToml } from "../hosts/netlify.ts";
import { validate } from "../pipeline.ts";
import { plural } from "./format.ts";
import { invalid, log, quietOption, report } from "./options.ts";

interface NetlifyConfigOptions {
  write?: boolean;
  data?: string;
  quiet?: boolean;
}

export function register(program: Command): void {
  program
    .command("netlify-config")
    .description(
      "print the Netlify rules (netlify.toml) generated from the route table; with --data, the netlify.toml to deploy a build " +
        "of that dump with: the same rules with a literal rule, in place, for each filter value that is not its own file name",
    )
    .option("--data <dir>", "dump directory of the build to deploy (without it: the generic rules of the committed netlify.toml)")
    .option("--write", "write them to ./netlify.toml instead (netlify-cli deploys with ./netlify.toml)")
    .addOption(quietOption())
    .action(async (opts: NetlifyConfigOptions) => {
      let text = netlifyToml();
      if (opts.data !== undefined) {
        const r = await validate({ data: opts.data });
        if (!r.model || !r.netlify) return invalid(new InvalidDumpError(r.problems), opts, "nothing written");
        report([], r.hostWarnings, opts);
        text = r.netlify.config;
        const n = r.netlify;
        log(
          opts,
          `netlify: ${plural(n.configRules, "literal rule")} in netlify.toml, ${n.rules.toLocaleString("en-US")} of them also in the build's _redirects` +
            (n.unreachable.length > 0 ? `; ${plural(n.unreachable.length, "value")} no Netlify rule can hold (see the warnings)` : ""),
        );
      }
      if (opts.write) await writeFile("netlify.toml", text);
      else process.stdout.write(text);
    });
}
