import { existsSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { deferred } from "../../core/body.ts";
import { readDumpFile } from "./dump-history.ts";
import { OUTPUTS } from "../../core/outputs/index.ts";
import type { Earlier, OutputBase } from "../../core/outputs/output.ts";

/** A path inside `root`, or undefined for one that would leave it. */
function inside(root: string, file: string): string | undefined {
  const full = path.resolve(root, `.${path.posix.normalize(`/${file}`)}`);
  return full.startsWith(path.resolve(root) + path.sep) ? full : undefined;
}

/**
 * What came before a build, for the outputs that carry state (outputs/output.ts carry): the build it
 * replaces (`before`: the output, or the build a cycle served; none for a first build) and the dump.
 * The build before is a help, never a condition: what cannot be read of it is not there. The dump's
 * files are the dump's: only an absent one is none.
 */
export function earlierOf(before: string | undefined, dump: string): Earlier {
  const ofBuild = (file: string) => (before === undefined ? undefined : inside(before, file));
  return {
    buildText: async (file) => {
      const full = ofBuild(file);
      return full === undefined ? undefined : readFile(full, "utf8").catch(() => undefined);
    },
    buildBody: (file) => {
      const full = ofBuild(file);
      if (full === undefined || !existsSync(full)) return undefined;
      // Read as it is written, so that a month of the history's graphs is never held at once; as bytes, which
      // are what is written (and hashed against the recycled tree's copy): at 40,000 access points a cycle carries
      // a month of graphs and diffs, 1.1 GB, that a text would decode and encode again (docs/performance.md).
      return deferred(() => readFileSync(full));
    },
    dumpText: async (file) => {
      const full = inside(dump, file);
      if (full === undefined) return undefined;
      return readDumpFile(full);
    },
  };
}

/** What each output carries, by its kind (the model's `carried`), each with its own settings. */
export async function carriedBy(earlier: Earlier, outputs: Readonly<Record<string, unknown>>): Promise<ReadonlyMap<string, unknown>> {
  const carried = new Map<string, unknown>();
  for (const o of OUTPUTS as readonly OutputBase[]) if (o.carry) carried.set(o.kind, await o.carry(earlier, outputs[o.kind] ?? null));
  return carried;
}
