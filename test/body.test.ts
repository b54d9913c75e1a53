import { describe, expect, it } from "vitest";
import { bodyPieces, bodyText, jsonPieces, PIECE, piecesOf } from "../src/core/body.ts";

/** A text given in these parts, as the build writes it. */
const pieces = (parts: readonly string[]) => [...bodyPieces(piecesOf(() => parts[Symbol.iterator]()))];

describe("a text in pieces (core/body.ts)", () => {
  it("gives the UTF-8 bytes of the parts joined, in pieces of at most a PIECE, with characters of every width at the pieces' ends", () => {
    // ASCII, two-, three- and four-byte characters, parts of every size up to past a PIECE
    const chars = ["a", "é", "€", "😀", '"', "\n"];
    const parts: string[] = [];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let total = 0; total < 3.5 * PIECE;) {
      const size = next() % 5 === 0 ? next() % 300_000 : next() % 200;
      const part = Array.from({ length: size }, () => chars[next() % chars.length]).join("");
      parts.push(part);
      total += Buffer.byteLength(part);
    }
    parts.push("x".repeat(PIECE + 10)); // one text longer than a piece
    parts.push("", "end");
    const out = pieces(parts);
    expect(Buffer.concat(out).equals(Buffer.from(parts.join(""), "utf8"))).toBe(true);
    expect(out.length).toBeGreaterThan(4);
    // every piece a whole number of characters, and none longer than a PIECE but the long text's own
    for (const piece of out) {
      expect(piece.toString("utf8")).not.toContain("\ufffd");
      if (piece.length > PIECE) expect(piece.toString("latin1")).toBe("x".repeat(PIECE + 10));
    }
  });

  it("encodes a surrogate pair split between two texts whole, and a lone one as JSON's text would be encoded", () => {
    const parts = ["a\ud83d", "\ude00b", "\ud83d", "", "\ude00", "lone \ud800", " \udc00 end \ud83d"];
    expect(Buffer.concat(pieces(parts))).toEqual(Buffer.from(parts.join(""), "utf8"));
    expect(Buffer.concat(pieces(parts)).toString("utf8")).toContain("a😀b😀lone");
  });

  it("keeps a text that fits in a piece's bytes in one piece, and lends its bytes again after a body left midway", () => {
    // 400,000 characters: more than a third of a piece, fewer bytes than a piece
    expect(pieces(["x".repeat(400_000)]).map((p) => p.length)).toEqual([400_000]);
    expect(pieces(["é".repeat(300_000), "x".repeat(400_000)]).map((p) => p.length)).toEqual([1_000_000]);
    const left = bodyPieces(piecesOf(() => ["y".repeat(PIECE - 10), "z".repeat(100), "w"][Symbol.iterator]()));
    expect(left.next().value?.length).toBe(PIECE - 10);
    left.return(undefined);
    expect(pieces(["after ", "it"]).map(String)).toEqual(["after it"]);
  });

  it("gives one piece for a short text or an empty one, and pieces that stay as they were when the next body is made", () => {
    expect(pieces([]).map(String)).toEqual([""]);
    expect(pieces(["a", "b"]).map(String)).toEqual(["ab"]);
    const first = pieces(["first ", "body"]);
    const second = pieces(["second body, longer"]);
    expect(first.map(String)).toEqual(["first body"]);
    expect(second.map(String)).toEqual(["second body, longer"]);
  });

  it("lends a long body's pieces but the last from three buffers when asked: the same bytes, copied as they come", () => {
    const items = Array.from({ length: 80_000 }, (_, i) => Buffer.from(JSON.stringify({ id: i, name: "é".repeat(i % 70) })));
    const text = piecesOf(() => Array.from({ length: 12_000 }, (_, i) => `${i} ${"€".repeat(i % 300)}\n`)[Symbol.iterator]());
    for (const body of [items, text]) {
      const own = [...bodyPieces(body)];
      const lent = Array.from(bodyPieces(body, true), (p) => ({ copy: Buffer.from(p), backing: p.buffer }));
      expect(own.length).toBeGreaterThan(4);
      expect(Buffer.concat(lent.map((p) => p.copy)).equals(Buffer.concat(own))).toBe(true);
      // the pieces but the last from three buffers, the fourth in the first one's again
      expect(new Set(lent.slice(0, -1).map((p) => p.backing)).size).toBe(3);
      expect(lent[3].backing).toBe(lent[0].backing);
      expect(new Set(own.map((p) => p.buffer)).size).toBeGreaterThan(3);
    }
  });

  it("makes a body read inside another's text with its own bytes", () => {
    const inner = piecesOf(() => ["inner ", "text"][Symbol.iterator]());
    // the outer text's bytes are half made when the inner body's are made
    const outer = piecesOf(function* () {
      yield "outer [";
      for (const piece of bodyPieces(inner)) yield piece.toString("utf8");
      yield "]";
    });
    expect(bodyText(outer)).toBe("outer [inner text]");
    expect(Buffer.concat([...bodyPieces(outer)]).toString()).toBe("outer [inner text]");
    expect(bodyText(jsonPieces({ a: ["é", 1, null], b: "😀" }))).toBe(JSON.stringify({ a: ["é", 1, null], b: "😀" }));
  });
});
