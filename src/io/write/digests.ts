import { hash as digest } from "node:crypto";
import { closeSync, openSync, renameSync, writeSync } from "node:fs";

/**
 * The digests record of a recyclable tree (FILES.fileDigests): every file's SHA-1 and length, written
 * as the build writes its files, and read back by the next build that recycles the tree.
 */

export const DIGESTS_FORMAT = "mesh-api-files/2";

/** A file as the digests record it: its SHA-1 (base64url) and its length. */
export type Written = readonly [digest: string, bytes: number];

// the one-shot form: half the cost of a Hash object per file, for the hundreds of thousands a build writes
export const digestOf = (data: Buffer): string => digest("sha1", data, "base64url");

const SHA1_BYTES = 20;
/** A SHA-1 as base64url writes it: 27 characters, the last one's two spare bits zero. */
const SHA1_BASE64URL = /^[A-Za-z0-9_-]{26}[AEIMQUYcgkosw048]$/;

/**
 * The recycled tree's files as its record names them, each taken out as the build writes it; what is
 * left in the end is what the build no longer writes. Built to be small: at 40,000 access points it
 * holds 685,000 files through most of a recycled build, and held as a map of [digest, length] pairs it
 * was the largest thing in the build's memory (128 of about 300 MB, a heap snapshot). Now a name maps
 * to a slot number, and the slots' digests (20 bytes each) and lengths are kept in flat arrays. A
 * file taken is marked in its slot, not deleted from the map: deleting 600,000 names took a quarter
 * of a second (a micro-benchmark), and the map's table is as large either way until the end.
 */
export class KnownFiles {
  private readonly slots = new Map<string, number>();
  private digests = Buffer.alloc(0);
  private lengths = new Float64Array(0);
  private taken = new Uint8Array(0);
  private used = 0;

  /** Adds a file; false when `sha1` is no SHA-1 in base64url or the name is there already. */
  add(name: string, sha1: string, length: number): boolean {
    if (!SHA1_BASE64URL.test(sha1) || this.slots.has(name)) return false;
    if (this.used >= this.lengths.length) {
      const digests = Buffer.alloc(Math.max(1024, this.lengths.length * 2) * SHA1_BYTES);
      this.digests.copy(digests);
      this.digests = digests;
      const lengths = new Float64Array(Math.max(1024, this.lengths.length * 2));
      lengths.set(this.lengths);
      this.lengths = lengths;
      const taken = new Uint8Array(lengths.length);
      taken.set(this.taken);
      this.taken = taken;
    }
    this.digests.write(sha1, this.used * SHA1_BYTES, SHA1_BYTES, "base64url");
    this.lengths[this.used] = length;
    this.slots.set(name, this.used++);
    return true;
  }

  /** What the record says of `name`, or undefined (also once it is taken). */
  get(name: string): Written | undefined {
    const slot = this.slotOf(name);
    return slot === undefined ? undefined : this.written(slot);
  }

  /** What the record says of `name`, which leaves the files known. */
  take(name: string): Written | undefined {
    const slot = this.slotOf(name);
    if (slot === undefined) return undefined;
    this.taken[slot] = 1;
    return this.written(slot);
  }

  private slotOf(name: string): number | undefined {
    const slot = this.slots.get(name);
    return slot === undefined || this.taken[slot] === 1 ? undefined : slot;
  }

  private written(slot: number): Written {
    return [this.digests.toString("base64url", slot * SHA1_BYTES, (slot + 1) * SHA1_BYTES), this.lengths[slot]];
  }

  /** The arrays cut to the files added, once all are: their doubling left up to half of them unused. */
  fit(): void {
    this.digests = Buffer.from(this.digests.subarray(0, this.used * SHA1_BYTES));
    this.lengths = this.lengths.slice(0, this.used);
    this.taken = this.taken.slice(0, this.used);
  }

  /** The files known and not taken. */
  *names(): IterableIterator<string> {
    for (const [name, slot] of this.slots) if (this.taken[slot] === 0) yield name;
  }

  clear(): void {
    this.slots.clear();
    this.digests = Buffer.alloc(0);
    this.lengths = new Float64Array(0);
    this.taken = new Uint8Array(0);
    this.used = 0;
  }
}

/**
 * The digests record as DigestRecord writes it, read straight into KnownFiles: JSON.parse made an
 * object of every entry first, beside the map and the record's text. Each name is its own string,
 * decoded from the bytes, so none holds the record's text. Anything but the record's exact form (a
 * name twice, a digest that is no SHA-1 in base64url, a length not as JSON writes it) is unreadable
 * (undefined), and the tree is then emptied.
 */
export function parseDigests(bytes: Buffer | undefined): KnownFiles | undefined {
  if (bytes === undefined) return undefined;
  const head = `{"format":${JSON.stringify(DIGESTS_FORMAT)},"files":{`;
  const end = bytes.length - "}}\n".length;
  const has = (at: number, text: string) => bytes.toString("latin1", at, at + text.length) === text;
  if (!has(0, head) || end < head.length || !has(end, "}}\n")) return undefined;
  const known = new KnownFiles();
  try {
    for (let at = head.length; at < end;) {
      // "<name>":["<digest>",<length>], then a comma and the next, or the end
      if (bytes[at] !== QUOTE) return undefined;
      let close = at + 1;
      let escaped = false;
      while (close < end && bytes[close] !== QUOTE) {
        if (bytes[close] === BACKSLASH) [escaped, close] = [true, close + 1];
        close++;
      }
      const raw = bytes.toString("utf8", at + 1, close);
      // JSON holds no raw control character in a string; the escapes are JSON's to read
      if (/[\u0000-\u001f]/.test(raw)) return undefined;
      const name = escaped ? (JSON.parse(`"${raw}"`) as string) : raw;
      if (!has(close, '":["')) return undefined;
      const digestAt = close + 4;
      const digestEnd = bytes.indexOf(QUOTE, digestAt);
      const lengthEnd = digestEnd < 0 ? -1 : bytes.indexOf("]", digestEnd);
      if (lengthEnd < 0 || lengthEnd >= end || !has(digestEnd, '",')) return undefined;
      const length = bytes.toString("latin1", digestEnd + 2, lengthEnd);
      // a length as JSON writes a number
      if (!/^(?:0|[1-9][0-9]*)$/.test(length) || !Number.isSafeInteger(Number(length))) return undefined;
      if (!known.add(name, bytes.toString("latin1", digestAt, digestEnd), Number(length))) return undefined;
      at = lengthEnd + 1;
      if (at < end && !(bytes[at++] === COMMA && at < end)) return undefined;
    }
  } catch {
    return undefined; // a name JSON cannot read
  }
  known.fit();
  return known;
}

const [QUOTE, BACKSLASH, COMMA] = ['"', "\\", ","].map((c) => c.charCodeAt(0));

/**
 * The digests record, `{"format":…,"files":{<path>:[<digest>,<length>],…}}`, the bytes JSON.stringify
 * gives such an object: written as the files are, to a file beside it renamed into place at the end,
 * so that the build never holds an entry a file (at 40,000 access points 685,000 entries, the first
 * cycle's peak of memory, docs/performance.md). The files in the order the build writes them, which
 * its plan decides; the twins, recorded as their compressions end, kept apart and written last in
 * code-unit order. The same dump gives the same bytes.
 */
export class DigestRecord {
  private readonly part: string;
  private fd: number | undefined;
  private pending: string[] = [];
  private size = 0;
  private first = true;
  private readonly twins = new Map<string, Written>();

  constructor(private readonly file: string) {
    this.part = `${file}.part`;
    this.fd = openSync(this.part, "wx");
    this.pending.push(`{"format":${JSON.stringify(DIGESTS_FORMAT)},"files":{`);
  }

  /** a file the plan writes, in the plan's order */
  add(file: string, written: Written): void {
    this.entry(file, written);
  }

  /** a gzip twin, whenever its compression ends */
  twin(file: string, written: Written): void {
    this.twins.set(file, written);
  }

  /** the twins, the end, and the record in place */
  finish(): void {
    for (const file of [...this.twins.keys()].sort()) this.entry(file, this.twins.get(file)!);
    this.twins.clear();
    this.pending.push("}}\n");
    this.flush();
    this.close();
    renameSync(this.part, this.file);
  }

  close(): void {
    const fd = this.fd;
    // forgotten first: a close that fails is not tried again (by emitTree's finally) over the first error
    this.fd = undefined;
    if (fd !== undefined) closeSync(fd);
  }

  private entry(file: string, [sha, bytes]: Written): void {
    const text = `${this.first ? "" : ","}${JSON.stringify(file)}:[${JSON.stringify(sha)},${bytes}]`;
    this.first = false;
    this.pending.push(text);
    this.size += text.length;
    if (this.size >= 256 * 1024) this.flush();
  }

  private flush(): void {
    const data = Buffer.from(this.pending.join(""), "utf8");
    for (let at = 0; at < data.length;) at += writeSync(this.fd!, data, at);
    this.pending = [];
    this.size = 0;
  }
}
