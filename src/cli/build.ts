import { existsSync } from "node:fs";
import type { Command } from "commander";
import { DEFAULTS } from "../core/defaults.ts";
import { build } from "../pipeline.ts";
import { stopped, UsageError } from "./exit.ts";
import { snapshotLine } from "./snapshot.ts";
import { invocation, netlifyTomlRefusal, shellWord } from "./host-config.ts";
import { megabytes, plural, progressLine, seconds, warningCount } from "./format.ts";
import { limitHeapGrowth, loaded } from "./memory.ts";
import {
  allWarningsOption,
  count,
  log,
  mapOf,
  quietOption,
  report,
  siteSettingsOf,
  warn,
  withSiteOptions,
  type SettingsFlags,
} from "./options.ts";

interface BuildOptions extends SettingsFlags {
  data: string;
  out: string;
  extra?: string;
  snapshot?: boolean;
  previous?: string;
  keep: number;
  tiles: string;
  tilesAttribution?: string;
  quiet?: boolean;
  allWarnings?: boolean;
}

export function register(program: Command): void {
  withSiteOptions(
    program
      .command("build")
      .description("validate the dump and write every API response under <out>/api/v1/")
      .option("--data <dir>", "dump directory", DEFAULTS.data)
      .option("--out <dir>", "output directory: absent, empty, or an earlier build (replaced atomically)", DEFAULTS.dist)
      .option("--snapshot", "also write a downloadable snapshot under <out>/snapshots/ (the earlier ones are always kept)")
      .option("--previous <dir-or-url>", "with --snapshot: earlier snapshots to carry forward (default: those in <out>)")
      .option("--keep <n>", "with --snapshot: how many snapshots to keep", count, DEFAULTS.keep),
  )
    .addOption(allWarningsOption())
    .addOption(quietOption())
    .action(async (opts: BuildOptions, command: Command) => {
      const started = performance.now();
      limitHeapGrowth("loading");
      const existed = existsSync(opts.out);
      const progress = opts.quiet
        ? undefined
        : progressLine(process.stderr, ["reading", "writing", ...(opts.snapshot ? (["snapshots"] as const) : [])]);
      try {
        // Options of --snapshot without it would do nothing: said, not ignored.
        const without = [command.getOptionValueSource("keep") === "cli" && "--keep", opts.previous !== undefined && "--previous"].filter(
          Boolean,
        );
        if (!opts.snapshot && without.length > 0)
          throw new UsageError(
            `${without.join(" and ")} ${without.length > 1 ? "are" : "is"} for --snapshot: add --snapshot, or leave ${without.length > 1 ? "them" : "it"} out`,
          );
        const settings = { previous: opts.previous, keep: opts.keep, warn };
        const r = await build({
          data: opts.data,
          out: opts.out,
          extra: opts.extra,
          settings: await siteSettingsOf(opts),
          snapshot: opts.snapshot ? settings : undefined,
          map: mapOf(opts),
          progress: progress?.update,
          loaded,
          // The previous output goes to a detached process once the new one is in place: a rebuild
          // takes no longer than a fresh build (docs/performance.md).
          removeOld: "background",
        });
        progress?.done();
        report(r.problems, r.hostWarnings, opts);
        const s = r.summary;
        const warnings = warningCount(r.problems, r.hostWarnings);
        log(
          opts,
          `built ${opts.out}: ${plural(r.output.files, "file")}, ${megabytes(r.output.bytes)} from ${plural(s.files, "dump file")} ` +
            `(${plural(s.accesspoints, "access point")}, ${plural(s.interfaces, "interface")}, ${plural(s.links, "link")}, ${plural(s.sites, "site")}; ` +
            `taken at ${s.takenAt ?? "unknown"}), ${plural(warnings, "warning")}, in ${seconds(performance.now() - started)}`,
        );
        if (r.snapshot) log(opts, snapshotLine(r.snapshot, opts.data, opts.out));
        // The host configuration depends on the dump, the list default and the folder limit, not on the brand.
        const configure =
          `--data ${shellWord(opts.data)}${opts.defaultStatus ? ` --default-status ${opts.defaultStatus}` : ""}` +
          (opts.folderLimit !== undefined ? ` --folder-limit ${opts.folderLimit}` : "");
        const run = { mesh: invocation(), force: (await netlifyTomlRefusal()) !== undefined };
        for (const host of Object.values(r.hosts)) {
          const line = host.built?.(opts.out, configure, run);
          if (line) log(opts, line);
        }
      } catch (err) {
        progress?.done();
        stopped(err, opts, existed ? `${opts.out} left unchanged` : "nothing written", opts.out);
      }
    });
}
