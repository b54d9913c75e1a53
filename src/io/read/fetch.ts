import { createHash } from "node:crypto";
import { SNAPSHOT_DIR, SNAPSHOT_FILES, snapshotArchive } from "../../core/routes.ts";
import { httpUrl, urlError, type UrlNeed } from "../../core/values/url.ts";
import { createReadStream, createWriteStream, rmSync } from "node:fs";
import { mkdir, readdir, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { ArchiveError, extractArchive } from "./archive.ts";
import { assertReplaceable, writeMarker } from "../write/ownership.ts";
import { onInterrupt } from "../write/interrupt.ts";
import { type CappedBody, networkCause, readCapped } from "./net.ts";
import { removeWhileWritesSettle, replaceFolder } from "../write/swap.ts";
import { CommandError } from "../../core/problems.ts";

/**
 * Where the nightly job's dumps come from when they are not in the repository: a .tar.gz at a URL,
 * verified, then unpacked into a folder. In order:
 *
 * 1. `out` must be ours to replace (absent, empty, or marked by an earlier run): checked before any
 *    download, refused with RefusedOutputError.
 * 2. The archive is streamed to a temporary file beside `out` while it is hashed (archives can be
 *    hundreds of MB), named like the swap's temporary folders so a later run removes it after a kill.
 * 3. Its SHA-256 is checked against `<url>.sha256` when that answers 200, else against the
 *    `SHA256SUMS` in the archive's folder (what `snapshot` publishes).
 * 4. It is unpacked beside `out`; the dump in it (the archive's top, or its single top folder, as a
 *    snapshot's archive has) is moved into a temporary sibling folder, marked, and swapped in for
 *    `out` (io/write/swap.ts), so `out` is the dump: `build --data <out>` reads it. Whatever fails before
 *    the swap, `out` is left exactly as it was.
 *
 * Returns `out`, the dump directory. A URL that
 * is no http(s) address of a file throws UrlError before anything else; bad input (the download, the
 * checksums, the archive) throws FetchDumpError, with the URL in its message.
 */
export interface FetchDumpOptions {
  /** progress lines */
  readonly log?: (line: string) => void;
  /** lines that must be seen (an archive that could not be verified) */
  readonly warn?: (line: string) => void;
  /** unpack an archive published without any checksum (with a warning); by default it is refused */
  readonly allowUnverified?: boolean;
  /** for the ownership check; the process's own by default */
  readonly cwd?: string;
  readonly home?: string;
}

/** The download, its checksum or the archive is at fault: the CLI prints the message and exits 1. */
export class FetchDumpError extends CommandError {
  readonly ending = "input";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "FetchDumpError";
  }
}

/** Checksum files are a few lines; anything larger is not one. */
const MAX_SUMS_BYTES = 1 << 20;

export async function fetchDump(url: string, out: string, options: FetchDumpOptions | ((line: string) => void) = {}): Promise<string> {
  const opts: FetchDumpOptions = typeof options === "function" ? { log: options } : options;
  const log = opts.log ?? (() => {});
  const warn = opts.warn ?? log;
  const target = archiveUrl(url);
  await assertReplaceable({ out, option: "--out", kind: "dump", cwd: opts.cwd, home: opts.home });

  await replaceFolder(out, async (tmp) => {
    // Beside the temporary folder, not in it: the archive's own entries could name it. Named after it,
    // so that the next run removes them after a kill, as it removes the folder.
    const download = `${tmp}.download`;
    const unpacked = `${tmp}.unpack`;
    const forget = onInterrupt(() => {
      rmSync(download, { force: true });
      removeWhileWritesSettle(unpacked);
      return undefined;
    });
    try {
      const got = await downloadTo(url, download);
      log(`downloaded ${url} (${got.bytes} bytes, sha256 ${got.sha256})`);
      const expected = await expectedDigest(target);
      if (expected) {
        if (expected.sha256 !== got.sha256) {
          throw new FetchDumpError(`${url}: the download's SHA-256 ${got.sha256} does not match ${expected.source} (${expected.sha256})`);
        }
        log(`verified ${url} against ${expected.source}`);
      } else if (!opts.allowUnverified) {
        // Verification is the default: a dump served without any checksum is refused unless the
        // operator says so. A checksum that exists and fails is an error either way.
        throw new FetchDumpError(
          `${url} cannot be verified: neither ${sha256Url(target)} nor ${sumsUrl(target)} is published (HTTP 404); ` +
            "publish one of them beside it, or fetch it unverified with --allow-unverified",
        );
      } else {
        warn(
          `${url} was not verified: neither ${sha256Url(target)} nor ${sumsUrl(target)} is published (HTTP 404); unpacking it anyway (--allow-unverified)`,
        );
      }
      let files: number;
      try {
        await mkdir(unpacked);
        files = await extractArchive(createReadStream(download), unpacked);
      } catch (err) {
        if (err instanceof ArchiveError) throw new FetchDumpError(`${url}: ${err.message}`, { cause: err });
        throw err;
      }
      const dir = await dumpRoot(unpacked, url);
      for (const name of await readdir(dir)) await rename(path.join(dir, name), path.join(tmp, name));
      await writeMarker(tmp, "dump");
      log(`unpacked ${files} files into ${out}`);
    } finally {
      forget();
      await rm(download, { force: true });
      await rm(unpacked, { recursive: true, force: true });
    }
  });
  return out;
}

/** What fetch-dump asks of its URL, for the messages of core/values/url.ts. */
export const FETCH_DUMP_URL: UrlNeed = {
  command: "fetch-dump",
  needs: "the archive's address as http(s)://host[:port]/path/file.tar.gz",
  // what a deployment publishes, the archive fetch-dump is made for
  example: `https://mesh.example.org/${SNAPSHOT_DIR}/${snapshotArchive("dump", "2026-01-01").file}`,
  name: "the archive's address",
};

/** The archive's URL; one that is no http(s) URL, or names a folder, throws UrlError. */
function archiveUrl(url: string): URL {
  const u = httpUrl(url, FETCH_DUMP_URL, (meant) => (fileName(meant) === "" ? undefined : meant.href));
  if (fileName(u) === "") throw urlError(FETCH_DUMP_URL, `${url} names a folder, not an archive file`);
  return u;
}

/** The archive's last path segment, as SHA256SUMS names it. */
function fileName(u: URL): string {
  const last = u.pathname.split("/").pop() ?? "";
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

/** `<url>.sha256` (before any query string, which a signed URL would need anyway). */
function sha256Url(u: URL): string {
  const s = new URL(u);
  s.hash = "";
  s.pathname += ".sha256";
  return s.href;
}

function sumsUrl(u: URL): string {
  return new URL(SNAPSHOT_FILES.sums, u).href;
}

async function get(url: string): Promise<Response> {
  try {
    return await fetch(url);
  } catch (err) {
    throw new FetchDumpError(`${url}: ${networkCause(err)}`, { cause: err });
  }
}

/** Streams the archive to `file`, hashing it on the way. */
async function downloadTo(url: string, file: string): Promise<{ sha256: string; bytes: number }> {
  const res = await get(url);
  if (res.status !== 200 || !res.body) {
    await res.body?.cancel().catch(() => {});
    throw new FetchDumpError(`${url}: HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ""}`);
  }
  const hash = createHash("sha256");
  let bytes = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  try {
    await pipeline(Readable.fromWeb(res.body as WebReadableStream), tap, createWriteStream(file));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).syscall && !isNetworkCode((err as NodeJS.ErrnoException).code)) throw err; // the disk, not the download
    throw new FetchDumpError(`${url}: the download broke off after ${bytes} bytes: ${networkCause(err)}`, { cause: err });
  }
  return { sha256: hash.digest("hex"), bytes };
}

interface Expected {
  readonly sha256: string;
  /** the checksum file's URL, for messages */
  readonly source: string;
}

/**
 * The archive's expected SHA-256: from `<url>.sha256` when it answers 200, else from the SHA256SUMS
 * of its folder. Undefined only when both answer 404 or 410 (there is no checksum to check against);
 * any other answer is an error, so a server failure never passes for "not published".
 */
async function expectedDigest(archive: URL): Promise<Expected | undefined> {
  const name = fileName(archive);
  const single = sha256Url(archive);
  const first = await get(single);
  if (first.status === 200) {
    const text = await readSmall(first, single);
    return { sha256: parseSingle(text, name, single), source: single };
  }
  await first.body?.cancel().catch(() => {});
  const sums = sumsUrl(archive);
  const second = await get(sums);
  if (second.status === 200) {
    const text = await readSmall(second, sums);
    return { sha256: parseSums(text, name, sums), source: sums };
  }
  await second.body?.cancel().catch(() => {});
  const absent = (s: number) => s === 404 || s === 410;
  if (absent(first.status) && absent(second.status)) return undefined;
  throw new FetchDumpError(
    `${archive.href}: cannot verify the archive: ${single} answered HTTP ${first.status} and ${sums} answered HTTP ${second.status}`,
  );
}

async function readSmall(res: Response, url: string): Promise<string> {
  let body: CappedBody;
  try {
    body = await readCapped(res, MAX_SUMS_BYTES);
  } catch (err) {
    throw new FetchDumpError(`${url}: ${networkCause(err)}`, { cause: err });
  }
  if (!body.ok)
    throw new FetchDumpError(`${url} is not a checksum file (${body.declared ? body.length : `more than ${MAX_SUMS_BYTES}`} bytes)`);
  return body.bytes.toString("utf8");
}

interface SumLine {
  readonly sha256: string;
  /** undefined for a bare digest */
  readonly file?: string;
}

/**
 * `sha256sum` lines: `<64 hex>  <name>` (text mode) or `<64 hex> *<name>` (binary mode), a leading
 * backslash when the name holds escaped characters; blank lines are ignored, anything else is malformed.
 * A `.sha256` file may also hold the bare digest.
 */
function parseLines(text: string, url: string, bare: boolean): SumLine[] {
  const lines: SumLine[] = [];
  const raw = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  raw.forEach((line, i) => {
    if (line.trim() === "") return;
    const m = /^(\\?)([0-9a-fA-F]{64})(?: [ *](.+?))?\s*$/.exec(line);
    if (!m || (m[3] === undefined && !bare)) {
      throw new FetchDumpError(`${url} is malformed: line ${i + 1} is not "<sha256>  <file name>" (${JSON.stringify(line.slice(0, 120))})`);
    }
    const file =
      m[3] === undefined
        ? undefined
        : m[1]
          ? m[3].replace(/\\(\\|n|r)/g, (_, c: string) => (c === "n" ? "\n" : c === "r" ? "\r" : "\\"))
          : m[3];
    lines.push({ sha256: m[2].toLowerCase(), file });
  });
  return lines;
}

/** `<url>.sha256`: one digest (bare or with a name), or sha256sum lines of which one names the archive. */
function parseSingle(text: string, name: string, url: string): string {
  const lines = parseLines(text, url, true);
  if (lines.length === 0) throw new FetchDumpError(`${url} is malformed: it holds no SHA-256 digest`);
  if (lines.length === 1) return lines[0].sha256;
  return pick(lines, name, url);
}

function parseSums(text: string, name: string, url: string): string {
  return pick(parseLines(text, url, false), name, url);
}

function pick(lines: readonly SumLine[], name: string, url: string): string {
  const digests = new Set(lines.filter((l) => l.file === name).map((l) => l.sha256));
  if (digests.size === 0) throw new FetchDumpError(`${url} has no line for ${name}, so the archive cannot be verified`);
  if (digests.size > 1) throw new FetchDumpError(`${url} is malformed: it gives ${digests.size} different digests for ${name}`);
  return [...digests][0];
}

const NETWORK_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);
const isNetworkCode = (code?: string) => code !== undefined && (NETWORK_CODES.has(code) || code.startsWith("UND_ERR"));

async function dumpRoot(dir: string, url: string): Promise<string> {
  const isDump = async (d: string) => (await stat(path.join(d, "accesspoints")).catch(() => undefined))?.isDirectory() ?? false;
  if (await isDump(dir)) return dir;
  const entries = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory());
  if (entries.length === 1 && (await isDump(path.join(dir, entries[0].name)))) return path.join(dir, entries[0].name);
  throw new FetchDumpError(`${url}: the archive holds no dump (no accesspoints/ folder at its top or in its single top folder)`);
}
