import { groupBy } from "../model/collections.ts";
import { FILES } from "./files.ts";

/**
 * Where a file of the route table lies in the build: at its path, or, in a folder holding more
 * entries than the build's folder limit (settings.ts folderLimit: a static host may refuse a deploy with
 * too many files in one folder, docs/hosting.md "Large folders"), one level down in a shard named after
 * the end of its key. Only the folders of keyed entries split: a fixed folder followed by a
 * `:placeholder` folder in a FILES template (the details `/api/v1/link/:key/`, the filter values
 * `…/_q/if_hwaddress/:mac/`), whose other children (`_q`, `index.json`) stay where they are. The shard is `~` and the key's last two
 * characters (the whole key when it has one): a function every host can compute from the key with a
 * regular expression, never "." or ".." or hidden, never one of the fixed children.
 */

/** What the route table's templates say of the folders of keyed entries: folder -> its fixed children. */
export const KEYED_FOLDERS: ReadonlyMap<string, ReadonlySet<string>> = (() => {
  const folders = new Map<string, Set<string>>();
  const templates = Object.values<string>(FILES);
  for (const template of templates) {
    const segments = template.split("/");
    const at = segments.findIndex((s) => s.startsWith(":"));
    // A placeholder that is a file name (the map's assets) names no folder; a fixed folder only.
    if (at < 1 || at === segments.length - 1) continue;
    folders.set(`${segments.slice(0, at).join("/")}/`, new Set());
  }
  for (const template of templates)
    for (const [folder, fixed] of folders)
      if (template.startsWith(folder)) {
        const next = template.slice(folder.length).split("/")[0];
        if (!next.startsWith(":")) fixed.add(next);
      }
  return folders;
})();

/** The mark of a shard's name: a key character (names.ts), yet never a whole fixed child's start. */
export const SHARD_MARK = "~";

/** The shard folder of a key: its mark and the key's last two characters. */
export const shardOf = (key: string): string => `${SHARD_MARK}${key.slice(-2)}`;

/** A build's layout: its split folders (KEYED_FOLDERS' names), sorted. */
export interface Layout {
  readonly split: readonly string[];
}

export const FLAT: Layout = { split: [] };

/** The first segment of a path below a keyed folder, if it is a key (not one of the folder's fixed entries). */
function keyedEntry(path: string, folder: string): string | undefined {
  if (!path.startsWith(folder)) return undefined;
  const end = path.indexOf("/", folder.length);
  if (end < 0) return undefined;
  const key = path.slice(folder.length, end);
  return KEYED_FOLDERS.get(folder)!.has(key) ? undefined : key;
}

/** Where a build of this layout writes the file a flat build writes at `path`. */
export function placeFile(path: string, layout: Layout): string {
  for (const folder of layout.split) {
    const key = keyedEntry(path, folder);
    if (key !== undefined) return `${folder}${shardOf(key)}/${path.slice(folder.length)}`;
  }
  return path;
}

/** The flat path of a file placed in a build of this layout (placeFile back). */
export function flatFile(path: string, layout: Layout): string {
  for (const folder of layout.split) {
    const shard = keyedEntry(path, folder);
    if (shard === undefined || !shard.startsWith(SHARD_MARK)) continue;
    const rest = path.slice(folder.length + shard.length + 1);
    const key = keyedEntry(folder + rest, folder);
    if (key !== undefined && shardOf(key) === shard) return folder + rest;
  }
  return path;
}

/** The folders to split, and the entries of every folder that still holds more than the limit after the split. */
export interface LayoutPlan {
  readonly layout: Layout;
  readonly over: readonly { readonly folder: string; readonly entries: number }[];
}

/**
 * The layout of a build from its flat paths: a keyed folder splits when its entries (its keys and
 * fixed children) exceed the limit; a shard or fixed folder that still does is reported.
 */
export function layoutOf(paths: Iterable<string>, limit: number): LayoutPlan {
  const entries = new Map<string, Set<string>>([...KEYED_FOLDERS.keys()].map((f) => [f, new Set<string>()]));
  // Keys per would-be shard, counted as keys first appear: the paths are not kept.
  const shards = new Map<string, number>();
  // The folders by their first `least` characters: a path is compared with those it can lie in alone
  // (a build has hundreds of thousands of paths; each against all 19 folders was 0.7 s of a cycle at 40,000 access points).
  const least = Math.min(...[...entries.keys()].map((f) => f.length));
  const byStart = groupBy(entries, ([folder]) => folder.slice(0, least));
  for (const path of paths)
    for (const [folder, names] of byStart.get(path.slice(0, least)) ?? []) {
      if (!path.startsWith(folder)) continue;
      const end = path.indexOf("/", folder.length);
      const name = path.slice(folder.length, end < 0 ? undefined : end);
      if (names.has(name)) continue;
      names.add(name);
      if (end >= 0 && !KEYED_FOLDERS.get(folder)!.has(name)) {
        const shard = `${folder}${shardOf(name)}/`;
        shards.set(shard, (shards.get(shard) ?? 0) + 1);
      }
    }
  const split = [...entries].filter(([, names]) => names.size > limit).map(([folder]) => folder);
  const over = [...shards]
    .filter(([shard, count]) => count > limit && split.some((f) => shard.startsWith(f) && !shard.slice(f.length, -1).includes("/")))
    .map(([folder, count]) => ({ folder, entries: count }));
  return { layout: { split: split.sort() }, over: over.sort((a, b) => (a.folder < b.folder ? -1 : 1)) };
}
