/** Response bodies as the plan gives them and as they are written: in pieces, never a whole long list at once. */

/**
 * A body: text (whole or in pieces), UTF-8 bytes, the items of a JSON list as UTF-8 bytes, or such a list written inside a
 * fixed text (`head` + list + `tail`: a GeoJSON FeatureCollection; a tail may hold the next list: the
 * nodes and links of a NetJSON graph). List items may be rendered lazily (an iterable used once): a
 * list is written in pieces as its items come, never held whole.
 */
export type Body = string | Buffer | Iterable<Buffer> | EnclosedList | TextPieces | Deferred;

/**
 * A body made only when it is written: a pass that wants the paths alone (the layout's, core/plan.ts)
 * never makes it. For bodies whose making costs more than their path (a link's detail, a graph's links,
 * the access points a list holds by status).
 */
export interface Deferred {
  readonly make: () => Body;
}
export const deferred = (make: () => Body): Deferred => ({ make });

/** A text given in pieces, written as they come (a host's rules file of hundreds of thousands of lines). */
export interface TextPieces {
  readonly text: Iterable<string>;
}

export interface EnclosedList {
  readonly head: string;
  readonly items: Iterable<Buffer>;
  readonly tail: string | EnclosedList;
}

/** Lists longer than this are written piece by piece. */
export const PIECE = 2 ** 20;

const [OPEN, COMMA, CLOSE] = ["[", ",", "]"].map((c) => Buffer.from(c));

/**
 * A body as UTF-8 pieces; a JSON list (alone or inside a head and a tail) in pieces of about PIECE
 * bytes, so a 60 MB list never exists whole.
 *
 * With `lend`, a piece before the last may be lent (see `lent`): its bytes are written over once two
 * more pieces were asked for, from this body or another lending one. The consumer that asks for that
 * (the build's writing of a long body, io/write/emit.ts) writes or copies each piece before it asks
 * for the third after it, and keeps none across a wait in which another body may be read.
 */
export function* bodyPieces(body: Body, lend = false): Generator<Buffer> {
  if (typeof body === "string") return yield Buffer.from(body, "utf8");
  if (Buffer.isBuffer(body)) return yield body;
  if ("text" in body) return yield* textPieces(body.text, lend);
  if ("make" in body) return yield* bodyPieces(body.make(), lend);
  const enclosed = "items" in body ? body : undefined;
  const head = enclosed ? Buffer.from(enclosed.head, "utf8") : undefined;
  let batch: Buffer[] = head ? [head, OPEN] : [OPEN];
  let size = (head?.length ?? 0) + 1;
  let empty = true;
  for (const item of enclosed ? enclosed.items : (body as Iterable<Buffer>)) {
    if (!empty) batch.push(COMMA);
    batch.push(item);
    empty = false;
    size += item.length + 1;
    if (size >= PIECE) {
      yield lend ? lent(batch, size) : Buffer.concat(batch);
      [batch, size] = [[], 0];
    }
  }
  batch.push(CLOSE);
  if (enclosed && typeof enclosed.tail === "string") batch.push(Buffer.from(enclosed.tail, "utf8"));
  yield Buffer.concat(batch);
  if (enclosed && typeof enclosed.tail !== "string") yield* bodyPieces(enclosed.tail, lend);
}

/**
 * Text pieces encoded into UTF-8 pieces of at most PIECE bytes (or one longer text alone), each text
 * written straight into a piece's bytes and the piece copied out: joined first, every piece of a long
 * body was a string of a MiB, made in V8's old generation at once (419 MiB of a recycled cycle's
 * garbage at 40,000 access points, an allocation profile). The bytes are those of the texts joined:
 * a surrogate pair split between two texts is encoded whole.
 */
function* textPieces(text: Iterable<string>, lend: boolean): Generator<Buffer> {
  // the one spare buffer, lent to one body at a time (a body read inside another's text makes its own)
  const bytes = spare ?? Buffer.allocUnsafe(PIECE);
  spare = undefined;
  let used = 0;
  try {
    for (const part of pairsWhole(text)) {
      // at most three UTF-8 bytes a code unit: counted only when that many might not fit
      const size = used + part.length * 3 > PIECE ? Buffer.byteLength(part, "utf8") : 0;
      if (used + size > PIECE) {
        if (used > 0) yield lend ? lent([bytes.subarray(0, used)], used) : Buffer.from(bytes.subarray(0, used));
        used = 0;
        if (size > PIECE) {
          yield Buffer.from(part, "utf8");
          continue;
        }
      }
      used += bytes.write(part, used, "utf8");
    }
    yield Buffer.from(bytes.subarray(0, used));
  } finally {
    spare = bytes;
  }
}
let spare: Buffer | undefined;

/**
 * The pieces before a long body's last, copied into one of three buffers in turn instead of a new
 * buffer each: a 40,000 build wrote about 1,300 such pieces, each a new block of a MiB from the C
 * library's heap, which keeps its high-water mark (docs/performance.md, fortieth session). A piece
 * that fits no buffer (an item longer than a piece) gets its own.
 */
const LENT: Buffer[] = [];
let lentTurn = 0;

/** `size`: about the parts' bytes (at least them) */
function lent(parts: readonly Buffer[], size: number): Buffer {
  if (size > 2 * PIECE) return Buffer.concat(parts);
  const into = (LENT[lentTurn] ??= Buffer.allocUnsafeSlow(2 * PIECE));
  lentTurn = (lentTurn + 1) % 3;
  let at = 0;
  for (const part of parts) at += part.copy(into, at);
  return into.subarray(0, at);
}

/** The texts, a high surrogate that ends one moved to the start of the next (encoded apart, each half would be U+FFFD). */
function* pairsWhole(text: Iterable<string>): Generator<string> {
  let held = "";
  for (let part of text) {
    if (held !== "") [part, held] = [held + part, ""];
    const last = part.charCodeAt(part.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) [part, held] = [part.slice(0, -1), part.slice(-1)];
    yield part;
  }
  if (held !== "") yield held;
}

/** A text made in pieces each time it is written, by `make` (a generator function): never held whole. */
export const piecesOf = (make: () => Iterator<string>): TextPieces => ({ text: { [Symbol.iterator]: make } });

/**
 * JSON.stringify's text of a plain JSON value (what JSON.parse gives: no toJSON) in pieces: the
 * members of objects one by one, each item of a list stringified alone, so that a long list is
 * never one string.
 */
export function jsonPieces(value: unknown): TextPieces {
  return piecesOf(() => jsonText(value));
}

function* jsonText(value: unknown): Generator<string> {
  if (Array.isArray(value)) {
    yield "[";
    // JSON.stringify writes null for an item it cannot write (undefined)
    for (let i = 0; i < value.length; i++) yield (i > 0 ? "," : "") + (JSON.stringify(value[i]) ?? "null");
    yield "]";
  } else if (value !== null && typeof value === "object") {
    let before = "{";
    for (const [key, member] of Object.entries(value)) {
      if (member === undefined) continue; // as JSON.stringify leaves it out
      yield `${before}${JSON.stringify(key)}:`;
      before = ",";
      yield* jsonText(member);
    }
    yield before === "{" ? "{}" : "}";
  } else yield JSON.stringify(value);
}

/**
 * A body's whole text: for small bodies, tests and a carried file read as one text; the build writes
 * the pieces. Bytes are decoded once, never copied first (a day's graph read from the build before
 * is 25 MB at 40,000 access points).
 */
export function bodyText(body: Body): string {
  if (typeof body === "string") return body;
  if (Buffer.isBuffer(body)) return body.toString("utf8");
  if ("text" in body) return [...body.text].join("");
  if ("make" in body) return bodyText(body.make());
  return Buffer.concat([...bodyPieces(body)]).toString("utf8");
}

/** A list's items rendered as they are written, one at a time: the list never exists whole. */
export function* rendered<T>(items: Iterable<T>, render: (item: T) => string | Buffer): Generator<Buffer> {
  for (const item of items) {
    const piece = render(item);
    yield typeof piece === "string" ? Buffer.from(piece, "utf8") : piece;
  }
}
