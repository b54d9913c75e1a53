import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { placeholderValues, type PlaceholderValues } from "../../src/core/plan.ts";
import { API, API_HEADERS, API_SERVED, DOCS_FOLDER, fileFor, isDocsPath, TYPED_FILES } from "../../src/core/routes.ts";
import type { RawResponse } from "./http.ts";
import { freePort } from "./port.ts";
import type { Model } from "../../src/core/model/model.ts";

export { freePort };

/**
 * A real web server serving a build with the configuration `host-config <host> --standalone` prints,
 * compared request by request with the preview: status, body bytes, the API's headers and redirect
 * targets. A difference is a failure unless it is one of the server's listed limits, recognised by
 * the request and counted. Each host's test file is `describeHost(<its server>)` (hosts-replay.ts).
 */

/** A web server running as a child process of the test, on a loopback port. */
export interface RunningServer {
  readonly port: number;
  stop(): Promise<void>;
}

export interface Request {
  readonly method: string;
  readonly target: string;
}

export interface ServedHost {
  /** as `host-config` names it */
  readonly name: string;
  /** starts the server on `root`, configured for these values */
  start(root: string, values: PlaceholderValues): Promise<RunningServer>;
  /** the listed limit (the host's own name for it) that explains this difference, from the request alone */
  limitOf(r: Request, preview: RawResponse, served: RawResponse): string | undefined;
  /** the limits counted over otherRequests() on the public sample with default options */
  readonly otherLimits: Readonly<Record<string, number>>;
  /** the filter values the host's configuration leaves out, by parameter (too long for it); none when absent */
  overlong?(values: PlaceholderValues): ReadonlyMap<string, ReadonlySet<string>>;
}

const HEADERS = Object.keys(API_HEADERS).map((h) => h.toLowerCase());

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });
}

/**
 * Runs `program args` in the foreground until it accepts connections on `port`; `logs` are read into
 * the error when it does not start. `signal` is what stops it gracefully.
 */
export async function spawnServer(
  name: string,
  program: string,
  args: readonly string[],
  port: number,
  options: { logs?: readonly string[]; signal?: NodeJS.Signals; env?: NodeJS.ProcessEnv } = {},
): Promise<RunningServer> {
  const child: ChildProcess = spawn(program, args, { stdio: ["ignore", "ignore", "pipe"], env: options.env ?? process.env });
  let stderr = "";
  child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  for (let i = 0; ; i++) {
    if (child.exitCode !== null || i > 400) {
      child.kill("SIGKILL");
      const logs = (options.logs ?? []).filter((f) => existsSync(f)).map((f) => readFileSync(f, "utf8"));
      throw new Error(`${name} did not start: ${stderr}${logs.join("")}`);
    }
    if (await answers(port)) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  return {
    port,
    stop: async () => {
      if (child.exitCode === null) child.kill(options.signal ?? "SIGTERM");
      await exited;
    },
  };
}

export const GET = (target: string): Request => ({ method: "GET", target });

/** The same status, body bytes, API headers and redirect target. */
export function sameAnswer(p: RawResponse, n: RawResponse): boolean {
  return (
    p.status === n.status &&
    p.body.equals(n.body) &&
    HEADERS.every((h) => headerOf(p, h) === headerOf(n, h)) &&
    (p.status !== 301 || p.headers.location === n.headers.location)
  );
}

/**
 * A header as the comparison reads it: Vary as its list of names, which Apache writes without the
 * space after each comma (its core joins every Vary it is given); the others as they are.
 */
export function headerOf(r: RawResponse, name: string): string | undefined {
  const value = r.headers[name];
  return name === "vary" && value !== undefined
    ? value
        .split(",")
        .map((v) => v.trim())
        .join(", ")
    : value;
}

/** A request's raw path and raw query, as sent. */
export function split(r: Request): { readonly rawPath: string; readonly query: string } {
  const q = r.target.indexOf("?");
  return { rawPath: q < 0 ? r.target : r.target.slice(0, q), query: q < 0 ? "" : r.target.slice(q + 1) };
}

/**
 * The signs of the limits several servers share, each read off the request and the two answers:
 * `assetType`, a file outside the API (or of the reference page) other than HTML that differs only
 * in its Content-Type (each server types files by its own MIME table, the preview as http-server
 * does); `paramNames`, a percent-encoded parameter name; `escapedUnreserved`, a percent-encoded
 * letter, digit or `-._~` in a query value that the server answers as not found.
 */
export const SHARED_LIMITS = {
  assetType(r: Request, p: RawResponse, n: RawResponse): boolean {
    const { rawPath } = split(r);
    const onlyType =
      p.status === n.status && p.body.equals(n.body) && HEADERS.every((h) => h === "content-type" || p.headers[h] === n.headers[h]);
    return onlyType && (!rawPath.startsWith("/api") || isDocsPath(rawPath)) && !/\.html?$|\/$/.test(rawPath) && p.status === 200;
  },
  paramNames: (r: Request): boolean =>
    split(r)
      .query.split("&")
      .some((part) => part.split("=")[0].includes("%")),
  escapedUnreserved: (r: Request, n: RawResponse): boolean =>
    /%(?:[46][1-9a-f]|[57][0-9a]|3[0-9]|2[de]|5f|7e)/i.test(split(r).query) && n.status === 404,
};

/** Requests beyond the route table's: methods, unknown and hidden paths, the pages, slashes, encodings. */
export function otherRequests(model: Model): Request[] {
  const ap = model.accesspoints[0];
  const ipv6 = model.accesspoints.find((a) => a.main_ipv6)?.main_ipv6;
  // A hardware address of the data in the spellings a client may send: upper, mixed case, ":" escaped.
  const mac = placeholderValues(model).values.mac?.find((m) => /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/.test(m) && /[a-f]/.test(m));
  const macs = mac
    ? [mac.toUpperCase(), mac.replace(/[a-f]/, (c) => c.toUpperCase()), mac.replace(/:/g, "%3a"), mac.toUpperCase().replace(/:/g, "%3A")]
    : [];
  const paths = [
    "/",
    "/index.html",
    "/api",
    "/api/",
    "/api/v1",
    "/api/v1/",
    `${API}/?format=api`,
    `${API}/?format=json`,
    `${API}//accesspoint/${ap.main_ip}`,
    `${API}//link/`,
    `//api/v1/link`,
    `${API}/accesspoint/${ap.main_ip}/links?status=all`,
    `${API}/accesspoint/?in_bbox=12.0,54.0,12.2,54.2`,
    `${API}/link/?in_bbox=garbage&status=online`,
    `${API}/accesspoint/?status=online&status=offline`,
    `${API}/accesspoint/?status`,
    `${API}/accesspoint/?STATUS=online`,
    fileFor("openapi"),
    fileFor("netjson"),
    `${fileFor("netjson")}?status=online`,
    // The output records' files outside the API, with a query and a trailing slash.
    ...API_SERVED.files.flatMap((f) => [f, `${f}?status=online`, `${f}/`]),
    "/map",
    "/map/",
    "/map/map.js",
    "/map/leaflet/leaflet.css",
    "/map/leaflet/",
    // The site's files with a type of their own (the metrics file).
    ...TYPED_FILES.map((t) => t.file),
    // The API reference's folder: the site's files inside /api/.
    DOCS_FOLDER.slice(0, -1),
    DOCS_FOLDER,
    fileFor("docsScript"),
    `${DOCS_FOLDER}nope.js`,
    `${DOCS_FOLDER}.hidden`,
    "/snapshots/",
    "/nope",
    "/nope/",
    fileFor("notFoundPage"),
    fileFor("aliases"),
    fileFor("marker"),
    fileFor("buildRecord"),
    fileFor("fileDigests"),
    fileFor("redirectRules"),
    `${API}/index.json`,
    `${API}/nothing`,
    "/api/v2/",
    `${API}/link/%ZZ`,
    `${API}/interface/?wifi_ssid=%E9`,
    `${API}/accesspoint/?firmware_version=%`,
    `${API}/accesspoint/?status=%6Fnline`,
    `${API}/accesspoint/?%73tatus=online`,
    ...macs.map((m) => `${API}/interface/?if_hwaddress=${m}`),
    ...(ipv6 ? [`${API}/accesspoint/${ipv6}`, `${API}/accesspoint/${ipv6.replace(/:/g, "%3A")}`, `${API}/accesspoint/${ipv6}/links`] : []),
  ];
  return [...paths.map(GET), ...paths.flatMap((target) => ["HEAD", "OPTIONS", "POST", "DELETE"].map((method) => ({ method, target })))];
}
