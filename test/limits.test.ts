import { mkdirSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { validate } from "../src/index.ts";
import { MAX_JSON_FILE_BYTES, MAX_RECORD_BYTES } from "../src/io/read/load.ts";
import { formatProblem } from "../src/core/problems.ts";
import { tempDir } from "./support/tree.ts";

/** The documented limits: a record at most 1 MiB, a .json file at most 256 MiB; both refused with a clear, located error. */

/** A dump of `files`, with an empty link file unless they hold one (a dump without any is an error of its own). */
function dump(files: Record<string, string | Buffer>): string {
  const dir = tempDir();
  for (const [name, body] of Object.entries({ "links/l.ndjson": "", ...files })) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), body);
  }
  return dir;
}

const ap = (ip: string, extra: Record<string, unknown> = {}) => JSON.stringify({ main_ip: ip, ...extra });

describe("limits", () => {
  it("refuses an NDJSON record over 1 MiB by its line, and reads the records around it", async () => {
    const big = ap("10.0.0.2", { owner: "x".repeat(MAX_RECORD_BYTES) });
    const fits = ap("10.0.0.4", { owner: "y".repeat(MAX_RECORD_BYTES - 100) });
    const r = await validate({ data: dump({ "accesspoints/a.ndjson": [ap("10.0.0.1"), big, ap("10.0.0.3"), fits, ""].join("\n") }) });
    expect(r.problems.map(formatProblem)).toEqual(["error: accesspoints/a.ndjson:2 $: record larger than 1 MiB"]);
  });

  it("refuses a .json file over 256 MiB before reading it", async () => {
    const dir = dump({ "accesspoints/a.ndjson": ap("10.0.0.1"), "links/huge.json": "" });
    truncateSync(path.join(dir, "links/huge.json"), MAX_JSON_FILE_BYTES + 1); // sparse: no disk used
    const r = await validate({ data: dir });
    expect(r.problems.map(formatProblem).join("\n")).toContain(
      "links/huge.json $: file of 268435457 bytes is larger than the 256 MiB allowed for .json",
    );
  });

  it("refuses bytes that are not UTF-8, by line", async () => {
    const r = await validate({
      data: dump({
        "accesspoints/a.ndjson": Buffer.concat([Buffer.from(ap("10.0.0.1") + "\n"), Buffer.from([0x7b, 0xc3, 0x28, 0x7d, 0x0a])]),
      }),
    });
    expect(r.problems.map(formatProblem)).toEqual(["error: accesspoints/a.ndjson:2 $: not valid UTF-8"]);
  });

  it("accepts a BOM, CRLF line ends and blank lines", async () => {
    const r = await validate({ data: dump({ "accesspoints/a.ndjson": `\ufeff${ap("10.0.0.1")}\r\n\r\n${ap("10.0.0.2")}\r\n` }) });
    expect(r.problems).toEqual([]);
    expect(r.summary.accesspoints).toBe(2);
  });

  it("refuses a BOM at the start of a later line (a sign of files pasted together), by line", async () => {
    const r = await validate({ data: dump({ "accesspoints/a.ndjson": `\ufeff${ap("10.0.0.1")}\n\ufeff${ap("10.0.0.2")}\n` }) });
    expect(r.problems.map(formatProblem)).toEqual([
      "error: accesspoints/a.ndjson:2 $: byte order mark (U+FEFF) at the start of a line; only the file may start with one",
    ]);
  });
});
