import { closeSync, fstatSync, openSync, readSync } from "node:fs";

/**
 * A tar stream written straight into chunks of bytes, for archives of hundreds of thousands of small
 * files. tar-stream's packer makes a stream object, a callback and a header buffer for each entry,
 * and at 40,000 access points the API archive had 1.3 million entries (a folder per answer, each an
 * entry then): the archive took 76 s there, 46 s written this way (docs/performance.md). tar-stream's
 * header encoder is not among the package's exports, so the headers are encoded here byte for byte
 * as tar-stream encodes them (test/tar.test.ts compares the two on the same entries): ustar, and a
 * pax record for a name ustar cannot hold (not ASCII, or too long to split between its prefix and
 * name fields), under a header named "PaxHeader" as tar-stream names it. Only what the archives
 * hold: plain files (no folder entries: archive.ts), owner 0, no user or group name. Archives are
 * still read with tar-stream (archive.ts).
 */

const BLOCK = 512;
interface Entry {
  readonly name: string;
  readonly type: "file" | "pax-header";
  readonly mode: number;
  readonly size: number;
}

const TYPEFLAG = { file: 0x30, "pax-header": 0x78 } as const;
const MAGIC = Buffer.from("ustar\u000000", "latin1");

const padded = (size: number) => Math.ceil(size / BLOCK) * BLOCK;

/** Octal digits and a space, as tar-stream writes a field of `n` digits (all sevens when the value is too large). */
function octal(value: number, n: number): string {
  const digits = value.toString(8);
  return digits.length > n ? `${"7".repeat(n)} ` : `${digits.padStart(n, "0")} `;
}

/** `text` (ASCII, as a header's fields are) written into `b` at `at`; the sum of its bytes, for the checksum. */
function written(b: Buffer, text: string, at: number): number {
  b.write(text, at, "latin1");
  let sum = 0;
  for (let i = 0; i < text.length; i++) sum += text.charCodeAt(i);
  return sum;
}

/** The entry's ustar fields for `name`: its prefix and name, or undefined when ustar cannot hold it. */
function ustarName(name: string): readonly [prefix: string, name: string] | undefined {
  if (Buffer.byteLength(name) !== name.length) return undefined; // not ASCII
  let prefix = "";
  while (name.length > 100) {
    const i = name.indexOf("/");
    if (i === -1) return undefined;
    prefix += prefix ? `/${name.slice(0, i)}` : name.slice(0, i);
    name = name.slice(i + 1);
  }
  return prefix.length > 155 ? undefined : [prefix, name];
}

/** A pax record's line, its length counted in itself. */
function paxRecord(text: string): Buffer {
  const length = Buffer.byteLength(text);
  let digits = Math.floor(Math.log10(length)) + 1;
  if (length + digits >= 10 ** digits) digits++;
  return Buffer.from(`${length + digits}${text}`);
}

/** Chunks kept for reuse: as many as the archive's compressor holds at once (its lag), and a few more. */
const SPARE_CHUNKS = 12;

/**
 * A tar stream in chunks of `size` bytes, each a buffer that the consumer may keep, or hand back
 * (`giveBack`) once done with it, to be filled again. A file's bytes are read or copied into the
 * chunks themselves, not into a buffer of their own. `mtime`: every entry's, in seconds.
 *
 * Why hand back: a new block of a MiB a chunk (1,352 of them in a 40,000 build's archive) comes from
 * the C library's heap once its mapping threshold has risen, and that heap keeps its high-water mark
 * (docs/performance.md, fortieth session).
 */
export class TarWriter {
  private chunk: Buffer;
  private at = 0;
  private readonly done: Buffer[] = [];
  private readonly fixed = new Map<string, { readonly block: Buffer; readonly sum: number }>();
  /** chunks handed back, filled again before a new one is made */
  private readonly spare: Buffer[] = [];
  /** the blocks this writer made: the only ones giveBack takes (another's buffer is never written into) */
  private readonly made = new WeakSet<ArrayBufferLike>();

  constructor(
    private readonly mtime: number,
    private readonly size = 2 ** 20,
  ) {
    this.chunk = this.block();
  }

  /** A chunk that take() gave, which its consumer no longer reads: its bytes are written over. */
  giveBack(chunk: Buffer): void {
    // one of its own chunks (not a long header's room of its own, nor another's buffer), a few kept at most
    if (this.made.has(chunk.buffer) && this.spare.length < SPARE_CHUNKS) this.spare.push(Buffer.from(chunk.buffer, 0, this.size));
  }

  private block(): Buffer {
    const b = Buffer.allocUnsafeSlow(this.size); // a block of its own, not a slice of Node.js's pool
    this.made.add(b.buffer);
    return b;
  }

  /** The chunks completed so far, taken. */
  take(): Buffer[] {
    return this.done.splice(0);
  }

  /**
   * A file of the disk, a step at each chunk it fills: the consumer may take the chunks and wait before
   * the next step. It must not change while it is read; after an error the stream is broken, and the
   * writer is not used again.
   */
  *fileInChunks(name: string, file: string): Generator<void, void, void> {
    const fd = openSync(file, "r");
    try {
      const size = fstatSync(fd).size;
      yield* this.content(name, size, (into, at, from, n) => {
        for (let read = 0; read < n;) {
          const got = readSync(fd, into, at + read, n - read, from + read);
          if (got === 0) throw new Error(`${file} became shorter while it was archived`);
          read += got;
        }
      });
    } finally {
      closeSync(fd);
    }
  }

  /** A file's bytes at hand (a body the build has just written), a step at each chunk it fills. */
  *bytesInChunks(name: string, data: Buffer): Generator<void, void, void> {
    yield* this.content(name, data.length, (into, at, from, n) => void data.copy(into, at, from, from + n));
  }

  /**
   * A file's header, then its `size` bytes put straight into the chunks (`put` copies those from `from`
   * on), a long file across several of them, with a step after each chunk filled: no buffer of its
   * own, and no more of it in the chunks taken at once than the consumer lets through.
   */
  private *content(
    name: string,
    size: number,
    put: (into: Buffer, at: number, from: number, n: number) => void,
  ): Generator<void, void, void> {
    this.fileHeader(name, size);
    for (let done = 0; done < size;) {
      if (this.at === this.chunk.length) {
        this.flush();
        yield;
      }
      const n = Math.min(size - done, this.chunk.length - this.at);
      put(this.chunk, this.at, done, n);
      this.at += n;
      done += n;
    }
    this.padding(size);
  }

  /** A file's header alone: its bytes go elsewhere (a gzip member of their own), after cut(), then padding(). */
  fileHeader(name: string, size: number): void {
    if (size >= 8 ** 11) throw new Error(`${name}: over 8 GiB, more than a ustar header's size field holds`);
    this.header({ name, type: "file", mode: 0o644, size });
  }

  /** Ends the chunk here: what follows begins a new one. */
  cut(): void {
    this.flush();
  }

  /** The zeros after a file's `size` bytes, to the end of its last block. */
  padding(size: number): void {
    const pad = padded(size) - size;
    if (pad > 0) {
      const [into, at] = this.room(pad);
      into.fill(0, at, at + pad);
    }
  }

  /** The end of the archive, and the last chunk. */
  end(): void {
    const [into, at] = this.room(2 * BLOCK);
    into.fill(0, at, at + 2 * BLOCK);
    this.flush();
  }

  private header(entry: Entry): void {
    const names = ustarName(entry.name);
    if (names) return this.ustar(entry, names);
    const record = paxRecord(` path=${entry.name}\n`);
    const pax = { ...entry, name: "PaxHeader", type: "pax-header", size: record.length } as const;
    this.ustar(pax, ["", pax.name]);
    const [into, at] = this.room(padded(record.length));
    record.copy(into, at);
    into.fill(0, at + record.length, at + padded(record.length));
    this.ustar({ ...pax, type: entry.type, size: entry.size }, ["", pax.name]);
  }

  private ustar(entry: Entry, [prefix, name]: readonly [string, string]): void {
    const fixed = this.fixedFields(entry);
    const [b, at] = this.room(BLOCK);
    // 1.3 million headers at 40,000 access points: the fields every header of its kind shares are copied, and their sum
    b.set(fixed.block, at);
    let sum = fixed.sum + written(b, name, at) + written(b, octal(entry.size, 11), at + 124);
    if (prefix) sum += written(b, prefix, at + 345);
    b.write(octal(sum, 6), at + 148, "latin1");
  }

  /** A header's fields but its name, prefix, size and checksum, by type and mode; the sum of their bytes, the checksum's counted as spaces. */
  private fixedFields(entry: Entry): { readonly block: Buffer; readonly sum: number } {
    const key = `${entry.type} ${entry.mode}`;
    const known = this.fixed.get(key);
    if (known) return known;
    const b = Buffer.alloc(BLOCK);
    b.write(octal(entry.mode & 0o7777, 6), 100, "latin1");
    b.write(octal(0, 6), 108, "latin1"); // uid
    b.write(octal(0, 6), 116, "latin1"); // gid
    b.write(octal(this.mtime, 11), 136, "latin1");
    b[156] = TYPEFLAG[entry.type];
    MAGIC.copy(b, 257);
    b.write(octal(0, 6), 329, "latin1"); // device numbers
    b.write(octal(0, 6), 337, "latin1");
    let sum = 8 * 0x20;
    for (let i = 0; i < BLOCK; i++) sum += b[i];
    const made = { block: b, sum };
    this.fixed.set(key, made);
    return made;
  }

  /** `bytes` of room in the stream: where they are (a chunk of their own when they are longer than one). */
  private room(bytes: number): readonly [Buffer, number] {
    if (this.at + bytes > this.chunk.length) this.flush();
    if (bytes > this.chunk.length) {
      const own = Buffer.allocUnsafe(bytes);
      this.done.push(own);
      return [own, 0];
    }
    const at = this.at;
    this.at += bytes;
    return [this.chunk, at];
  }

  private flush(): void {
    if (this.at === 0) return;
    this.done.push(this.chunk.subarray(0, this.at));
    this.chunk = this.spare.pop() ?? this.block();
    this.at = 0;
  }
}
