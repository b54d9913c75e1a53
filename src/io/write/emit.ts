import { createHash } from "node:crypto";
import { closeSync, ftruncateSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { mkdir, open, readdir, readFile, rename, rm, rmdir, stat, unlink } from "node:fs/promises";
import { removeFolder, removeInBackground, replaceFolder, type ReplaceOptions } from "./swap.ts";
import type { OutputLock } from "./lock.ts";
import path from "node:path";
import { promisify } from "node:util";
import { createGzip, gzip } from "node:zlib";
import { bodyPieces, PIECE, type Body } from "../../core/body.ts";
import type { OutputFile } from "../../core/plan.ts";
import { FILES, hasTwin, TWIN, twinOf } from "../../core/routes.ts";
import { readBuildRecord } from "./build-record.ts";
import { DigestRecord, digestOf, KnownFiles, parseDigests, type DigestEntries, type Written } from "./digests.ts";
import { fileCalls, WritingThread, type FileCalls } from "./file-calls.ts";
import { OWN_MEMBER_BYTES, type ArchiveStream } from "../read/archive.ts";

const gzipAsync = promisify(gzip);

/** Writes the planned responses into a new tree that replaces `out` atomically (io/write/swap.ts). */
export interface EmitResult {
  readonly files: number;
  readonly bytes: number;
}

/**
 * Twins compressed at once, and the bytes their files may hold in memory meanwhile (docs/performance.md):
 * 16 MiB keeps zlib's pool busy (most twins' bodies are a few kB, and a long list's is compressed from
 * its file, counted as one piece), and a build of 40,000 access points peaked about 13 MiB lower than
 * with 64.
 */
const WRITE_CONCURRENCY = 32;
const BYTES_IN_FLIGHT = 16 * 2 ** 20;

export interface EmitOptions {
  /** runs on the complete temporary tree before it replaces `out` (the marker and snapshots are made there), with `archive`'s stream */
  readonly finish?: (dir: string, archive?: ArchiveStream) => Promise<void>;
  /** called after each file is written, with the count so far */
  readonly progress?: (files: number) => void;
  /**
   * An archive that the files `takes` names go into as they are written (the build's snapshot of the API):
   * opened in the new tree (`open` is given its folder, and names a file there), told each such file's
   * bytes, a one-piece body from memory, a long one from its file. The tree is never read back for it
   * (640,000 files at 40,000 access points). `finish` is given it to add its own files and end it;
   * it is aborted when the build fails.
   */
  readonly archive?: { readonly takes: (file: string) => boolean; readonly open: (root: string) => ArchiveStream };
  /** the output's lock, when the caller holds it already (io/write/swap.ts) */
  readonly lock?: OutputLock;
  /** whether the previous output is removed before returning or by a detached process (io/write/swap.ts) */
  readonly removeOld?: ReplaceOptions["removeOld"];
  /**
   * A recyclable tree records the digest of every file it writes (FILES.fileDigests). `from`, such a
   * tree that is no longer served (the cycle's build before the served one), becomes the new tree's
   * start instead of an empty folder: only the files whose bytes changed are written, those no longer
   * planned removed. Writing a build's tens of thousands of files into new folders, and removing an
   * old build's, costs far more than rewriting the changed ones in place (docs/performance.md).
   */
  readonly recycle?: { readonly from?: string };
  /** `out` is a new folder served through this symbolic link once complete (io/write/swap.ts) */
  readonly link?: ReplaceOptions["link"];
}

/**
 * Parts of a plan written side by side (core/plan.ts PlanParts): each by a loop of its own on the
 * build's thread, which goes on with one while the writing thread is busy with the other's files.
 */
export interface SideBySide {
  readonly sideBySide: readonly Iterable<OutputFile>[];
}

export async function emitTree(out: string, files: Iterable<OutputFile> | SideBySide, options: EmitOptions = {}): Promise<EmitResult> {
  return replaceFolder(
    out,
    async (tmp) => {
      const known = options.recycle ? await takeOver(tmp, out) : undefined;
      const digests = options.recycle ? new DigestRecord(path.join(tmp, DIGESTS)) : undefined;
      let archive: Archiving | undefined;
      try {
        archive = options.archive && { takes: options.archive.takes, stream: options.archive.open(tmp) };
        const recycling = digests && { known, digests, linksHold: known !== undefined && (await linksHold(tmp, known)) };
        const lanes = lanesOf(files, archive !== undefined || known !== undefined);
        const result = await writeAll(tmp, lanes, options.progress, recycling, archive);
        if (digests) {
          // what the recycled tree holds and this build did not write: each file written took its entry out (wasIn)
          if (known) for (const file of known.names()) await removeStale(tmp, file);
          known?.clear();
          digests.finish();
        }
        await options.finish?.(tmp, archive?.stream);
        // an archive its finish did not end is not one: never served half written
        if (archive && !archive.stream.ended) {
          archive.stream.abort();
          await rm(archive.stream.target, { force: true });
        }
        return result;
      } finally {
        digests?.close();
        archive?.stream.abort();
      }
    },
    { lock: options.lock, removeOld: options.removeOld, seed: options.recycle?.from, link: options.link },
  );
}

/** Where the files an archive takes go as they are written. */
interface Archiving {
  readonly takes: (file: string) => boolean;
  readonly stream: ArchiveStream;
}

const DIGESTS = FILES.fileDigests.slice(1);
/**
 * A recycled file no longer than this is rewritten in place (written over and cut to length), longer ones by a
 * rename. The recycled tree stopped being served a cycle ago, and a server reads a file this short
 * whole when it opens it (one read, one sendfile into a socket buffer of at least 16 KiB), so no
 * request can still be reading its old bytes; a long list may be downloaded slowly for minutes and
 * keeps its old file through the rename. In place costs half as much on disk as a rename, which
 * makes a new inode and frees the old one (docs/performance.md); 99.8 % of a build's files are this short.
 */
const READ_AT_ONCE = 16 * 1024;

/**
 * The digests of a recycled tree's files, which stay where they are; what the build's finish writes
 * (marker, record, snapshots, the operator's extra files) is removed, to be written afresh. Undefined
 * for an empty folder (nothing was recycled). A tree whose digests cannot be read (a build of an
 * older version, or one interrupted while recycling) is emptied: without them no file of it can be
 * trusted to be the build's. Its files go as a replaced build's do: moved aside at once, into a
 * sibling of `out` that a detached remover takes (io/write/swap.ts), since removing a large build in this
 * process took longer than writing it (and 1.8 GiB at 40,000 access points).
 */
async function takeOver(root: string, out: string): Promise<KnownFiles | undefined> {
  const names = await readdir(root);
  if (names.length === 0) return undefined;
  const file = path.join(root, DIGESTS);
  const known = parseDigests(await readFile(file).catch(() => undefined));
  if (!known) {
    const base = path.basename(path.resolve(out));
    // named as the remover names its own: a run after a kill removes it (io/write/swap.ts recoverLeftovers)
    const aside = path.join(path.dirname(root), `.${base}.trash-${process.pid}-${Date.now()}`);
    await mkdir(aside);
    for (const name of names) await rename(path.join(root, name), path.join(aside, name));
    if (!(await removeInBackground(aside, base))) await removeFolder(aside);
    return undefined;
  }
  // Gone before any write: a tree interrupted from here on has no digests, so it is never trusted again.
  await rm(file);
  for (const extra of (await readBuildRecord(root))?.extra ?? []) {
    const file = under(root, extra);
    if (file !== undefined) await rm(file, { force: true });
  }
  const tops = new Set<string>();
  for (const file of known.names()) tops.add(topOf(file));
  for (const name of names) if (!tops.has(name)) await removeFolder(path.join(root, name));
  return known;
}

/** The first folder (or the file) a path names under the root. */
function topOf(file: string): string {
  let from = 0;
  while (file[from] === "/") from++;
  const to = file.indexOf("/", from);
  return to < 0 ? file.slice(from) : file.slice(from, to);
}

/**
 * A plan's path under `root` (resolved), or undefined for one that would leave it. A path already
 * in normal form (each part a name, neither `.` nor `..`) is added as it is: path.join normalizes by
 * building its result anew, a tenth of a recycled build's garbage at 40,000 access points (an
 * allocation profile of 600,000 files).
 */
function under(root: string, file: string): string | undefined {
  if (path.sep === "/" && NORMAL_PATH.test(file)) return root + file;
  const full = path.join(root, file);
  return full.startsWith(root + path.sep) ? full : undefined;
}

const NORMAL_PATH = /^(?:\/(?!\.\.?(?:\/|$))[^/\0]+)+$/;

/** A file the new build no longer writes, and its folders as far as they are empty now. */
async function removeStale(root: string, file: string): Promise<void> {
  const full = under(root, file);
  if (full === undefined) return;
  await unlink(full).catch(() => {});
  for (let dir = path.dirname(full); dir !== root && dir.startsWith(root + path.sep); dir = path.dirname(dir)) {
    try {
      await rmdir(dir);
    } catch {
      return; // not empty (or gone): its parents are not empty either
    }
  }
}

/**
 * What the recycled tree holds at `file`, its entry taken out (io/write/digests.ts KnownFiles). What
 * is left in the end is what the build no longer writes.
 */
function wasIn(recycling: Recycling | undefined, file: string): Written | undefined {
  return recycling?.known?.take(file);
}

interface Recycling {
  /** the digests of the files the recycled tree holds, when it was one */
  readonly known?: KnownFiles;
  /** where this loop records every file's digest */
  readonly digests: DigestEntries;
  /** whether the names the record says share an inode still do: the tree is the one it was written in, not a copy */
  readonly linksHold: boolean;
}

/** A build's recycling with the whole record, of which each loop is given its part (DigestRecord.part). */
type Recording = Recycling & { readonly digests: DigestRecord };

/**
 * Whether the names the record says share an inode still do: the first and the last such pair are
 * looked at. A copy of the tree that did not keep hard links (a backup put back, a state moved with
 * `cp -r` or `rsync` without -H) made each name a file of its own; the build then links every one anew.
 */
async function linksHold(root: string, known: KnownFiles): Promise<boolean> {
  for (const names of known.linkSamples()) {
    const [a, b] = await Promise.all(
      names.map((f) => under(root, f)).map((f) => (f === undefined ? undefined : stat(f, { bigint: true }).catch(() => undefined))),
    );
    if (a === undefined || b === undefined || a.dev !== b.dev || a.ino !== b.ino) return false;
  }
  return true;
}

/**
 * Files handed to the build's own thread before a writing thread takes over the calls (io/write/file-calls.ts):
 * a small build is written before a thread would have started (about 35 ms, and a few MB).
 */
const THREAD_FROM = 20_000;

/** A setting the environment may override (the tests and the benchmark do), read at each build. */
function tuned(name: string, fallback: number): number {
  const given = process.env[name];
  return given !== undefined && given.trim() !== "" && Number.isInteger(Number(given)) && Number(given) >= 0 ? Number(given) : fallback;
}

/**
 * The loops a build writes in: side by side, or one part after the other in two cases. A build that
 * packs an archive: the archive lists its files in the order they are written, which loops taking
 * turns at the writing thread's pace would not keep from run to run (the digests record keeps each
 * loop's files apart: DigestRecord.part). And a build that recycles a tree: it keeps most files, so
 * the writing thread has little to do, and side by side a recycled cycle at 40,000 access points
 * took as long and peaked 35 MiB higher (docs/performance.md).
 */
function lanesOf(files: Iterable<OutputFile> | SideBySide, ordered: boolean): readonly Iterable<OutputFile>[] {
  if (!("sideBySide" in files)) return [files];
  if (!ordered) return files.sideBySide;
  const parts = files.sideBySide;
  return [
    (function* () {
      for (const part of parts) yield* part;
    })(),
  ];
}

async function writeAll(
  root: string,
  lanes: readonly Iterable<OutputFile>[],
  progress?: (files: number) => void,
  recycling?: Recording,
  archive?: Archiving,
): Promise<EmitResult> {
  return new TreeWriting(root, lanes.length, progress, recycling, archive).run(lanes);
}

/**
 * A build's writing: a loop over each part of the plan, on this thread, taking turns (where one waits
 * for the writing thread, another renders its next file), the writing thread they share, and the
 * twins of their files, compressed in zlib's pool a few at a time while the next files are written.
 */
class TreeWriting {
  /** each loop's compressions */
  private readonly compressions: Compressions[] = [];
  private count = 0;
  private bytes = 0;
  private failure: unknown;
  private readonly yielding = pauses();
  private readonly concurrency = Math.max(1, tuned("MESH_API_WRITE_CONCURRENCY", WRITE_CONCURRENCY));
  private readonly threadFrom = tuned("MESH_API_WRITER_THREAD_FROM", THREAD_FROM);
  private readonly direct: FileCalls;
  private thread: WritingThread | undefined;
  /** the bytes of twins each loop may have on their way: a share of them */
  private readonly share: number;

  constructor(
    private readonly root: string,
    lanes: number,
    private readonly progress: ((files: number) => void) | undefined,
    private readonly recycling: Recording | undefined,
    private readonly archive: Archiving | undefined,
  ) {
    this.direct = fileCalls(root, READ_AT_ONCE);
    this.share = BYTES_IN_FLIGHT / lanes;
  }

  async run(lanes: readonly Iterable<OutputFile>[]): Promise<EmitResult> {
    let finished = false;
    try {
      // a loop that fails stops the others at their next file
      await Promise.all(lanes.map((files, n) => this.lane(files, n).catch((err) => void (this.failure ??= err))));
      // Never leave compressions running behind a failure: the caller removes the folder next.
      await this.twinsWritten();
      if (!this.failure) await this.thread?.settled();
      finished = !this.failure;
    } finally {
      // after a failure, the batches still on their way are not written into a folder about to go
      if (!finished) this.thread?.stop();
      await this.twinsWritten();
      await this.thread?.close();
    }
    this.failure ??= this.thread?.failure;
    if (this.failure) throw this.failure;
    return { files: this.count, bytes: this.bytes };
  }

  private calls(): FileCallsHanded {
    return this.thread ?? this.direct;
  }

  /** Every loop's compressions ended (once the loops have, none starts). */
  private async twinsWritten(): Promise<void> {
    await Promise.all(this.compressions.map((c) => c.ended()));
  }

  private async lane(files: Iterable<OutputFile>, n: number): Promise<void> {
    const { root, archive, direct, yielding } = this;
    const recycling = this.recycling && { ...this.recycling, digests: this.recycling.digests.part(n) };
    const recent = new RecentFiles();
    const twins = new RecentTwins();
    // each loop waits for its own compressions, within its share: never for another's long list
    const mine = new Compressions();
    this.compressions.push(mine);
    for (const file of files) {
      this.failure ??= this.thread?.failure ?? archive?.stream.failure;
      if (this.failure) return;
      const full = under(root, file.path);
      if (full === undefined) throw new Error(`refusing to write outside the output: ${file.path}`);
      if (++this.count > this.threadFrom && !this.thread) this.thread = new WritingThread(root, READ_AT_ONCE);
      // A file the recycled tree holds is rewritten where it is (its folder is there): in place when
      // it is short, else by a rename, so that a reader still holding the old file reads it whole.
      const was = wasIn(recycling, file.path);
      let packing: Promise<void> | undefined; // the archive's compressor fell behind while it packed this file
      const target = linkedFile(file, full, was, recent, recycling, this.calls());
      const own = was?.[2] === undefined ? was : undefined;
      const name: RecycledName = { file: file.path, full, shared: own !== was, own };
      const body = target === undefined ? split(file.body, own, true) : undefined;
      if (target !== undefined) packing = this.repeat(file, target, was, mine, recycling, twins);
      else if (body!.whole) {
        const data = body!.whole;
        this.bytes += data.length;
        const same = handWhole(this.calls(), recent, recycling, name, data, body!.digest);
        const twin = hasTwin(file.path, data.length)
          ? this.twin(
              mine,
              recycling,
              file.path,
              same,
              data.length,
              twins.keep(file.path, () => gzipped(data)),
            )
          : undefined;
        packing = this.archived(file.path, data.length, twin, (stream, name) => stream.bytes(name, data));
      } else {
        // A list rendered as it is written, at most a piece in memory, by this thread while the writing thread goes on
        // (waiting for it left both idle in turn: docs/performance.md); its twin is made from the file.
        const { length, same, digest } = await writeLong(direct, name, body!, recycling, yielding);
        this.bytes += length;
        // on disk now: a later file of the same bytes links to it, and reads it for its twin or an archive
        recent.note(file.path, { full, length, digest, recycled: own !== undefined && (same || own[1] <= READ_AT_ONCE), readable: full });
        const twin = hasTwin(file.path, length)
          ? this.twin(
              mine,
              recycling,
              file.path,
              same,
              PIECE,
              twins.keep(file.path, () => gzippedFile(full)),
            )
          : undefined;
        packing = this.archived(file.path, length, twin, (stream, name) => stream.file(name, full));
      }
      this.progress?.(this.count);
      // awaited only when there is something to wait for: three turns of the microtask queue a file were
      // a second of a recycled build's main thread at 40,000 access points (a CPU profile)
      const [pause, room, behind] = [yielding(), this.thread?.room(), packing ?? archive?.stream.behind()];
      if (pause || room || behind) {
        await Promise.all([pause, room, behind]);
        // resumed by the event loop: this loop has its turn now, not a pause at once
        yielding.ran();
      }
      while (mine.over(this.concurrency, this.share)) await mine.next();
    }
  }

  /**
   * A file linked to the one it repeats (linkedFile): its twin and its place in the archive. Its bytes,
   * when short, are made once: its items may be rendered as they are read, once (core/body.ts), and
   * both the twin and the archive may want them (the file it repeats may not be on disk yet).
   */
  private repeat(
    file: OutputFile,
    target: Linkable,
    was: Written | undefined,
    mine: Compressions,
    recycling: Recycling | undefined,
    twins: RecentTwins,
  ): Promise<void> | undefined {
    this.bytes += target.length;
    let bytes: Buffer | undefined;
    const whole = () => (bytes ??= wholeOf(file.body));
    let twin: (() => Promise<Buffer>) | undefined;
    if (hasTwin(file.path, target.length)) {
      // the twin of the file it repeats, compressed once when it was a moment ago (the twin is a file of its own)
      const same = holds(was, target.digest, target.length);
      const make = twins.of(file.sameAs!) ?? (() => (target.readable ? gzippedFile(target.readable) : gzipped(whole())));
      twin = this.twin(mine, recycling, file.path, same, target.readable ? PIECE : target.length, twins.keep(file.path, make));
    }
    const { readable } = target;
    return this.archived(file.path, target.length, twin, (stream, name) =>
      readable ? stream.file(name, readable) : stream.bytes(name, whole()),
    );
  }

  /**
   * A file into the archive, when it takes it: as its twin, a gzip member of its own, when it has one
   * and is long enough (OWN_MEMBER_BYTES), else as `packed` packs it.
   */
  private archived(
    file: string,
    length: number,
    twin: (() => Promise<Buffer>) | undefined,
    packed: (stream: ArchiveStream, name: string) => Promise<void> | undefined,
  ): Promise<void> | undefined {
    const { archive } = this;
    if (!archive?.takes(file)) return undefined;
    if (twin !== undefined && length >= OWN_MEMBER_BYTES) return archive.stream.compressed(file.slice(1), length, twin());
    return packed(archive.stream, file.slice(1));
  }

  private twin(
    mine: Compressions,
    recycling: Recycling | undefined,
    file: string,
    same: boolean,
    held: number,
    make: () => Promise<Buffer>,
  ): () => Promise<Buffer> {
    const kept = twinKept(recycling, file, same);
    const job = writeTwin(this.root, file, kept, recycling, make, () => this.calls()).catch((err) => {
      this.failure ??= err;
    });
    mine.add(job, held);
    // its bytes, for the archive: those made, or the recycled tree's twin where it is kept
    return kept ? () => readFile(under(this.root, twinOf(file))!) : make;
  }
}

/** A writing loop's compressions on their way, and the bytes they hold meanwhile. */
class Compressions {
  private readonly jobs = new Set<Promise<void>>();
  private bytes = 0;

  add(job: Promise<void>, held: number): void {
    this.jobs.add(job);
    this.bytes += held;
    void job.finally(() => {
      this.jobs.delete(job);
      this.bytes -= held;
    });
  }

  /** Whether `count` or more are on their way, or more than `bytes` are held. */
  over(count: number, bytes: number): boolean {
    return this.jobs.size >= count || (this.bytes > bytes && this.jobs.size > 0);
  }

  /** The next to end. */
  next(): Promise<void> {
    return Promise.race(this.jobs);
  }

  /** All of them ended. */
  async ended(): Promise<void> {
    await Promise.all(this.jobs);
  }
}

/**
 * A file of the plan at its full path, and what the recycled tree holds there: `own`, its record,
 * unless the name shared an inode there (`shared`): it is then removed and written as a new file,
 * since written over it would change the other names.
 */
interface RecycledName {
  readonly file: string;
  readonly full: string;
  readonly shared: boolean;
  readonly own: Written | undefined;
}

/** The calls the build hands over (to its own thread or the writing thread), in order. */
type FileCallsHanded = Pick<FileCalls, "folder" | "whole" | "link" | "unlink">;

/** A file just written whole, which a later file of the same bytes may share (OutputFile.sameAs). */
interface Linkable {
  readonly full: string;
  readonly length: number;
  /** its digest, when the build records them */
  readonly digest?: string;
  /** whether its inode is the recycled tree's (kept, or written in place): a name linked to it there still is */
  readonly recycled: boolean;
  /** a name that holds its bytes on disk already (a long file, written by the build's own thread) */
  readonly readable?: string;
}

/**
 * The files written last, by path. The plan puts a file that repeats another right after it, or after
 * the few files of the same access point (plan.ts); one too far back is written on its own.
 */
class RecentFiles {
  private readonly files = new Map<string, Linkable>();
  constructor(private readonly keep = 1024) {}

  note(file: string, linkable: Linkable): void {
    this.files.set(file, linkable);
    if (this.files.size > this.keep) this.files.delete(this.files.keys().next().value!);
  }

  get(file: string): Linkable | undefined {
    return this.files.get(file);
  }
}

/**
 * The twins made last, by their file's path: a file that repeats one of them (sameAs, a list and its
 * filter that keeps every item) takes its twin's bytes instead of compressing the same bytes again.
 * A few only, since they are held until forgotten: the plan puts such a file next to the one it repeats.
 */
class RecentTwins {
  private readonly made = new Map<string, () => Promise<Buffer>>();
  constructor(private readonly most = 2) {}

  /** `make`, made at most once, and remembered for `file` */
  keep(file: string, make: () => Promise<Buffer>): () => Promise<Buffer> {
    let bytes: Promise<Buffer> | undefined;
    const once = () => (bytes ??= make());
    this.made.set(file, once);
    if (this.made.size > this.most) this.made.delete(this.made.keys().next().value!);
    return once;
  }

  of(file: string): (() => Promise<Buffer>) | undefined {
    return this.made.get(file);
  }
}

/**
 * A file the plan says repeats one just written (sameAs): a hard link to it, one more name and no new
 * inode, bytes or write. A name the recycled tree already links to that file, still the recycled
 * inode, is left as it is: a recycled build rewrites the file once for all its names. The file it
 * repeats, or undefined when it is to be written as a file of its own (nothing written it could share).
 * Its twin, when it has one, is a file of its own (the lane makes it): a twin is written in place
 * when recycled, and a shared inode would change another name's.
 */
function linkedFile(
  file: OutputFile,
  full: string,
  was: Written | undefined,
  recent: RecentFiles,
  recycling: Recycling | undefined,
  calls: FileCallsHanded,
): Linkable | undefined {
  const target = file.sameAs === undefined ? undefined : recent.get(file.sameAs);
  if (target === undefined || (recycling && target.digest === undefined)) return undefined;
  const keep = was !== undefined && was[2] === file.sameAs && target.recycled && recycling!.linksHold;
  recycling?.digests.add(file.path, [target.digest!, target.length, file.sameAs]);
  if (!keep) {
    if (was === undefined) calls.folder(path.dirname(full));
    calls.link(target.full, full);
  }
  recent.note(file.path, { ...target, full, recycled: keep });
  return target;
}

/**
 * A one-piece body handed over with its folder, unless the recycled tree holds these very bytes;
 * whether it does. A recycled name that shared an inode is removed first (`shared`; `own` is then
 * undefined: the file is written as a new one). Noted as one a later file may link to when it gets no twin.
 */
function handWhole(
  calls: FileCallsHanded,
  recent: RecentFiles,
  recycling: Recycling | undefined,
  { file, full, shared, own }: RecycledName,
  data: Buffer,
  known: string | undefined,
): boolean {
  const digest = recycling && (known ?? digestOf(data));
  const same = recorded(recycling, file, data, own, false, digest);
  if (shared) calls.unlink(full);
  else if (own === undefined) calls.folder(path.dirname(full));
  if (!same) calls.whole(full, data, own?.[1]);
  // its inode is the recycled tree's when kept or written in place (a long recycled file is renamed over)
  recent.note(file, { full, length: data.length, digest, recycled: own !== undefined && (same || own[1] <= READ_AT_ONCE) });
  return same;
}

/** A short body's bytes (an alias's, for the archive: the file it repeats is not read back). */
function wholeOf(body: Body): Buffer {
  const made = split(body, undefined, false);
  return made.whole ?? Buffer.concat([...made.firstTwo, ...made.rest]);
}

/** A body whole, as its bytes (and their digest when known), or its first two pieces and the rest of them. */
type Split =
  | { readonly whole: Buffer; readonly digest?: string }
  | { readonly whole?: undefined; readonly firstTwo: readonly Buffer[]; readonly rest: Iterator<Buffer> & Iterable<Buffer> };

/**
 * A text or bytes given whole (most of a build's bodies, made when written or not) is taken as it is,
 * without a generator's turns. One longer than a piece (a carried day's graph, 25 MB at 40,000 access
 * points) goes the long way, as a list does: written by this thread, its twin compressed from its
 * file, never held whole for the writing thread or the compressor; unless the recycled tree holds
 * these very bytes (`was`), which is decided from memory, and nothing is written. With `lend`, a
 * long body's pieces are lent (core/body.ts), for writeLong, which writes each before the next.
 */
function split(body: Body, was: Written | undefined, lend: boolean): Split {
  const made = typeof body === "object" && "make" in body ? body.make() : body;
  const whole = typeof made === "string" ? Buffer.from(made, "utf8") : Buffer.isBuffer(made) ? made : undefined;
  if (whole !== undefined) {
    if (whole.length <= PIECE) return { whole };
    if (was !== undefined && was[1] === whole.length) {
      const digest = digestOf(whole);
      if (digest === was[0]) return { whole, digest };
    }
    const piece = (i: number) => whole.subarray(i * PIECE, (i + 1) * PIECE);
    return {
      firstTwo: [piece(0), piece(1)],
      rest: (function* () {
        for (let i = 2; i * PIECE < whole.length; i++) yield piece(i);
      })(),
    };
  }
  const rest = bodyPieces(made, lend);
  const first = rest.next();
  if (first.done) return { whole: Buffer.alloc(0) };
  const second = rest.next();
  return second.done ? { whole: first.value } : { firstTwo: [first.value, second.value], rest };
}

/** A body of several pieces, written by the build's own thread as they are rendered; its length, and whether the recycled tree held its bytes. */
async function writeLong(
  direct: FileCalls,
  { file, full, shared, own: was }: RecycledName,
  { firstTwo, rest }: { readonly firstTwo: readonly Buffer[]; readonly rest: Iterator<Buffer> & Iterable<Buffer> },
  recycling: Recycling | undefined,
  yielding: () => Promise<void> | undefined,
): Promise<{ readonly length: number; readonly same: boolean; readonly digest?: string }> {
  if (shared) direct.unlink(full);
  if (was === undefined) direct.folder(path.dirname(full));
  const { target, renamed } = direct.target(full, was?.[1]);
  const hash = recycling && createHash("sha1");
  let length = 0;
  const fd = direct.open(target, was?.[1]);
  try {
    for (const piece of firstTwo) length += writePiece(fd, piece, hash);
    for (const piece of rest) {
      length += writePiece(fd, piece, hash);
      await yielding();
    }
    if (was !== undefined) ftruncateSync(fd, length);
  } finally {
    closeSync(fd);
  }
  const digest = hash && ([hash.digest("base64url"), length] as const);
  if (digest) recycling!.digests.add(file, digest);
  const same = digest !== undefined && holds(was, ...digest);
  // A long body the recycled tree already holds (a day's graph carried from run to run, a list
  // that did not change) keeps its file: the new copy goes before its pages reach the disk.
  if (renamed) {
    if (same) unlinkSync(target);
    else renameSync(target, full);
  }
  return { length, same, digest: digest?.[0] };
}

/**
 * The files are written with synchronous calls: the promise API hands each call to libuv's pool and
 * back, which cost a build of small files several times the user time and about twice the system
 * time of the same calls made in order (docs/performance.md), and the writes land in the page cache
 * either way. The event loop is let run every few milliseconds, so that a signal (io/write/interrupt.ts)
 * and the twins' compressions are seen.
 */
function pauses(everyMs = 15): Pauses {
  let since = performance.now();
  const ran = () => {
    since = performance.now();
  };
  const due = () => {
    if (performance.now() - since < everyMs) return undefined;
    return new Promise<void>((ok) =>
      setImmediate(() => {
        ran();
        ok();
      }),
    );
  };
  return Object.assign(due, { ran });
}

/** A pause when one is due; `ran`: the event loop has just run (a loop resumed from any wait), none is due. */
type Pauses = (() => Promise<void> | undefined) & { readonly ran: () => void };

function writePiece(fd: number, piece: Buffer, hash: ReturnType<typeof createHash> | undefined): number {
  hash?.update(piece);
  for (let at = 0; at < piece.length;) at += writeSync(fd, piece, at);
  return piece.length;
}

/** Records a one-piece body's digest when recycling; whether the recycled tree holds these very bytes. */
function recorded(
  recycling: Recycling | undefined,
  file: string,
  data: Buffer,
  was: Written | undefined,
  twin = false,
  known?: string,
): boolean {
  if (!recycling) return false;
  const digest = known ?? digestOf(data);
  recycling.digests[twin ? "twin" : "add"](file, [digest, data.length]);
  return holds(was, digest, data.length);
}

/** Whether the recycled tree's file held these very bytes. */
const holds = (was: Written | undefined, digest: string | undefined, length: number): boolean =>
  was !== undefined && was[0] === digest && was[1] === length;

/** The recycled tree's twin of a file whose bytes it held (`same`): kept as it is. */
const twinKept = (recycling: Recycling | undefined, file: string, same: boolean): Written | undefined =>
  same ? wasIn(recycling, twinOf(file)) : undefined;

const gzipped = (data: Buffer) => gzipAsync(data, { level: TWIN.level });

/**
 * A long file's twin, compressed from the file as it is read. The build's thread runs each chunk's
 * turn through the streams: with the defaults (reads of 64 KiB, output of 16 KiB) those turns cost it
 * five times what they cost in chunks of a piece and a quarter piece (a 14 MB list: 35 against 7 ms),
 * about 1.5 s of a recycled cycle at 40,000 access points, which rewrites a GB of lists. The bytes
 * are the same however the input and output are cut.
 */
async function gzippedFile(file: string): Promise<Buffer> {
  // opened first: a file that cannot be read leaves no compressor behind
  const handle = await open(file, "r");
  const chunks: Buffer[] = [];
  const gz = createGzip({ level: TWIN.level, chunkSize: PIECE / 4 });
  gz.on("data", (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise<void>((ok, fail) => gz.once("end", ok).once("error", fail));
  ended.catch(() => {}); // awaited below, or the failure thrown from the writes
  // The file's pieces read into a buffer of the few kept, not a new one each (a stream's reads):
  // 650 new blocks of a MiB in a 40,000 build, from the C library's heap (docs/performance.md,
  // fortieth session). zlib reads a piece until its write's callback: only then is it filled again.
  const input = readBuffers.pop() ?? Buffer.allocUnsafeSlow(PIECE);
  let reusable = false;
  try {
    for (;;) {
      const { bytesRead } = await handle.read(input, 0, PIECE, null);
      if (bytesRead === 0) break;
      await new Promise<void>((ok, fail) => gz.write(input.subarray(0, bytesRead), (err) => (err ? fail(err) : ok())));
    }
    gz.end();
    await ended;
    reusable = true;
  } catch (err) {
    gz.destroy();
    throw err;
  } finally {
    await handle.close();
    // after a failure zlib may still hold it
    if (reusable && readBuffers.length < 4) readBuffers.push(input);
  }
  return Buffer.concat(chunks);
}
const readBuffers: Buffer[] = [];

/**
 * A file's gzip twin (core/routes/compression.ts), written after the file. When the recycled tree
 * holds the file's bytes and its twin, the twin stays as it is, never compressed again; else it is
 * made, and written unless the recycled twin has its bytes.
 */
async function writeTwin(
  root: string,
  file: string,
  kept: Written | undefined,
  recycling: Recycling | undefined,
  make: () => Promise<Buffer>,
  calls: () => Pick<FileCalls, "whole">,
): Promise<void> {
  const twin = twinOf(file);
  if (kept !== undefined) {
    recycling!.digests.twin(twin, kept);
    return;
  }
  const was = wasIn(recycling, twin);
  const data = await make();
  if (recorded(recycling, twin, data, was, true)) return;
  // its file's path was under the root, and so is the twin's (the same with ".gz")
  calls().whole(under(root, twin)!, data, was?.[1]);
}
