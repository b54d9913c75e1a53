import { createWriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { Transform, type Readable } from "node:stream";
import { createGunzip, createGzip } from "node:zlib";
import { createRequire } from "node:module";
import { TarWriter } from "./tar.ts";

// required when an archive is read, not when this module is imported by every command
const tarStream = () => createRequire(import.meta.url)("tar-stream") as typeof import("tar-stream");

/**
 * Deterministic .tar.gz archives (written by tar.ts, read with tar-stream): entries sorted, fixed
 * modes, owner root/0, every mtime the snapshot's taken_at, and a gzip header without name or time
 * (and "unknown" as the OS, so the bytes do not depend on the platform that packed them).
 *
 * What an archive holds: the files `files` (relative paths with "/") of the folder `from`, each named
 * `<folder>/<file>` inside it. The names are made as each file is packed, not held beside the paths:
 * at 40,000 access points the API archive has 640,000 files.
 */
export interface ArchiveFiles {
  readonly from: string;
  /** the archive's top folder */
  readonly folder: string;
  readonly files: readonly string[];
}

/**
 * zlib's default level: 9 made the API archive of a 10,000-access-point build 9 % smaller (15.7 MB
 * against 17.1 MB) and took 2.7 times as long (11.3 s against 4.1 s for its 480 MB of tar), on the
 * first cycle of every day (docs/performance.md).
 */
const LEVEL = 6;
/**
 * The tar stream goes to the compressor in chunks of a MiB, and the compressor's output buffer holds
 * what it makes of one: each chunk is one task of zlib's pool. With zlib's 16 KiB output buffer, a
 * chunk took several round trips between the pool and the main thread, and each waited for the main
 * thread to finish reading its next files (docs/performance.md).
 */
const CHUNK = 2 ** 20;

export async function writeArchive(file: string, entries: ArchiveFiles, mtime: Date): Promise<void> {
  const { files } = entries;
  // in the order of their names inside the archive: the folder's prefix is the same for every file
  const sorted = [...files].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const tar = new TarWriter((mtime.getTime() / 1000) | 0, CHUNK);
  // Each file read with synchronous calls, in order: through the promise API every read was an open,
  // a stat, a read and a close handed to libuv's pool and back, hundreds of thousands of them
  // (docs/performance.md). A chunk is handed over as soon as it is full; the stream's pull paces the
  // reading. gzip's write buffer is its default 16 KiB, so a chunk waits until the compressor has
  // finished the one before: reading and compressing take turns, they do not overlap.
  async function* chunks(): AsyncGenerator<Buffer> {
    tar.folder(`${entries.folder}/`);
    // Each folder just before the first file under it, so extraction never meets a file before its
    // folder. In name order a folder's files follow one another, so the folders of the file before are
    // all that is remembered, not a set of every folder (650,000 at 40,000 access points, a folder
    // per answer; docs/performance.md).
    let open: string[] = [];
    for (const f of sorted) {
      const folders = f.split("/").slice(0, -1);
      let same = 0;
      while (same < open.length && same < folders.length && open[same] === folders[same]) same++;
      for (let i = same; i < folders.length; i++) tar.folder(`${entries.folder}/${folders.slice(0, i + 1).join("/")}/`);
      open = folders;
      tar.file(`${entries.folder}/${f}`, path.join(entries.from, f));
      yield* tar.take();
    }
    tar.end();
    yield* tar.take();
  }
  await pipeline(chunks, createGzip({ level: LEVEL, chunkSize: CHUNK }), platformFreeGzipHeader(), createWriteStream(file));
}

function platformFreeGzipHeader(): Transform {
  let first = true;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      if (first && chunk.length >= 10) {
        chunk = Buffer.from(chunk);
        chunk[9] = 0xff; // OS: unknown
        first = false;
      }
      done(null, chunk);
    },
  });
}

/** The archive itself is at fault (not gzip, not tar, truncated, or an entry that is refused): bad input. */
export class ArchiveError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ArchiveError";
  }
}

/**
 * Unpacks a .tar.gz into `dir`, refusing anything but plain files and folders inside it (no absolute
 * names, no "..", no links), since dump archives come from elsewhere. Files are streamed to disk, never
 * held whole. Problems with the archive throw ArchiveError; problems writing to disk pass through as they
 * are. `dir` should be a fresh folder: on failure, what was unpacked so far is left for the caller to remove.
 */
export async function extractArchive(source: Readable, dir: string): Promise<number> {
  const extract = tarStream().extract();
  const root = path.resolve(dir);
  await mkdir(root, { recursive: true });
  let files = 0;
  const done = pipeline(source, createGunzip(), extract);
  // When the archive fails while a file's folder is being made (a truncated download), tar-stream
  // has ended that file's entry already, and a write from it waited forever for an end that had come.
  let failure: Error | undefined;
  // When an entry is refused, the loop below stops reading and the pipeline fails too: report the refusal.
  done.catch((err: Error) => void (failure = err));
  try {
    for await (const entry of extract) {
      const name = entry.header.name;
      const target = path.resolve(root, name);
      if (path.isAbsolute(name) || name.split(/[\\/]/).includes("..") || !(target === root || target.startsWith(root + path.sep))) {
        throw new ArchiveError(`unsafe path in archive: ${JSON.stringify(name)}`);
      }
      if (entry.header.type === "directory") {
        await mkdir(target, { recursive: true });
        entry.resume();
      } else if (entry.header.type === "file") {
        if (target === root) throw new ArchiveError(`file entry without a name in archive: ${JSON.stringify(name)}`);
        await mkdir(path.dirname(target), { recursive: true });
        if (failure) throw failure;
        await pipeline(entry, createWriteStream(target));
        files++;
      } else {
        throw new ArchiveError(`unsupported entry in archive (${entry.header.type}): ${JSON.stringify(name)}`);
      }
    }
    await done;
  } catch (err) {
    throw archiveFault(err);
  }
  return files;
}

/**
 * Errors from gunzip (codes Z_…) and from the tar parser (plain errors without a system call) are the
 * archive's fault; errors of the file system (they name a system call) are not.
 */
function archiveFault(err: unknown): unknown {
  if (err instanceof ArchiveError || !(err instanceof Error)) return err;
  const e = err as NodeJS.ErrnoException;
  // Unpacking into a fresh folder, these can only come from the archive's own names (a file and a
  // folder of the same name, a name too long for the file system).
  if (e.code === "EISDIR" || e.code === "ENOTDIR" || e.code === "EEXIST" || e.code === "ENAMETOOLONG") {
    return new ArchiveError(`conflicting or impossible entry names in archive (${err.message})`);
  }
  if (e.syscall !== undefined) return err;
  if (typeof e.code === "string" && !e.code.startsWith("Z_") && e.code !== "ERR_STREAM_PREMATURE_CLOSE") return err;
  const what =
    e.code === "Z_BUF_ERROR" ? "the archive is truncated" : e.code?.startsWith("Z_") ? "not a valid gzip file" : "not a valid tar archive";
  return new ArchiveError(`${what} (${err.message})`);
}
