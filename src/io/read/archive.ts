import { createWriteStream } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { Transform, type Readable } from "node:stream";
import { createGunzip, createGzip } from "node:zlib";
import { createRequire } from "node:module";

// required when an archive is made or read, not when this module is imported by every command
const tarStream = () => createRequire(import.meta.url)("tar-stream") as typeof import("tar-stream");

/**
 * Deterministic .tar.gz archives with tar-stream: entries sorted, fixed modes, owner root/0, every
 * mtime the snapshot's taken_at, and a gzip header without name or time (and "unknown" as the OS, so
 * the bytes do not depend on the platform that packed them).
 */
export interface ArchiveEntry {
  /** path inside the archive, with "/" */
  readonly name: string;
  /** the file to read */
  readonly source: string;
}

/**
 * Bytes the packer may run ahead of the compressor. Its file bodies wait for room, but a folder entry
 * is a header alone and never waits: a build's hundreds of thousands of folders (one per response)
 * were all queued before gzip had read them, 2 GiB at 40,000 access points (docs/performance.md).
 */
const AHEAD = 8 * 2 ** 20;
const BLOCK = 512;
/** Files read at once while the archive is written. */
const READ_AHEAD = 32;
const EMPTY = Buffer.alloc(0);

export async function writeArchive(file: string, entries: readonly ArchiveEntry[], mtime: Date): Promise<void> {
  const pack = tarStream().pack();
  const sorted = [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const dirs = new Set<string>();
  for (const e of sorted) for (let d = path.posix.dirname(e.name); d !== "."; d = path.posix.dirname(d)) dirs.add(d);
  const header = { mtime, uid: 0, gid: 0, uname: "", gname: "" };
  // `queued` counts the blocks an entry takes at least (a long name adds an extended header): the
  // compressor always reaches it, so waiting for it never waits for bytes that are not coming.
  let queued = 0;
  let read = 0;
  let wake: (() => void) | undefined;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      read += chunk.length;
      if (wake && queued - read <= AHEAD) {
        wake();
        wake = undefined;
      }
      done(null, chunk);
    },
  });
  const written = pipeline(pack, meter, createGzip({ level: 9 }), platformFreeGzipHeader(), createWriteStream(file));
  // Its failure surfaces at the await below (or through the entry that stalls); never as an unhandled rejection.
  written.catch(() => {});
  const failed = written.then(
    () => new Promise<never>(() => {}),
    (err: unknown) => Promise.reject(err),
  );
  failed.catch(() => {});
  // A file is read whole and handed over as one buffer: a build's files are small, and a stream
  // per file added its set-up to each of hundreds of thousands.
  const add = async (h: Parameters<typeof pack.entry>[0], body?: Buffer) => {
    if (queued - read > AHEAD) await Promise.race([new Promise<void>((ok) => (wake = ok)), failed]);
    queued += BLOCK + Math.ceil((body?.length ?? 0) / BLOCK) * BLOCK;
    await new Promise<void>((ok, fail) => void pack.entry(h, body ?? EMPTY, (err) => (err ? fail(err) : ok())));
  };
  // Folders first, in order, so extraction never meets a file before its folder.
  for (const d of [...dirs].sort()) await add({ ...header, name: `${d}/`, type: "directory", mode: 0o755 });
  // Read ahead, in order: one read at a time waited on the file system for every file (minutes for
  // a build of 600,000 responses), while the packer and the compressor were idle.
  const reads: Promise<Buffer>[] = [];
  let next = 0;
  for (const e of sorted) {
    while (next < sorted.length && reads.length < READ_AHEAD) {
      const read = readFile(sorted[next++].source);
      read.catch(() => {}); // awaited in its turn below; until then its failure is not unhandled
      reads.push(read);
    }
    const body = await reads.shift()!;
    await add({ ...header, name: e.name, type: "file", mode: 0o644, size: body.length }, body);
  }
  pack.finalize();
  await written;
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
  // When an entry is refused, the loop below stops reading and the pipeline fails too: report the refusal.
  done.catch(() => {});
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
