import { createReadStream } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import fg from "fast-glob";
import type { LoadedDump, RawRecord, RecordKind } from "../../core/model/input.ts";
import { UsageError, type Problem, type Source } from "../../core/problems.ts";

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
  await assertDumpFolder(dataDir);
  const { files, skipped } = await findDumpFiles(dataDir);
  // A folder misnamed or files of another extension would otherwise show as thousands of record
  // errors ("no interface has the id 361"), none saying that no access point was read.
  const layout = layoutProblems(dataDir, files, skipped);
  if (layout.some((p) => p.severity === "error")) return { records, files, problems: layout };
  problems.push(...layout);
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
  return { network, records, files, problems };
}

/** A dump folder that is not there, or a file named instead of it, is a usage error: one sentence, before anything is read. */
async function assertDumpFolder(dataDir: string): Promise<void> {
  const s = await stat(dataDir).catch(() => undefined);
  if (s?.isDirectory()) return;
  if (!s) {
    throw new UsageError(
      `the dump folder ${dataDir} does not exist; name the folder that holds network.json, accesspoints/ and links/ with --data`,
    );
  }
  const folder = await dumpFolderAround(dataDir);
  throw new UsageError(
    `${dataDir} is a file, not a dump folder; ` +
      (folder === undefined ? "a dump is a folder that holds network.json, accesspoints/ and links/" : `name its folder: --data ${folder}`),
  );
}

/** The nearest folder above `file` (up to three levels) laid out as a dump, as the user would name it. */
async function dumpFolderAround(file: string): Promise<string | undefined> {
  for (let dir = path.dirname(file), level = 0; level < 3; dir = path.dirname(dir), level++) {
    const names = await readdir(dir).catch(() => [] as string[]);
    if (names.some((n) => n === "network.json" || n in FOLDERS)) return dir;
    if (path.dirname(dir) === dir) break;
  }
  return undefined;
}

/** The files records are read from, and what else the folder holds that is not read (folders end in "/"). */
async function findDumpFiles(dataDir: string): Promise<{ files: string[]; skipped: string[] }> {
  const glob = (patterns: string[], what: "files" | "folders") =>
    fg(patterns, {
      cwd: dataDir,
      onlyFiles: what === "files",
      onlyDirectories: what === "folders",
      dot: false,
      followSymbolicLinks: false,
    });
  const files = (await glob(["network.json", ...Object.keys(FOLDERS).map((f) => `${f}/**/*.{json,ndjson}`)], "files")).sort();
  const read = new Set(files);
  // Other folders at the top are named, not walked: the dump folder may be a mistake (a home folder).
  const skipped = [
    ...(await glob(["*"], "folders")).filter((d) => !(d in FOLDERS)).map((d) => `${d}/`),
    ...(await glob(["*", ...Object.keys(FOLDERS).map((f) => `${f}/**`)], "files")).filter((f) => !read.has(f)),
  ].sort();
  return { files, skipped };
}

/**
 * What the folder lacks or holds beside the dump: no access point file or no link file is an error
 * (a network without links has an empty links file), named with what was found instead; files and
 * folders that are not read are a warning.
 */
function layoutProblems(dataDir: string, files: readonly string[], skipped: readonly string[]): Problem[] {
  const lacking = Object.entries(FOLDERS).filter(([folder]) => !files.some((f) => f.startsWith(`${folder}/`)));
  const names = (list: readonly string[]) =>
    list.slice(0, SHOWN).join(", ") + (list.length > SHOWN ? ` and ${(list.length - SHOWN).toLocaleString("en-US")} more` : "");
  if (lacking.length > 0) {
    const what = lacking.map(([, kind]) => (kind === "accesspoint" ? "access point" : kind)).join(" or ");
    const expected = lacking.map(([folder]) => `${folder}/**/*.ndjson or .json`).join(" and ");
    const empty = lacking.some(([, kind]) => kind === "link") ? " (a network without links has an empty links/links.ndjson)" : "";
    const found = skipped.length > 0 ? `; found, but not read: ${names(skipped)}` : files.length === 0 ? "; the folder is empty" : "";
    return [{ severity: "error", source: { file: dataDir }, path: "$", message: `no ${what} file: expected ${expected}${empty}${found}` }];
  }
  if (skipped.length === 0) return [];
  const message =
    `not read: ${names(skipped)}; records are read from accesspoints/ and links/ only, ` +
    `in .ndjson and .json files (hidden ones are skipped silently)`;
  return [{ severity: "warning", kind: "not read", source: { file: dataDir }, path: "$", message }];
}

/** Names listed in a layout message before the rest is counted. */
const SHOWN = 5;

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
      // The record is the file's line the source names: the column within it, not a line of its own.
      problems.push(problem(source, `malformed JSON: ${describeJsonError(err, text, true)}`));
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
function describeJsonError(err: unknown, text: string, oneLine = false): string {
  const message = err instanceof Error ? err.message : String(err);
  const m = /at position (\d+)/.exec(message);
  const base = message.replace(/ in JSON at position \d+.*$/s, "").replace(/^Unexpected/, "unexpected");
  if (!m) return base;
  const pos = Number(m[1]);
  if (oneLine) return `${base} at column ${[...text.slice(0, pos)].length + 1}`;
  const { line, column } = lineAndColumn(text, pos);
  return `${base} at line ${line}, column ${column}`;
}

/** A position in a text (V8's "at position N" of a JSON error) as the line and column an editor shows. */
export function lineAndColumn(text: string, pos: number): { line: number; column: number } {
  const before = text.slice(0, pos);
  return { line: before.split("\n").length, column: pos - before.lastIndexOf("\n") };
}

function problem(source: Source, message: string): Problem {
  return { severity: "error", source, path: "$", message };
}
