import { hash as digest } from "node:crypto";
import { closeSync, openSync, readSync, renameSync, unlinkSync, writeSync } from "node:fs";

/**
 * The digests record of a recyclable tree (FILES.fileDigests): every file's SHA-1 and length, written
 * as the build writes its files, and read back by the next build that recycles the tree.
 */

export const DIGESTS_FORMAT = "mesh-api-files/3";

/**
 * A file as the digests record it: its SHA-1 (base64url) and its length, and the earlier file whose
 * inode it shares (a hard link the build made: written in place, that file changes this one too).
 */
export type Written = readonly [digest: string, bytes: number, linkedTo?: string];

// the one-shot form: half the cost of a Hash object per file, for the hundreds of thousands a build writes
export const digestOf = (data: Buffer): string => digest("sha1", data, "base64url");

const SHA1_BYTES = 20;
/** A SHA-1 as base64url writes it: 27 characters (without padding), the last one's two spare bits zero. */
const SHA1_CHARS = 27;
const INVALID = 0xff;
/** each byte's value as a base64url character, or INVALID */
const BASE64URL = (() => {
  const table = new Uint8Array(256).fill(INVALID);
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  for (let i = 0; i < alphabet.length; i++) table[alphabet.charCodeAt(i)] = i;
  return table;
})();

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
  /** each slot's name, so that the names left are listed without the map's entries made one by one */
  private named: string[] = [];
  private digests = Buffer.alloc(0);
  private lengths = new Float64Array(0);
  /** each slot's link: the slot of the file it shares an inode with, or -1 */
  private links = new Int32Array(0);
  private taken = new Uint8Array(0);
  private used = 0;

  /**
   * Adds a file; false when `sha1` is no SHA-1 in base64url, the name is there already, or the file
   * it is linked to is not (a link names an earlier file).
   */
  add(name: string, sha1: string, length: number, linkedTo?: string): boolean {
    // any character outside ASCII makes more bytes than characters, and is no base64url either
    const bytes = Buffer.from(sha1, "utf8");
    return bytes.length === SHA1_CHARS && this.addRaw(name, bytes, 0, length, linkedTo);
  }

  /**
   * Adds a file whose SHA-1 is the base64url at `from` in `source` (a record's bytes, read without
   * a string of it); false when it is no SHA-1 in base64url or the name is there already.
   */
  addRaw(name: string, source: Buffer, from: number, length: number, linkedTo?: string): boolean {
    if (this.slots.has(name)) return false;
    const link = linkedTo === undefined ? -1 : (this.slots.get(linkedTo) ?? -2);
    if (link === -2) return false;
    this.room();
    // 27 characters of 6 bits are 162 bits: the 20 bytes, then two spare bits that must be zero
    let at = this.used * SHA1_BYTES;
    let bits = 0;
    let held = 0;
    for (let i = from; i < from + SHA1_CHARS; i++) {
      const value = BASE64URL[source[i]];
      if (value === INVALID) return false;
      bits = ((bits << 6) | value) & 0xffffff;
      held += 6;
      if (held >= 8) {
        held -= 8;
        this.digests[at++] = (bits >> held) & 0xff;
      }
    }
    if ((bits & ((1 << held) - 1)) !== 0) return false;
    this.slots.set(name, this.used);
    this.named.push(name);
    this.links[this.used] = link;
    this.lengths[this.used++] = length;
    return true;
  }

  /** Room for one more slot: the arrays doubled when full. */
  private room(): void {
    if (this.used >= this.lengths.length) {
      const digests = Buffer.alloc(Math.max(1024, this.lengths.length * 2) * SHA1_BYTES);
      this.digests.copy(digests);
      this.digests = digests;
      const lengths = new Float64Array(Math.max(1024, this.lengths.length * 2));
      lengths.set(this.lengths);
      this.lengths = lengths;
      const links = new Int32Array(lengths.length);
      links.set(this.links);
      this.links = links;
      const taken = new Uint8Array(lengths.length);
      taken.set(this.taken);
      this.taken = taken;
    }
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
    const digest = this.digests.toString("base64url", slot * SHA1_BYTES, (slot + 1) * SHA1_BYTES);
    const link = this.links[slot];
    return link < 0 ? [digest, this.lengths[slot]] : [digest, this.lengths[slot], this.named[link]];
  }

  /** The arrays cut to the files added, once all are: their doubling left up to half of them unused. */
  fit(): void {
    this.digests = Buffer.from(this.digests.subarray(0, this.used * SHA1_BYTES));
    this.lengths = this.lengths.slice(0, this.used);
    this.links = this.links.slice(0, this.used);
    this.taken = this.taken.slice(0, this.used);
  }

  /** The first and the last file the record says share an inode with an earlier one, with that one's name. */
  linkSamples(): [string, string][] {
    const samples: [string, string][] = [];
    const sample = (slot: number) => this.links[slot] >= 0 && samples.push([this.named[slot], this.named[this.links[slot]]]);
    for (let slot = 0; slot < this.used && !sample(slot); slot++);
    for (let slot = this.used - 1; slot >= 0 && !sample(slot); slot--);
    return samples;
  }

  /** The files known and not taken. */
  *names(): IterableIterator<string> {
    for (let slot = 0; slot < this.used; slot++) if (this.taken[slot] === 0) yield this.named[slot];
  }

  clear(): void {
    this.slots.clear();
    this.named = [];
    this.digests = Buffer.alloc(0);
    this.lengths = new Float64Array(0);
    this.links = new Int32Array(0);
    this.taken = new Uint8Array(0);
    this.used = 0;
  }
}

/**
 * The digests record as DigestRecord writes it, read straight into KnownFiles: JSON.parse made an
 * object of every entry first, beside the map and the record's text. Each name is its own string,
 * decoded from the bytes, so none holds the record's text; the digests go from their base64url
 * straight into the slots' bytes, and the record is read byte by byte with no string made to check it
 * (1.1 s for the 606,000 entries of a cycle at 40,000 access points, with a string per check).
 * Anything but the record's exact form (a name twice, a digest that is no SHA-1 in base64url, a length
 * not as JSON writes it) is unreadable (undefined), and the tree is then emptied.
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
      // "<name>":["<digest>",<length>] or "<name>":["<digest>",<length>,"<linked to>"], then a comma and the next, or the end
      const named = stringAt(bytes, at, end);
      if (named === undefined) return undefined;
      const [name, close] = named;
      const digestAt = close + 4;
      const digestEnd = digestAt + SHA1_CHARS;
      if (digestEnd + 2 >= end || bytes[close + 1] !== COLON || bytes[close + 2] !== OPEN || bytes[close + 3] !== QUOTE) return undefined;
      if (bytes[digestEnd] !== QUOTE || bytes[digestEnd + 1] !== COMMA) return undefined;
      // a length as JSON writes a number: digits, no leading zero
      let lengthEnd = digestEnd + 2;
      let length = 0;
      for (; lengthEnd < end && bytes[lengthEnd] !== CLOSE && bytes[lengthEnd] !== COMMA; lengthEnd++) {
        const digit = bytes[lengthEnd] - ZERO;
        if (digit < 0 || digit > 9 || (length === 0 && lengthEnd > digestEnd + 2)) return undefined;
        length = length * 10 + digit;
      }
      // (an exact sum up to 2^53 - 1; anything longer ends at 2^53 or above, never safe)
      if (lengthEnd === digestEnd + 2 || lengthEnd >= end || !Number.isSafeInteger(length)) return undefined;
      let linkedTo: string | undefined;
      if (bytes[lengthEnd] === COMMA) {
        const linked = stringAt(bytes, lengthEnd + 1, end);
        if (linked === undefined || bytes[linked[1] + 1] !== CLOSE) return undefined;
        [linkedTo, lengthEnd] = [linked[0], linked[1] + 1];
      }
      if (!known.addRaw(name, bytes, digestAt, length, linkedTo)) return undefined;
      at = lengthEnd + 1;
      if (at < end && !(bytes[at++] === COMMA && at < end)) return undefined;
    }
  } catch {
    return undefined; // a name JSON cannot read
  }
  known.fit();
  return known;
}

/** The JSON string at `at` (its opening quote), and where its closing quote is; undefined when there is none before `end`. */
function stringAt(bytes: Buffer, at: number, end: number): readonly [string, number] | undefined {
  if (bytes[at] !== QUOTE) return undefined;
  let close = at + 1;
  let escaped = false;
  for (; close < end; close++) {
    const c = bytes[close];
    if (c === QUOTE) break;
    // JSON holds no raw control character in a string; an escaped one is JSON.parse's to refuse
    if (c < 0x20) return undefined;
    if (c === BACKSLASH) [escaped, close] = [true, close + 1];
  }
  if (close >= end) return undefined;
  const raw = bytes.toString("utf8", at + 1, close);
  return [escaped ? (JSON.parse(`"${raw}"`) as string) : raw, close];
}

const [QUOTE, BACKSLASH, COMMA, COLON, OPEN, CLOSE, ZERO] = ['"', "\\", ",", ":", "[", "]", "0"].map((c) => c.charCodeAt(0));

/** Where a loop of the build records its files (DigestRecord.part). */
export interface DigestEntries {
  /** a file the plan writes, in the loop's order */
  add(file: string, written: Written): void;
  /** a gzip twin, whenever its compression ends */
  twin(file: string, written: Written): void;
}

/**
 * The digests record, `{"format":…,"files":{<path>:[<digest>,<length>(,<linked to>)],…}}`, the bytes JSON.stringify
 * gives such an object: written as the files are, to a file beside it renamed into place at the end,
 * so that the build never holds an entry a file (at 40,000 access points 685,000 entries, the first
 * cycle's peak of memory, docs/performance.md). The files in the order the build writes them, which
 * its plan decides: a build that writes the parts of its plan side by side records each part's files
 * apart (`part`), each in a file of its own, put after the first in the parts' order at the end. The
 * twins, recorded as their compressions end, kept apart and written last in code-unit order. The
 * same dump gives the same bytes.
 */
export class DigestRecord implements DigestEntries {
  private readonly main: EntryFile;
  private readonly parts: EntryFile[] = [];
  private readonly twins = new Map<string, Written>();

  constructor(private readonly file: string) {
    this.main = new EntryFile(`${file}.part`, `{"format":${JSON.stringify(DIGESTS_FORMAT)},"files":{`);
  }

  add(file: string, written: Written): void {
    this.main.entry(file, written);
  }

  twin(file: string, written: Written): void {
    this.twins.set(file, written);
  }

  /** Where the n-th part of the plan records its files (the first: this record itself). */
  part(n: number): DigestEntries {
    if (n === 0) return this;
    const entries = (this.parts[n - 1] ??= new EntryFile(`${this.file}.part-${n}`, ""));
    return { add: (file, written) => entries.entry(file, written), twin: (file, written) => this.twin(file, written) };
  }

  /** the other parts' entries, the twins, the end, and the record in place */
  finish(): void {
    for (const part of this.parts) this.main.take(part);
    for (const file of [...this.twins.keys()].sort()) this.main.entry(file, this.twins.get(file)!);
    this.twins.clear();
    this.main.end("}}\n");
    renameSync(this.main.file, this.file);
  }

  close(): void {
    this.main.close();
    for (const part of this.parts) part.close();
  }
}

/** Entries of the record written to a file as they come, a few hundred kB at a time. */
class EntryFile {
  private fd: number | undefined;
  private pending: string[] = [];
  private size = 0;
  /** whether an entry was written: the next one is put after a comma */
  private any = false;

  constructor(
    readonly file: string,
    head: string,
  ) {
    this.fd = openSync(file, "wx");
    this.pending.push(head);
  }

  entry(file: string, [sha, bytes, linkedTo]: Written): void {
    const link = linkedTo === undefined ? "" : `,${JSON.stringify(linkedTo)}`;
    this.text(`${this.any ? "," : ""}${JSON.stringify(file)}:[${JSON.stringify(sha)},${bytes}${link}]`);
    this.any = true;
  }

  /** Another file's entries after these, that file removed. */
  take(other: EntryFile): void {
    other.flush();
    other.close();
    if (other.any) {
      if (this.any) this.text(",");
      this.flush();
      // a piece at a time: a build's resources are most of its 685,000 entries at 40,000 access points (tens of MB)
      const piece = Buffer.alloc(1 << 20);
      const from = openSync(other.file, "r");
      try {
        for (let read; (read = readSync(from, piece, 0, piece.length, null)) > 0;)
          for (let at = 0; at < read;) at += writeSync(this.fd!, piece, at, read - at);
      } finally {
        closeSync(from);
      }
      this.any = true;
    }
    unlinkSync(other.file);
  }

  end(text: string): void {
    this.text(text);
    this.flush();
    this.close();
  }

  close(): void {
    const fd = this.fd;
    // forgotten first: a close that fails is not tried again (by emitTree's finally) over the first error
    this.fd = undefined;
    if (fd !== undefined) closeSync(fd);
  }

  private text(text: string): void {
    this.pending.push(text);
    this.size += text.length;
    if (this.size >= 256 * 1024) this.flush();
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    const data = Buffer.from(this.pending.join(""), "utf8");
    for (let at = 0; at < data.length;) at += writeSync(this.fd!, data, at);
    this.pending = [];
    this.size = 0;
  }
}
