import type { Command } from "commander";
import { DEFAULTS } from "../core/defaults.ts";
import { snapshot } from "../pipeline.ts";
import { snapshotState } from "../live/state-snapshot.ts";
import type { SnapshotWritten } from "../publish/archives.ts";
import { stopped, UsageError } from "./exit.ts";
import { megabytes, plural } from "./format.ts";
import { count, log, quietOption, warn } from "./options.ts";

/** The line that says what a snapshot wrote: `snapshot` and `build --snapshot` print it alike. */
export function snapshotLine({ index, written }: SnapshotWritten, data: string, dist: string): string {
  return (
    `snapshot ${written.date} of ${data}: ${written.files.map((f) => `${f.file} (${megabytes(f.bytes)})`).join(", ")}; ` +
    `${plural(index.snapshots.length, "snapshot")} kept in ${dist}/snapshots`
  );
}

export function register(program: Command): void {
  program
    .command("snapshot")
    .description(
      "write the validated dump and the API tree as archives under <dist>/snapshots/, with history; with --state, of what a cycle serves",
    )
    .option("--data <dir>", "dump directory the build was made from (default: the one the build in --dist records)")
    .option("--dist <dir>", `build output (default: ${DEFAULTS.dist})`)
    .option("--state <dir>", "a cycle's state folder: snapshot the dump and the build it serves now, into that build")
    .option(
      "--previous <dir-or-url>",
      "earlier snapshots to carry forward: a folder or the deployed index.json URL (default: those in <dist>)",
    )
    .option("--keep <n>", "how many snapshots to keep", count, DEFAULTS.keep)
    .addOption(quietOption())
    .action(async (opts: { data?: string; dist?: string; state?: string; previous?: string; keep: number; quiet?: boolean }) => {
      try {
        if (opts.state !== undefined) {
          const others = (["data", "dist", "previous"] as const).filter((o) => opts[o] !== undefined);
          if (others.length > 0)
            throw new UsageError(
              `--state takes the dump and the build from the cycle's state: leave out ${others.map((o) => `--${o}`).join(", ")}`,
            );
          const { index, written, dist } = await snapshotState({ state: opts.state, keep: opts.keep, warn });
          return log(opts, snapshotLine({ index, written }, `the state ${opts.state}`, dist));
        }
        const dist = opts.dist ?? DEFAULTS.dist;
        const { index, written, data } = await snapshot({ ...opts, dist, warn });
        log(opts, snapshotLine({ index, written }, data, dist));
      } catch (err) {
        stopped(err, opts, "no snapshot written", opts.state ?? opts.dist ?? DEFAULTS.dist);
      }
    });
}
