import { InputError } from "../core/problems.ts";
import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { copyFile, link, mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import fg from "fast-glob";
import { ArchiveStream, writeArchive, type ArchiveWritten } from "../io/read/archive.ts";
import { exists, replaceFolder } from "../io/write/swap.ts";
import type { DumpSummary } from "../core/model/model.ts";
import { snapshotListing } from "../core/documents/pages.ts";
import {
  API_ARCHIVE_PARTIAL,
  API_SERVED_GLOBS,
  isApiServed,
  isTwin,
  SNAPSHOT_DIR,
  SNAPSHOT_FILES,
  snapshotArchive,
} from "../core/routes.ts";
import { DEFAULTS } from "../core/defaults.ts";

/**
 * Downloadable snapshots under `<dist>/snapshots/`: the validated dump and the API tree as
 * deterministic archives, SHA256SUMS, index.json listing every snapshot kept, and index.html, the
 * same list as a page for people (what `/snapshots/` shows). Earlier snapshots
 * are carried forward from a previous index (a folder or the deployed URL), each archive verified
 * against its recorded size and SHA-256. One snapshot a UTC day: a later one of the same day replaces it.
 */
export interface SnapshotFile {
  readonly file: string;
  readonly kind: "dump" | "api";
  readonly bytes: number;
  readonly sha256: string;
}

export interface SnapshotEntry {
  readonly taken_at: string | null;
  readonly date: string;
  readonly files: readonly SnapshotFile[];
  readonly counts: { readonly accesspoints: number; readonly interfaces: number; readonly links: number; readonly sites: number };
}

export interface SnapshotIndex {
  readonly format: "mesh-api-snapshots/1";
  /** newest first */
  readonly snapshots: readonly SnapshotEntry[];
}

export interface SnapshotOptions {
  /** the dump directory and what validation found in it */
  readonly data: string;
  readonly dumpFiles: readonly string[];
  readonly summary: DumpSummary;
  /** the build output holding `api/`; snapshots go to `<dist>/snapshots/` */
  readonly dist: string;
  /** a folder holding index.json (or the index.json file itself), or its URL */
  readonly previous?: string;
  readonly keep?: number;
  readonly warn?: (line: string) => void;
  /**
   * the API archive as the build wrote it beside the tree, ended (io/read/archive.ts ArchiveStream): moved
   * in, where archiving `dist` reads its files back (640,000 at 40,000 access points, most of the first
   * cycle of a day's time: docs/performance.md); its file must be on the file system of `dist`
   */
  readonly apiArchive?: { readonly file: string } & ArchiveWritten;
}

/** What a snapshot run wrote: the index as published, and the entry it added (not always the newest). */
export interface SnapshotWritten {
  readonly index: SnapshotIndex;
  readonly written: SnapshotEntry;
}

export async function writeSnapshots(options: SnapshotOptions): Promise<SnapshotWritten> {
  const keep = options.keep ?? DEFAULTS.keep;
  const warn = options.warn ?? (() => {});
  const takenAt = options.summary.takenAt;
  const { date, mtime } = snapshotDay(takenAt);
  const target = path.join(options.dist, SNAPSHOT_DIR);
  return replaceFolder(target, async (tmp) => {
    const dump = snapshotArchive("dump", date);
    const api = snapshotArchive("api", date);
    const dumpWritten = await writeArchive(
      path.join(tmp, dump.file),
      { from: options.data, folder: dump.folder, files: options.dumpFiles },
      mtime,
    );
    let apiWritten: ArchiveWritten;
    if (options.apiArchive) {
      await rename(options.apiArchive.file, path.join(tmp, api.file));
      apiWritten = { bytes: options.apiArchive.bytes, sha256: options.apiArchive.sha256 };
    } else {
      // the answers as a client reads them: their gzip twins are the servers' business
      const apiFiles = (await fg([...API_SERVED_GLOBS], { cwd: options.dist, onlyFiles: true, dot: true })).filter((f) => !isTwin(f));
      apiWritten = await writeArchive(path.join(tmp, api.file), { from: options.dist, folder: api.folder, files: apiFiles }, mtime);
    }
    const { accesspoints, interfaces, links, sites } = options.summary;
    const current: SnapshotEntry = {
      taken_at: takenAt,
      date,
      files: [
        { file: dump.file, kind: "dump", bytes: dumpWritten.bytes, sha256: dumpWritten.sha256 },
        { file: api.file, kind: "api", bytes: apiWritten.bytes, sha256: apiWritten.sha256 },
      ],
      counts: { accesspoints, interfaces, links, sites },
    };

    const earlier: SnapshotEntry[] = [];
    const previous = options.previous ?? ((await exists(path.join(target, SNAPSHOT_FILES.index))) ? target : undefined);
    if (previous) {
      const source = await openPrevious(previous);
      for (const entry of source.index.snapshots) {
        if (entry.date === date || earlier.some((e) => e.date === entry.date)) continue;
        if (earlier.length + 1 >= keep) break;
        const ok = await carry(source, entry, tmp).catch((err: Error) => {
          warn(`snapshot ${entry.date} dropped: ${err.message}`);
          return false;
        });
        if (ok) earlier.push(entry);
      }
    }
    const snapshots = [current, ...earlier].sort((a, b) => (a.date < b.date ? 1 : a.date > b.date ? -1 : 0)).slice(0, keep);
    const index: SnapshotIndex = { format: "mesh-api-snapshots/1", snapshots };
    const all = snapshots.flatMap((s) => s.files).sort((a, b) => (a.file < b.file ? -1 : 1));
    await writeFile(path.join(tmp, SNAPSHOT_FILES.sums), all.map((f) => `${f.sha256}  ${f.file}\n`).join(""));
    await writeFile(path.join(tmp, SNAPSHOT_FILES.index), JSON.stringify(index, null, 2) + "\n");
    await writeFile(path.join(tmp, SNAPSHOT_FILES.listing), snapshotListing(index));
    // Archives of snapshots no longer kept are left out of the new folder.
    const keepNames = new Set([...all.map((f) => f.file), SNAPSHOT_FILES.sums, SNAPSHOT_FILES.index, SNAPSHOT_FILES.listing]);
    for (const f of await fg("*", { cwd: tmp, dot: true })) if (!keepNames.has(f)) await rm(path.join(tmp, f));
    return { index, written: current };
  });
}

/**
 * The snapshot's API archive as the build writes the tree (io/write/emit.ts `archive`): in the new tree
 * until the build's finish ends it and writeSnapshots moves it in, named for the dump's day.
 */
export function apiArchiveAsBuilt(takenAt: string | null): {
  readonly takes: (file: string) => boolean;
  open(root: string): ArchiveStream;
} {
  const { date, mtime } = snapshotDay(takenAt);
  const { folder } = snapshotArchive("api", date);
  return { takes: isApiServed, open: (root) => new ArchiveStream(path.join(root, API_ARCHIVE_PARTIAL.slice(1)), folder, mtime) };
}

/** A snapshot's date (the UTC day of the dump's instant) and its archives' mtime. */
function snapshotDay(takenAt: string | null): { readonly date: string; readonly mtime: Date } {
  return {
    date: (takenAt ?? "1970-01-01T00:00:00Z").slice(0, 10),
    mtime: new Date(takenAt ? Date.parse(takenAt.replace(/\.\d+Z$/, "Z")) : 0),
  };
}

/** Streamed: the API archive of a large network is hundreds of MB. */
async function sha256Of(file: string): Promise<string> {
  const hash = createHash("sha256");
  await pipeline(createReadStream(file), hash);
  return hash.digest("hex");
}

interface PreviousSource {
  readonly index: SnapshotIndex;
  fetchTo(file: string, dest: string): Promise<void>;
}

async function openPrevious(where: string): Promise<PreviousSource> {
  if (/^https?:\/\//.test(where)) {
    const indexUrl = where.endsWith(".json") ? where : `${where.replace(/\/?$/, "/")}${SNAPSHOT_FILES.index}`;
    const res = await fetch(indexUrl);
    if (!res.ok) throw new InputError(`previous snapshot index ${indexUrl}: HTTP ${res.status}`);
    const index = parseIndex(await res.text(), indexUrl);
    return {
      index,
      async fetchTo(file, dest) {
        const r = await fetch(new URL(encodeURIComponent(file), indexUrl));
        if (!r.ok || !r.body) throw new InputError(`${file}: HTTP ${r.status}`);
        await pipeline(Readable.fromWeb(r.body as import("node:stream/web").ReadableStream), createWriteStream(dest));
      },
    };
  }
  const dir = where.endsWith(".json") ? path.dirname(where) : where;
  const index = parseIndex(await readFile(path.join(dir, SNAPSHOT_FILES.index), "utf8"), path.join(dir, SNAPSHOT_FILES.index));
  return { index, fetchTo: (file, dest) => linkOrCopy(path.join(dir, file), dest) };
}

/**
 * A build without --snapshot carries the published history of the output it replaces, as it is:
 * a build never loses a snapshot the site served (only `--keep` of a snapshot run drops one).
 */
export async function carrySnapshots(from: string, into: string): Promise<void> {
  const source = path.join(from, SNAPSHOT_DIR);
  const names = await readdir(source).catch(() => undefined);
  if (!names) return;
  await mkdir(path.join(into, SNAPSHOT_DIR));
  for (const name of names.sort()) await linkOrCopy(path.join(source, name), path.join(into, SNAPSHOT_DIR, name));
}

/**
 * Archives never change once written, so the new output may share them with the old one: a hard
 * link costs nothing where a copy of a month of history costs gigabytes. Another file system copies.
 */
async function linkOrCopy(source: string, dest: string): Promise<void> {
  await link(source, dest).catch(() => copyFile(source, dest));
}

function parseIndex(text: string, where: string): SnapshotIndex {
  let index: SnapshotIndex;
  try {
    index = JSON.parse(text) as SnapshotIndex;
  } catch (err) {
    throw new InputError(`${where} is not a snapshot index: ${(err as Error).message}`, { cause: err });
  }
  if (index?.format !== "mesh-api-snapshots/1" || !Array.isArray(index.snapshots)) throw new InputError(`${where} is not a snapshot index`);
  return index;
}

/** Copies or downloads an earlier snapshot's archives and checks them against the index. */
async function carry(source: PreviousSource, entry: SnapshotEntry, dir: string): Promise<boolean> {
  for (const f of entry.files) {
    if (!SNAPSHOT_FILES.archive.test(f.file))
      throw new InputError(`unexpected file name ${JSON.stringify(f.file)} in the previous snapshots' index`);
    const dest = path.join(dir, f.file);
    await source.fetchTo(f.file, dest);
    const sha256 = await sha256Of(dest);
    const bytes = (await stat(dest)).size;
    if (sha256 !== f.sha256 || bytes !== f.bytes) {
      await rm(dest, { force: true });
      throw new InputError(`${f.file} does not match its index entry (sha256 ${sha256}, ${bytes} bytes)`);
    }
  }
  return true;
}
