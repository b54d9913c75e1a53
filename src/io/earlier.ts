import { readFile } from "node:fs/promises";
import path from "node:path";
import type { Earlier } from "../core/outputs/output.ts";
import { OUTPUTS } from "../core/outputs/index.ts";
import type { OutputRecord } from "../core/outputs/output.ts";

/** A file's text, or undefined when it cannot be read: what was before is a help, never a condition. */
const textOf = (file: string) => readFile(file, "utf8").catch(() => undefined);

/**
 * What came before a build, for the outputs that carry state (outputs/output.ts carry): the build it
 * replaces (`before`: the output, or the build a cycle served; none for a first build) and the dump.
 * A path that would leave its folder reads nothing.
 */
export function earlierOf(before: string | undefined, dump: string): Earlier {
  const inside = (root: string, file: string) => {
    const full = path.resolve(root, `.${path.posix.normalize(`/${file}`)}`);
    return full.startsWith(path.resolve(root) + path.sep) ? full : undefined;
  };
  const read = (root: string | undefined, file: string) => {
    const full = root === undefined ? undefined : inside(root, file);
    return full === undefined ? Promise.resolve(undefined) : textOf(full);
  };
  return { buildText: (file) => read(before, file), dumpText: (file) => read(dump, file) };
}

/** What each output carries, by its kind (the model's `carried`). */
export async function carriedBy(earlier: Earlier): Promise<ReadonlyMap<string, unknown>> {
  const carried = new Map<string, unknown>();
  for (const o of OUTPUTS as readonly OutputRecord[]) if (o.carry) carried.set(o.kind, await o.carry(earlier));
  return carried;
}
