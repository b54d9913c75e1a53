/**
 * Precompressed answers (issue 45): the build writes a gzip twin (`<file>.gz`) beside every file of the
 * site that is text and at least TWIN.minBytes long; the preview and every host send it, with
 * `Content-Encoding: gzip`, to a client that accepts gzip, and the file itself to others. Each server
 * says that such an answer varies with Accept-Encoding. The rule is decided here once: the writer
 * (io/write/emit.ts), the preview, the host printers, the snapshots and `check` read it.
 *
 * Why these numbers (docs/performance.md, "Precompressed answers"):
 * - gzip only: brotli at a quality that costs what gzip level 6 costs (5) was 7 % smaller on the
 *   largest answers of a 3,000-access-point build, and every client and server speaks gzip; a second
 *   twin per file is not worth 7 %.
 * - level 6, zlib's default: level 9 was 2.7 % smaller and took 2.4 times as long.
 * - 16 KiB: a shorter answer fits the first round trip of a new connection (ten segments of 1,460
 *   bytes, TCP's initial window), so its compression saves bytes but no time; at 3,000 access points
 *   the twins of the files from 16 KiB on (33 of 45,750) save 53.5 % of the tree's bytes, twins from
 *   512 bytes on would be 33,285 files saving 77.6 %.
 */
export const TWIN = {
  encoding: "gzip",
  suffix: ".gz",
  minBytes: 16 * 1024,
  level: 6,
} as const;

/**
 * What a twin is made for: the answers, pages, scripts, stylesheets and feeds (not images, licences,
 * nor archives already compressed). Written without backslashes (`[.]`), so that a server's
 * configuration holds the pattern as it is.
 */
const COMPRESSIBLE_NAME = "(?:[^/]*[.](?:json|html|js|css|atom)|metrics)";
const COMPRESSIBLE = new RegExp(`(?:^|/)${COMPRESSIBLE_NAME}$`);

/** The name (no folder) of a twin, as a regular expression source, for servers that match a file's name. */
export const TWIN_NAME = `^${COMPRESSIBLE_NAME}${TWIN.suffix.replace(/\./g, "[.]")}$`;

/** The build's own files at its top (its records, the hosts' files and routing copy): never served, so never compressed. */
const UNSERVED = /^\/?[._]/;

/** Whether a file of this name gets a twin when it is long enough (a server looks for one then). */
export const mayHaveTwin = (file: string): boolean => COMPRESSIBLE.test(file) && !UNSERVED.test(file);

/** Whether the build writes a gzip twin beside this file (a path under the build's root) of this length. */
export const hasTwin = (file: string, bytes: number): boolean => bytes >= TWIN.minBytes && mayHaveTwin(file);

/** The twin's path beside a file. */
export const twinOf = (file: string): string => `${file}${TWIN.suffix}`;

/** Whether a path names a twin rather than a file of the site (snapshots, digests of the answers). */
export const isTwin = (file: string): boolean => file.endsWith(TWIN.suffix) && mayHaveTwin(file.slice(0, -TWIN.suffix.length));

/** The file a twin compresses; any other path as it is. */
export const twinnedFile = (file: string): string => (isTwin(file) ? file.slice(0, -TWIN.suffix.length) : file);

/**
 * Whether an Accept-Encoding header (RFC 9110, 12.5.3) accepts gzip: named (or as `x-gzip`) with a
 * weight above 0, or `*` above 0 while gzip is not named. Absent or empty: no (the identity only).
 */
export function acceptsGzip(header: string | readonly string[] | undefined): boolean {
  const text = Array.isArray(header) ? header.join(",") : (header as string | undefined);
  if (!text) return false;
  let named: number | undefined;
  let any: number | undefined;
  for (const part of text.split(",")) {
    const [coding, ...params] = part.split(";").map((s) => s.trim());
    const name = coding.toLowerCase();
    if (name === "") continue;
    let q = 1;
    for (const p of params) {
      const m = /^q\s*=\s*([0-9.]+)$/i.exec(p);
      if (m) q = Number(m[1]);
    }
    if (!Number.isFinite(q)) q = 0;
    if (name === "gzip" || name === "x-gzip") named = Math.max(named ?? 0, q);
    else if (name === "*") any = Math.max(any ?? 0, q);
  }
  return named !== undefined ? named > 0 : (any ?? 0) > 0;
}

/** The Vary of an answer that has a twin: the API's own (`Accept`), if it has one, and Accept-Encoding. */
export const varyWithTwin = (vary: string | undefined): string => (vary ? `${vary}, Accept-Encoding` : "Accept-Encoding");
