import { createReadStream } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import fg from "fast-glob";
import type { LoadedDump, RawRecord, RecordKind } from "../core/input.ts";
import type { Problem, Source } from "../core/problems.ts";

export type { LoadedDump, RawRecord, RecordKind };

/** Stage 1: find the dump files and parse them into raw records, each tagged with its source. */

const FOLDERS: Record<string, RecordKind> = { accesspoints: "accesspoint", links: "link" };

/** Limits (README, "Trust and safety"): a record (an NDJSON line) and a .json file, which is parsed whole. */
export const MAX_RECORD_BYTES = 1024 * 1024;
export const MAX_JSON_FILE_BYTES = 256 * 1024 * 1024;

/** ignoreBOM keeps a byte order mark in the text: one is allowed at the start of a file only (stripBom). */
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * With `onRecord`, each record is handed over as soon as it is parsed and not kept (validation
 * consumes the dump as a stream); without it, the records are collected in the result.
 */
export async function loadDump(dataDir: string, onRecord?: (record: RawRecord) => void): Promise<LoadedDump> {
  const problems: Problem[] = [];
  const records: RawRecord[] = [];
  const emit = onRecord ?? ((r: RawRecord) => void records.push(r));
  const dirStat = await stat(dataDir).catch(() => undefined);
  if (!dirStat?.isDirectory()) {
    problems.push(problem({ file: dataDir }, "the dump directory does not exist"));
    return { records, files: [], problems };
  }
  const files = (
    await fg(["network.json", "accesspoints/**/*.{json,ndjson}", "links/**/*.{json,ndjson}"], {
      cwd: dataDir,
      onlyFiles: true,
      dot: false,
      followSymbolicLinks: false,
    })
  ).sort();
  let network: LoadedDump["network"];
  for (const file of files) {
    const full = path.join(dataDir, file);
    if (file === "network.json") {
      const parsed = await parseJsonFile(full, file, problems);
      if (parsed !== undefined) network = { source: { file }, value: parsed };
      continue;
    }
    const kind = FOLDERS[file.split("/")[0]];
    if (file.endsWith(".ndjson")) {
      await readNdjson(full, file, kind, emit, problems);
    } else {
      const parsed = await parseJsonFile(full, file, problems);
      if (Array.isArray(parsed)) parsed.forEach((value, index) => emit({ kind, source: { file, index }, value }));
      else if (parsed !== undefined) emit({ kind, source: { file }, value: parsed });
    }
  }
  if (!files.some((f) => f !== "network.json")) {
    problems.push(problem({ file: dataDir }, "no dump files found (expected accesspoints/**/*.json|ndjson and links/**/*.json|ndjson)"));
  }
  return { network, records, files, problems };
}

async function parseJsonFile(full: string, file: string, problems: Problem[]): Promise<unknown> {
  const size = (await stat(full)).size;
  if (size > MAX_JSON_FILE_BYTES) {
    problems.push(
      problem(
        { file },
        `file of ${size} bytes is larger than the ${MAX_JSON_FILE_BYTES / 2 ** 20} MiB allowed for .json; split it or write NDJSON, which has no size limit`,
      ),
    );
    return undefined;
  }
  let text: string;
  try {
    text = stripBom(utf8.decode(await readFile(full)));
  } catch {
    problems.push(problem({ file }, "not valid UTF-8"));
    return undefined;
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    problems.push(problem({ file }, `malformed JSON: ${describeJsonError(err, text)}`));
    return undefined;
  }
}

/** NDJSON as a stream of lines, each at most MAX_RECORD_BYTES; longer lines are reported and skipped, never held. */
async function readNdjson(full: string, file: string, kind: RecordKind, emit: (r: RawRecord) => void, problems: Problem[]) {
  let line = 0;
  const take = (bytes: Buffer | undefined) => {
    line++;
    const source = { file, line };
    if (!bytes) return void problems.push(problem(source, `record larger than ${MAX_RECORD_BYTES / 2 ** 20} MiB`));
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      return void problems.push(problem(source, "not valid UTF-8"));
    }
    if (line === 1) text = stripBom(text);
    else if (text.charCodeAt(0) === 0xfeff)
      return void problems.push(problem(source, "byte order mark (U+FEFF) at the start of a line; only the file may start with one"));
    if (text.endsWith("\r")) text = text.slice(0, -1);
    if (text.trim() === "") return;
    try {
      emit({ kind, source, value: JSON.parse(text) });
    } catch (err) {
      problems.push(problem(source, `malformed JSON: ${describeJsonError(err, text)}`));
    }
  };
  let parts: Buffer[] = [];
  let length = 0;
  let oversize = false;
  for await (const chunk of createReadStream(full) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl >= 0; nl = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, nl);
      oversize ||= length + piece.length > MAX_RECORD_BYTES;
      take(oversize ? undefined : parts.length ? Buffer.concat([...parts, piece]) : piece);
      [parts, length, oversize, start] = [[], 0, false, nl + 1];
    }
    const rest = chunk.subarray(start);
    if (!oversize && length + rest.length > MAX_RECORD_BYTES) [parts, oversize] = [[], true];
    if (!oversize) parts.push(rest);
    length += rest.length;
  }
  if (length > 0 || oversize) take(oversize ? undefined : Buffer.concat(parts));
}

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Turns V8's "at position N" into line and column, which people can find in an editor. */
function describeJsonError(err: unknown, text: string): string {
  const message = err instanceof Error ? err.message : String(err);
  const m = /at position (\d+)/.exec(message);
  const base = message.replace(/ in JSON at position \d+.*$/s, "").replace(/^Unexpected/, "unexpected");
  if (!m) return base;
  const pos = Number(m[1]);
  const before = text.slice(0, pos);
  const line = before.split("\n").length;
  const column = pos - before.lastIndexOf("\n");
  return `${base} at line ${line}, column ${column}`;
}

function problem(source: Source, message: string): Problem {
  return { severity: "error", source, path: "$", message };
}
