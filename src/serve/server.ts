import { InputError } from "../core/problems.ts";
import { open, stat, type FileHandle } from "node:fs/promises";
import { constants as fsConstants, type Stats } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { createRequire } from "node:module";
import { DEFAULTS } from "../core/defaults.ts";
import { loadRouting } from "../io/read/aliases.ts";
import {
  acceptsGzip,
  answerRequest,
  API_HEADERS,
  ERROR_DETAILS,
  errorBody,
  FILES,
  FOLDER_INDEX,
  NOT_FOUND_BODY,
  mayHaveTwin,
  optionsBody,
  TWIN,
  twinOf,
  TYPED_FILES,
  varyWithTwin,
  type Routing,
} from "../core/routes.ts";

/**
 * Stage 6: the local preview. http-server serves the files; a `before` middleware routes every
 * request under /api/ by the route table (the same rules the Netlify config is generated from) and
 * answers what a static host would not: OPTIONS, other methods, redirects of list paths without their
 * slash, malformed requests, and JSON 404s. Other paths are the build's files as a static host serves
 * them: a folder by its index.html (`/`, `/snapshots/`), HTML as `text/html; charset=utf-8`, and
 * anything missing as the JSON 404 with `application/json` (never http-server's own 404 handling,
 * which would send 404.html as text/html).
 */
export interface PreviewOptions {
  readonly dir: string;
  readonly port?: number;
  readonly host?: string;
  /** called once per request with a log line */
  readonly log?: (line: string) => void;
}

export interface Preview {
  readonly url: string;
  close(): Promise<void>;
}

export async function startPreview(options: PreviewOptions): Promise<Preview> {
  const root = path.resolve(options.dir);
  const rootStat = await stat(root).catch(() => undefined);
  if (!rootStat?.isDirectory()) throw new InputError(`nothing to serve: ${options.dir} is not a directory (run the build first)`);

  // The build's filter aliases and route table (its list default).
  const routing = await liveRouting(root);
  const route = (req: IncomingMessage, res: ServerResponse & { emit(event: "next"): boolean }) => {
    routing()
      .then((known) => handle(root, known, req, res))
      .catch(() => {
        // union's wrapper does not say whether the head went out; the response it wraps does
        const raw = rawResponse(res);
        if (raw.headersSent) return void raw.destroy();
        // what was set for a file that could not be sent does not describe the error
        for (const name of ["Content-Encoding", "ETag", "Last-Modified", "Cache-Control", "Vary"]) res.removeHeader(name);
        json(req, res, 500, errorBody(ERROR_DETAILS.internal));
      });
  };
  // required when a preview starts, not by every command that imports this module's helpers
  const httpServer = createRequire(import.meta.url)("http-server") as typeof import("http-server").default;
  const server = httpServer.createServer({
    root,
    cache: -1,
    showDir: "false",
    autoIndex: "false",
    gzip: false,
    brotli: false,
    before: [
      (req: IncomingMessage, res: ServerResponse & { emit(event: "next"): boolean }) => {
        const started = performance.now();
        const target = req.url ?? "/";
        // http-server hands `before` a wrapper (union's ResponseStream); the raw response emits "finish".
        const raw = rawResponse(res);
        if (options.log)
          raw.on("finish", () =>
            options.log!(`${req.method} ${target.slice(0, 200)} ${raw.statusCode} ${(performance.now() - started).toFixed(1)}ms`),
          );
        route(req, res);
      },
    ],
  });
  const listening = server.server as import("node:http").Server;
  // What Node's parser refuses (unknown methods, broken request lines, huge headers) still gets JSON.
  listening.on("clientError", (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    const status = err.code === "HPE_HEADER_OVERFLOW" ? 431 : 400;
    const body = errorBody(status === 431 ? ERROR_DETAILS.headerTooLarge : ERROR_DETAILS.malformed);
    const headers = Object.entries({ ...API_HEADERS, "Content-Length": String(Buffer.byteLength(body)), Connection: "close" });
    socket.end(
      `HTTP/1.1 ${status} ${status === 431 ? "Request Header Fields Too Large" : "Bad Request"}\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n${body}`,
    );
  });
  await new Promise<void>((ok, fail) => {
    listening.once("error", fail);
    listening.listen(options.port ?? DEFAULTS.port, options.host ?? DEFAULTS.host, () => ok());
  });
  const address = listening.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((ok) => {
        listening.close(() => ok());
        listening.closeAllConnections?.();
      }),
  };
}

/**
 * The routing of the build being served, read again when a rebuild has replaced it (the build swaps
 * in a new tree; the preview keeps serving the same folder name). Checked at most once a second.
 */
async function liveRouting(root: string): Promise<() => Promise<Routing>> {
  const file = path.join(root, FILES.aliases);
  const version = async () => {
    const s = await stat(file).catch(() => undefined);
    return s ? `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}` : "none";
  };
  let seen = await version();
  let rules = loadRouting(root);
  let checked = Date.now();
  return async () => {
    if (Date.now() - checked >= 1000) {
      checked = Date.now();
      const now = await version();
      if (now !== seen) [seen, rules] = [now, loadRouting(root)];
    }
    return rules;
  };
}

async function handle(root: string, routing: Routing, req: IncomingMessage, res: ServerResponse & { emit(event: "next"): boolean }) {
  const a = answerRequest(req.url ?? "/", req.method ?? "GET", routing);
  switch (a.kind) {
    case "site":
      return serveStatic(root, a.path, req, res);
    case "error":
      return json(req, res, a.status, a.body);
    case "redirect":
      res.setHeader("Location", a.location);
      return json(req, res, 301, "");
  }
  const file = path.join(root, a.file);
  if (!file.startsWith(root + path.sep)) return json(req, res, 404, NOT_FOUND_BODY);
  const opened = await openFile(file);
  if (!opened) return json(req, res, 404, NOT_FOUND_BODY);
  if (a.options) {
    await opened.handle.close();
    return json(req, res, 200, optionsBody(a.route));
  }
  // The API's headers, its type without the charset a static server would add.
  for (const [name, value] of Object.entries(API_HEADERS)) res.setHeader(name, value);
  return sendEncoded(root, req, res, a.file, API_HEADERS["Content-Type"], opened);
}

const HTML_TYPE = "text/html; charset=utf-8";

/**
 * A path outside the API: the build's file, a folder's index.html (a folder without its slash is
 * redirected to it, so the page's relative links work), or the JSON 404. The 404 page itself is JSON,
 * as on Netlify, which serves it with the API headers.
 */
async function serveStatic(
  root: string,
  requestPath: string,
  req: IncomingMessage,
  res: ServerResponse & { emit(event: "next"): boolean },
) {
  const segments = requestPath.split("/");
  if (segments.includes("..")) return json(req, res, 400, errorBody(ERROR_DETAILS.malformed));
  // Host configuration (_redirects, _headers) and hidden files are not content; Netlify does not serve them either.
  if (segments.some((s) => s.startsWith("_") || s.startsWith("."))) return json(req, res, 404, NOT_FOUND_BODY);
  const full = path.join(root, requestPath);
  if (full !== root && !full.startsWith(root + path.sep)) return json(req, res, 404, NOT_FOUND_BODY);
  const found = await stat(full).catch(() => undefined);
  let file = requestPath;
  if (found?.isDirectory()) {
    const index = await stat(path.join(full, FOLDER_INDEX)).catch(() => undefined);
    if (!index?.isFile()) return json(req, res, 404, NOT_FOUND_BODY);
    if (!requestPath.endsWith("/")) {
      const target = req.url ?? "/";
      const q = target.indexOf("?");
      res.setHeader("Location", `${encodePath(requestPath)}/${q < 0 ? "" : target.slice(q)}`);
      res.statusCode = 301;
      res.setHeader("Content-Length", 0);
      return void res.end();
    }
    file = `${requestPath}${FOLDER_INDEX}`;
  } else if (!found?.isFile()) {
    return json(req, res, 404, NOT_FOUND_BODY);
  }
  if (file === FILES.notFoundPage) {
    for (const [name, value] of Object.entries(API_HEADERS)) res.setHeader(name, value);
    return sendEncoded(root, req, res, file, API_HEADERS["Content-Type"]);
  }
  if (/\.html?$/i.test(file)) return sendEncoded(root, req, res, file, HTML_TYPE);
  // A file with a type of its own, whatever its name (the metrics file).
  const typed = TYPED_FILES.find((t) => t.file === file);
  if (typed) return sendEncoded(root, req, res, file, typed.type);
  // A script, stylesheet or feed with a twin: typed as http-server types the file itself.
  const own = TWIN_TYPES.find(([suffix]) => file.endsWith(suffix));
  if (own && (await twinFound(root, file))) return sendEncoded(root, req, res, file, own[1]);
  // Other files (archives, sums, index.json) typed as http-server types them, with its ranges
  // (a resumed download); another method is http-server's to refuse.
  if (req.method === "GET" || req.method === "HEAD") {
    const opened = await openFile(path.join(root, file));
    if (!opened) return json(req, res, 404, NOT_FOUND_BODY);
    return sendFile(req, res, opened, staticType(file), { ranges: true });
  }
  req.url = encodePath(file);
  res.emit("next");
}

/** http-server's own modules (its MIME table and its charset sniffer), resolved once, where it is. */
let httpServerRequire: NodeJS.Require | undefined;
const fromHttpServer = (name: string): unknown =>
  (httpServerRequire ??= createRequire(createRequire(import.meta.url).resolve("http-server")))(name);

/**
 * The type http-server gives a file: its MIME table's, and for a text type the charset its sniffer
 * reads in the first bytes (a byte order mark, an HTML meta charset within the first 1,024), else UTF-8.
 */
function staticType(file: string): string | ((head: Buffer) => string) {
  const mime = fromHttpServer("mime") as { lookup(file: string, fallback: string): string };
  const type = mime.lookup(file, "application/octet-stream");
  if (!/^text\/|^application\/(javascript|json)/.test(type)) return type;
  const sniff = fromHttpServer("html-encoding-sniffer") as (bytes: Buffer, o: { defaultEncoding: string }) => string;
  return (bytes) => `${type}; charset=${sniff(bytes, { defaultEncoding: "UTF-8" })}`;
}

/** The types http-server gives the files with twins outside the API, which the twin's answer keeps. */
const TWIN_TYPES: readonly (readonly [string, string])[] = [
  [".js", "application/javascript; charset=UTF-8"],
  [".css", "text/css; charset=UTF-8"],
  [".atom", "application/atom+xml"],
];

async function twinFound(root: string, file: string): Promise<boolean> {
  if (!mayHaveTwin(file)) return false;
  return (await stat(path.join(root, twinOf(file))).catch(() => undefined))?.isFile() ?? false;
}

/** A regular file opened for reading, with its status; undefined when there is none at `file`. */
interface Opened {
  readonly handle: FileHandle;
  readonly stat: Stats;
}

async function openFile(file: string): Promise<Opened | undefined> {
  // O_NONBLOCK: a FIFO in the folder opens at once and is then no regular file, instead of holding a
  // thread of libuv's pool until a writer comes (a regular file reads as without it)
  const handle = await open(file, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK).catch(() => undefined);
  if (!handle) return undefined;
  const fileStat = await handle.stat().catch(() => undefined);
  if (fileStat?.isFile()) return { handle, stat: fileStat };
  await handle.close();
  return undefined;
}

/**
 * A file that has a gzip twin (core/routes/compression.ts) is sent as the twin, with
 * Content-Encoding, to a client that accepts gzip, and says in its Vary that it depends on it;
 * http-server's own negotiation (its `gzip` option) is not used: it sends gzip to a client that
 * accepts only deflate and its twin's type lacks the charset it gives the file.
 */
async function sendEncoded(
  root: string,
  req: IncomingMessage,
  res: ServerResponse & { emit(event: "next"): boolean },
  file: string,
  type: string,
  opened?: Opened,
) {
  // Other methods get http-server's refusal (405), as before, without the twin's Vary: that answer does not vary with it.
  if (req.method !== "GET" && req.method !== "HEAD") {
    await opened?.handle.close();
    return handOver(req, res, file, type);
  }
  let body = opened ?? (await openFile(path.join(root, file)));
  if (!body) return json(req, res, 404, NOT_FOUND_BODY);
  const twin = mayHaveTwin(file) ? await openFile(path.join(root, twinOf(file))) : undefined;
  if (twin) {
    res.setHeader("Vary", varyWithTwin(res.getHeader("Vary") as string | undefined));
    const [sent, unused] = acceptsGzip(req.headers["accept-encoding"]) ? [twin, body] : [body, twin];
    await unused.handle.close().catch(() => undefined);
    if (sent === twin) res.setHeader("Content-Encoding", TWIN.encoding);
    body = sent;
  }
  return sendFile(req, res, body, type);
}

/**
 * Sends an opened file, read from its descriptor: a file a rebuild removes or replaces after it was
 * opened is still sent whole, the bytes it had (http-server read a text file again by its name after
 * its own look, and a file gone in between ended the process). At most the length its status gave
 * is sent, so a file still being written is never announced with another length than it is sent
 * with; a long file is streamed. The validators are those http-server gives the other files:
 * Last-Modified, a weak ETag of inode, size and modification time, and 304 to a GET or HEAD whose
 * If-None-Match names it (RFC 9110 13.1.2: a list, weak comparison, `*`) or, without If-None-Match,
 * whose If-Modified-Since is not before it. With `ranges`, a Range header is answered as http-server
 * answers it (one range, 206, or 416); without, the whole file is sent (the API's files, as before).
 */
async function sendFile(
  req: IncomingMessage,
  res: ServerResponse,
  { handle, stat: s }: Opened,
  type: string | ((head: Buffer) => string),
  { ranges = false } = {},
) {
  let handedOver = false;
  try {
    const lastModified = s.mtime.toUTCString();
    const etag = `W/"${s.ino}-${s.size}-${s.mtime.toISOString()}"`;
    const range = ranges ? req.headers.range : undefined;
    let [start, end] = [0, s.size - 1];
    if (range !== undefined) {
      // http-server's reading of a range: "bytes=<first>-[<last>]", the last capped at the end
      const [first, last] = range
        .trim()
        .replace(/bytes=/, "")
        .split("-");
      [start, end] = [parseInt(first, 10), Math.min(s.size - 1, last ? parseInt(last, 10) : s.size - 1)];
      if (start > end || Number.isNaN(start) || Number.isNaN(end)) {
        res.statusCode = 416;
        return void res.end();
      }
      res.statusCode = 206;
      res.setHeader("Content-Range", `bytes ${start}-${end}/${s.size}`);
    }
    res.setHeader("Cache-Control", PREVIEW_CACHE_CONTROL);
    res.setHeader("Last-Modified", lastModified);
    res.setHeader("ETag", etag);
    if (range === undefined) {
      if (notModified(req, lastModified, etag)) {
        res.statusCode = 304;
        return void res.end();
      }
      res.statusCode = 200;
    }
    const length = end - start + 1;
    res.setHeader("Content-Length", length);
    res.setHeader("Content-Type", typeof type === "string" ? type : type(await firstBytes(handle, s.size)));
    if (req.method === "HEAD" || length === 0) return void res.end();
    if (length <= STREAM_FROM) {
      const bytes = Buffer.allocUnsafe(length);
      const { bytesRead } = await handle.read(bytes, 0, length, start);
      // a file cut short since its status was taken: the connection ends without the bytes it lacks
      if (bytesRead < length) return void rawResponse(res).destroy();
      return void res.end(bytes);
    }
    // the stream closes the descriptor when it ends, fails or is destroyed (a client gone)
    const stream = handle.createReadStream({ start, end });
    handedOver = true;
    stream.on("error", () => rawResponse(res).destroy());
    // union's wrapper does not pass on that the connection went; the response it wraps does
    rawResponse(res).on("close", () => stream.destroy());
    stream.pipe(res);
  } finally {
    if (!handedOver) await handle.close().catch(() => undefined);
  }
}

/** http-server hands the middleware a wrapper (union's ResponseStream); the response it wraps. */
function rawResponse(res: ServerResponse): ServerResponse {
  return (res as unknown as { response?: ServerResponse }).response ?? res;
}

/** Files up to this length are read and sent in one piece; longer ones are streamed. */
const STREAM_FROM = 1024 * 1024;

/** The first bytes of a file, as many as a charset sniffer reads. */
async function firstBytes(handle: FileHandle, size: number): Promise<Buffer> {
  const head = Buffer.alloc(Math.min(size, 1024));
  const { bytesRead } = await handle.read(head, 0, head.length, 0);
  return head.subarray(0, bytesRead);
}

/** Nothing the browser or a client keeps is to be reused without asking: a rebuild changes every answer. */
const PREVIEW_CACHE_CONTROL = "no-cache, no-store, must-revalidate";

function notModified(req: IncomingMessage, lastModified: string, etag: string): boolean {
  const match = req.headers["if-none-match"];
  if (match !== undefined) {
    const opaque = (tag: string) => tag.trim().replace(/^W\//, "");
    return match.trim() === "*" || match.split(",").some((tag) => opaque(tag) === opaque(etag));
  }
  const since = Date.parse(req.headers["if-modified-since"] ?? "");
  return Number.isFinite(since) && since >= Date.parse(lastModified);
}

/** Lets http-server answer `file` (a path under the root) with exactly this Content-Type: its refusal of other methods. */
function handOver(req: IncomingMessage, res: ServerResponse & { emit(event: "next"): boolean }, file: string, type: string) {
  const setHeader = res.setHeader.bind(res);
  res.setHeader = ((name: string, value: number | string | readonly string[]) =>
    setHeader(name, name.toLowerCase() === "content-type" ? type : value)) as typeof res.setHeader;
  delete req.headers.range;
  req.url = encodePath(file);
  res.emit("next");
}

function encodePath(p: string): string {
  return p.split("/").map(encodeURIComponent).join("/");
}

function json(req: IncomingMessage, res: ServerResponse, status: number, body: string) {
  res.statusCode = status;
  for (const [name, value] of Object.entries(API_HEADERS)) res.setHeader(name, value);
  if (body === "") res.removeHeader("Content-Type");
  res.setHeader("Content-Length", Buffer.byteLength(body));
  res.end(req.method === "HEAD" ? undefined : body);
}
