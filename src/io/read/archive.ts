import { createWriteStream, type WriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import type { Readable } from "node:stream";
import { promisify } from "node:util";
import { createGunzip, gzip } from "node:zlib";
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { TarWriter } from "./tar.ts";

// required when an archive is read, not when this module is imported by every command
const gzipAsync = promisify(gzip);
const tarStream = () => createRequire(import.meta.url)("tar-stream") as typeof import("tar-stream");

/**
 * Deterministic .tar.gz archives (written by tar.ts, read with tar-stream): entries in a fixed order
 * (writeArchive's by name, a build's as it writes them: ArchiveStream), fixed modes, owner root/0,
 * every mtime the snapshot's taken_at, and a gzip header without name or time (and "unknown" as the
 * OS, so the bytes do not depend on the platform that packed them).
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
 * chunk took several round trips between the pool and the main thread (docs/performance.md).
 */
const CHUNK = 2 ** 20;

export async function writeArchive(file: string, entries: ArchiveFiles, mtime: Date): Promise<ArchiveWritten> {
  // in the order of their names inside the archive: the folder's prefix is the same for every file
  const sorted = [...entries.files].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const archive = new ArchiveStream(file, entries.folder, mtime);
  try {
    // Each file read with synchronous calls, in order: through the promise API every read was an open,
    // a stat, a read and a close handed to libuv's pool and back, hundreds of thousands of them
    // (docs/performance.md). The compressor's lag paces the reading.
    await archive.files(sorted, entries.from);
    return await archive.end();
  } finally {
    archive.abort();
  }
}

/** An archive's size and SHA-256, counted as it was written. */
export interface ArchiveWritten {
  readonly bytes: number;
  readonly sha256: string;
}

/** The tar bytes the compressor may be behind by before the writer waits for it. */
const LAG = 8 * CHUNK;

/**
 * A file at least this long goes into an archive as its gzip twin when the build made one
 * (ArchiveStream.compressed): each cuts the tar's members, and a shorter one would save less deflating
 * than a member's fresh dictionary costs the entries around it.
 */
export const OWN_MEMBER_BYTES = 64 * 1024;

/**
 * A deterministic .tar.gz written as its files come, in the order they are given: from the disk, or
 * as bytes a build has just made (its snapshot's API archive, io/write/emit.ts: the build's order, so
 * that 640,000 files at 40,000 access points need not be read back).
 *
 * Files only, no folder entries: tar, Python's tarfile and extractArchive below make a file's folders
 * as they unpack it. At 40,000 access points the API archive has a folder per answer: their entries
 * were 650,000 headers (a sixth of the tar, compressed every day) and a set of every folder's name
 * on the build's thread, 2.75 s of a day's first cycle there (docs/performance.md).
 *
 * The gzip file is a series of members (RFC 1952 2.2; gzip, tar, zlib and Python read them as one):
 * each CHUNK of the tar compressed on its own, several at once in zlib's pool, and a file whose gzip
 * twin the build made (compressed()) that twin itself, not compressed again. At 40,000 access points
 * the API archive is 2.08 GB of tar, 800 MB of it long lists the build has just compressed for their
 * twins (docs/performance.md).
 * A member's dictionary starts empty: deflate's window is 32 KiB, so a MiB loses little.
 */
export class ArchiveStream {
  private readonly tar: TarWriter;
  private readonly out: WriteStream;
  private readonly hash = createHash("sha256");
  private size = 0;
  /** the members handed, in order, with what each weighs against LAG; written one after the other */
  private readonly members: { readonly bytes: Promise<Buffer>; readonly weight: number }[] = [];
  /** the weight of the members handed but not written yet: the tar bytes of those the stream compresses */
  private pending = 0;
  private writing: Promise<void> | undefined;
  private readonly waiting = new Set<() => void>();
  private finished = false;
  /** why the archive cannot be written (its file, the disk), once known */
  failure: unknown;

  constructor(
    /** where the archive is written */
    readonly target: string,
    private readonly folder: string,
    mtime: Date,
  ) {
    this.tar = new TarWriter((mtime.getTime() / 1000) | 0, CHUNK);
    this.out = createWriteStream(target);
    // thrown by end(); seen before it by the build (a full disk stops it then, not after the last file)
    this.out.on("error", (err) => this.fail(err));
  }

  /**
   * A file of the disk, by its path inside the archive's folder ("/"-separated, no leading "/"). A
   * promise when the compressor fell behind while it was packed (a long file is packed a chunk at a
   * time, waiting for the compressor between chunks), to be awaited before the next entry.
   */
  file(name: string, from: string): Promise<void> | undefined {
    return this.pack(this.tar.fileInChunks(`${this.folder}/${name}`, from));
  }

  /** Files of the folder `from` (paths relative to it), in the order given; stops at a failure to write the archive. */
  async files(names: Iterable<string>, from: string): Promise<void> {
    for (const name of names) {
      // awaited only when there is something to wait for: a turn of the event loop per file adds up over 640,000
      const packing = this.file(name, path.join(from, name)) ?? this.behind();
      if (packing) await packing;
      if (this.failure !== undefined) throw this.failure;
    }
  }

  bytes(name: string, data: Buffer): Promise<void> | undefined {
    return this.pack(this.tar.bytesInChunks(`${this.folder}/${name}`, data));
  }

  /**
   * A file of `size` bytes whose gzip (`member`: a gzip file of those very bytes, a twin the build
   * made) is at hand or coming: its header goes into the tar, and its bytes as that member.
   */
  compressed(name: string, size: number, member: Promise<Buffer>): Promise<void> | undefined {
    this.tar.fileHeader(`${this.folder}/${name}`, size);
    this.tar.cut();
    this.push();
    const checked = member.then((bytes) => {
      // a member's last four bytes are its input's length (modulo 2^32): a twin of other bytes would break the tar
      if (bytes.length < 18 || bytes.readUInt32LE(bytes.length - 4) !== size % 2 ** 32)
        throw new Error(`${name}: the gzip member given is not of its ${size} bytes`);
      return bytes;
    });
    // paced by what it holds: the compressed bytes, not those compressed in the build's twin
    this.hand(checked, Math.min(size, CHUNK));
    this.tar.padding(size);
    return this.behind();
  }

  /** Whether end() or abort() was called. */
  get ended(): boolean {
    return this.finished;
  }

  /** While the compressor is more than LAG behind, a promise of its catching up. */
  behind(): Promise<void> | undefined {
    if (this.pending <= LAG || this.failure !== undefined || this.finished) return undefined;
    return new Promise<void>((ok) => this.waiting.add(ok));
  }

  async end(): Promise<ArchiveWritten> {
    this.tar.end();
    this.push();
    this.finished = true;
    await this.writing;
    if (this.failure !== undefined) throw this.failure;
    await new Promise<void>((ok, fail) => {
      this.out.once("error", fail);
      this.out.end(ok);
    });
    if (this.failure !== undefined) throw this.failure;
    return { bytes: this.size, sha256: this.hash.digest("hex") };
  }

  /** Stops an archive that was not ended (a failed build): its file is the caller's to remove. */
  abort(): void {
    if (!this.finished) this.fail(new Error("the archive was not ended"));
    this.finished = true;
    this.out.destroy();
  }

  /** Steps through an entry's chunks, handing each to the compressor, and waits while it is behind. */
  private pack(steps: Generator<void, void, void>): Promise<void> | undefined {
    for (;;) {
      const done = steps.next().done;
      this.push();
      if (done) return undefined;
      const wait = this.behind();
      if (wait) return wait.then(() => this.pack(steps));
    }
  }

  /** The tar's chunks completed so far, each a member compressed in zlib's pool. */
  private push(): void {
    for (const chunk of this.tar.take()) {
      const member = gzipAsync(chunk, { level: LEVEL });
      // compressed: the chunk is the writer's to fill again (not when it failed: nothing is written after)
      void member.then(
        () => this.tar.giveBack(chunk),
        () => {},
      );
      this.hand(member, chunk.length);
    }
  }

  private hand(bytes: Promise<Buffer>, weight: number): void {
    if (this.failure !== undefined) return;
    bytes.catch(() => {}); // seen by the loop, in its turn
    this.members.push({ bytes, weight });
    this.pending += weight;
    this.writing ??= this.writeMembers();
  }

  /** Writes the members in the order handed, as each is ready, and wakes those waiting while it was behind. */
  private async writeMembers(): Promise<void> {
    try {
      for (let next = this.members.shift(); next !== undefined && this.failure === undefined; next = this.members.shift()) {
        const member = await next.bytes;
        // the gzip header without a name or time, and "unknown" as its OS: the bytes do not depend on the platform
        const head = Buffer.from(member.subarray(0, 10));
        head[9] = 0xff;
        for (const piece of [head, member.subarray(10)]) {
          if (this.failure !== undefined) return;
          this.hash.update(piece);
          this.size += piece.length;
          if (!this.out.write(piece)) await this.drained();
        }
        this.pending -= next.weight;
        if (this.pending <= LAG) this.wake();
      }
    } catch (err) {
      this.fail(err);
    } finally {
      this.writing = undefined;
    }
  }

  private drained(): Promise<void> | undefined {
    if (this.out.destroyed || this.failure !== undefined) return undefined;
    return new Promise<void>((ok) => {
      const done = () => {
        this.out.off("drain", done).off("close", done);
        ok();
      };
      this.out.on("drain", done).on("close", done);
    });
  }

  private fail(err: unknown): void {
    this.failure ??= err;
    this.members.length = 0;
    this.wake();
  }

  private wake(): void {
    for (const ok of this.waiting) ok();
    this.waiting.clear();
  }
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
