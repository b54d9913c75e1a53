import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { readFile, realpath, writeFile } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import fg from "fast-glob";
import { API, FILES, SNAPSHOT_DIR, SNAPSHOT_FILES, templateOf, twinnedFile } from "../../core/routes.ts";

/**
 * What a build records about itself in its output (FILES.buildRecord, hidden like the marker): the
 * dump it was made from, so a later `snapshot` archives that dump and no other, and the files it
 * copied from `--extra`, so the next build can tell the operator's own files from its own before it
 * replaces them. Every other file a build writes is named by the route table (FILES), and the API's
 * own folder is the build's alone: a record needs no list of the (up to a million) files it wrote.
 */
export interface BuildRecord {
  readonly format: typeof FORMAT;
  /** the dump folder (its real path) and the SHA-256 of its files' names and contents */
  readonly dump: { readonly path: string; readonly sha256: string };
  /** the files copied from `--extra`, relative to the output, sorted */
  readonly extra: readonly string[];
}

const FORMAT = "mesh-api-build/1";
const RECORD = FILES.buildRecord.slice(1);

/**
 * One digest for a dump: its files in sorted order, each by name and content. The same files anywhere
 * give the same digest; a changed, added or removed file another.
 */
export async function dumpDigest(data: string, files: readonly string[]): Promise<string> {
  const all = createHash("sha256");
  for (const file of [...files].sort()) {
    const one = createHash("sha256");
    await pipeline(createReadStream(path.join(data, file)), one);
    all.update(`${one.digest("hex")}  ${file}\n`);
  }
  return all.digest("hex");
}

/** The dump's entry of a record: its real path, so a record compares folders the way ownership does. */
export async function dumpEntry(data: string, files: readonly string[]): Promise<BuildRecord["dump"]> {
  return { path: await realpath(data).catch(() => path.resolve(data)), sha256: await dumpDigest(data, files) };
}

export async function writeBuildRecord(dir: string, dump: BuildRecord["dump"], extra: readonly string[]): Promise<void> {
  const record: BuildRecord = { format: FORMAT, dump, extra: [...extra].sort() };
  await writeFile(path.join(dir, RECORD), JSON.stringify(record) + "\n");
}

/** The record of the build in `dir`, or undefined for a folder without one (a build of an earlier release). */
export async function readBuildRecord(dir: string): Promise<BuildRecord | undefined> {
  const text = await readFile(path.join(dir, RECORD), "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const record = JSON.parse(text) as Partial<BuildRecord>;
    if (record.format === FORMAT && typeof record.dump?.sha256 === "string" && Array.isArray(record.extra)) return record as BuildRecord;
  } catch {
    // an unreadable record is no record
  }
  return undefined;
}

/**
 * Files in an earlier build that this tool did not write: outside the API's folder (the build's
 * alone, not even walked), those the route table does not name and the record does not list as
 * copied from `--extra`; in the snapshots folder, anything but the snapshot files. A new build would
 * drop them, so it refuses instead.
 */
export async function foreignFiles(dir: string): Promise<string[]> {
  const extra = new Set((await readBuildRecord(dir))?.extra ?? []);
  const files = await fg("**", { cwd: dir, dot: true, onlyFiles: true, followSymbolicLinks: false, ignore: [`${API.slice(1)}/**`] });
  return files
    .filter((f) => {
      if (f.startsWith(`${SNAPSHOT_DIR}/`)) return !isSnapshotFile(f.slice(SNAPSHOT_DIR.length + 1));
      // a gzip twin is the build's when the file it compresses is (core/routes/compression.ts)
      return templateOf(`/${twinnedFile(f)}`) === undefined && !extra.has(f);
    })
    .sort();
}

function isSnapshotFile(name: string): boolean {
  const { archive, ...named } = SNAPSHOT_FILES;
  return archive.test(name) || (Object.values(named) as string[]).includes(name);
}
