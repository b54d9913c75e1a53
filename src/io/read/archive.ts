import { createWriteStream, readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
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
 * Bytes the packer may run ahead of the compressor. Its file bodies wait for room, but a folder entry
 * is a header alone and never waits: a build's hundreds of thousands of folders (one per response)
 * were all queued before gzip had read them, 2 GiB at 40,000 access points (docs/performance.md).
 */
const AHEAD = 8 * 2 ** 20;
const BLOCK = 512;
const CHUNK = 256 * 1024;
/**
 * zlib's default level: 9 made the API archive of a 10,000-access-point build 9 % smaller (15.7 MB
 * against 17.1 MB) and took 2.7 times as long (11.3 s against 4.1 s for its 480 MB of tar), on the
 * first cycle of every day (docs/performance.md).
 */
const LEVEL = 6;
const EMPTY = Buffer.alloc(0);

export async function writeArchive(file: string, entries: ArchiveFiles, mtime: Date): Promise<void> {
  const pack = tarStream().pack();
  // in the order of their names inside the archive: the folder's prefix is the same for every file
  const sorted = [...entries.files].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
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
  const written = pipeline(pack, meter, coalesced(), createGzip({ level: LEVEL }), platformFreeGzipHeader(), createWriteStream(file));
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
  // Each folder just before the first file under it, so extraction never meets a file before its
  // folder. In name order a folder's files follow one another, so the folders of the file before are
  // all that is remembered, not a set of every folder and its sorted copy (650,000 folders at 40,000
  // access points, a folder per answer; docs/performance.md).
  await add({ ...header, name: `${entries.folder}/`, type: "directory", mode: 0o755 });
  let open: string[] = [];
  // Each file read with one synchronous call, in order: through the promise API every read was an
  // open, a stat, a read and a close handed to libuv's pool and back, hundreds of thousands of them
  // (docs/performance.md); the awaits below let the compressor and a signal run between files.
  for (const f of sorted) {
    const folders = f.split("/").slice(0, -1);
    let same = 0;
    while (same < open.length && same < folders.length && open[same] === folders[same]) same++;
    for (let i = same; i < folders.length; i++)
      await add({ ...header, name: `${entries.folder}/${folders.slice(0, i + 1).join("/")}/`, type: "directory", mode: 0o755 });
    open = folders;
    const body = readFileSync(path.join(entries.from, f));
    await add({ ...header, name: `${entries.folder}/${f}`, type: "file", mode: 0o644, size: body.length }, body);
  }
  pack.finalize();
  await written;
}

/**
 * The packer's output joined into chunks of CHUNK bytes before it reaches the compressor: each chunk
 * is one task of zlib's pool and one round trip back, and the packer writes a header, a body and its
 * padding apiece, a million small writes for a large build, during which the main thread waited on
 * the pool most of the time (docs/performance.md).
 */
function coalesced(): Transform {
  let held: Buffer[] = [];
  let size = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      held.push(chunk);
      size += chunk.length;
      if (size < CHUNK) return done();
      const joined = Buffer.concat(held, size);
      [held, size] = [[], 0];
      done(null, joined);
    },
    flush(done) {
      done(null, size > 0 ? Buffer.concat(held, size) : undefined);
    },
  });
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
