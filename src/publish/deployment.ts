import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import fg from "fast-glob";
import {
  API_HEADERS,
  API_SERVED_GLOBS,
  flatFile,
  hasTwin,
  isTwin,
  parseRequest,
  requestsForFile,
  resolve,
  RULES,
  TWIN,
  twinOf,
  urlFor,
  type RouteKind,
} from "../core/routes.ts";
import { groupBy } from "../core/model/collections.ts";
import { DEFAULTS } from "../core/defaults.ts";
import { httpUrl, urlError, type UrlNeed } from "../core/values/url.ts";
import { loadRouting } from "../io/read/aliases.ts";
import { describeNetworkError, withDeadline } from "../io/read/net.ts";
import { CommandError } from "../core/problems.ts";

/**
 * The live check: every list and filter route of a build, and a spread sample of its detail routes,
 * requested from a deployment and compared with the local files byte for byte, headers with the
 * route table. The requests are recovered from the build's files through the route table, so the
 * check needs nothing but the build.
 */
export interface CheckRequest {
  readonly kind: RouteKind;
  readonly target: string;
  /** the file under the build output that answers it */
  readonly file: string;
}

export interface CheckRow {
  readonly kind: RouteKind;
  requested: number;
  identical: number;
  differing: number;
  missing: number;
}

export interface CheckResult {
  readonly rows: readonly CheckRow[];
  /** every request that did not come back identical, with what was wrong */
  readonly problems: readonly { readonly target: string; readonly problem: string }[];
  /**
   * Set when the host stopped answering part-way: the run ended there, and `rows` count only the
   * requests answered before. `cause` names the network error (see describeNetworkError).
   */
  readonly stopped?: { readonly cause: string; readonly answered: number; readonly total: number };
}

export interface CheckOptions {
  /** the site, http(s)://host[:port] (see parseBaseUrl) */
  readonly base: string;
  readonly dist: string;
  readonly sample?: number;
  /** headers not compared (a host that cannot set them, e.g. Allow on Netlify) */
  readonly skipHeaders?: readonly string[];
  readonly concurrency?: number;
  /** per request, body included; 30 s by default */
  readonly timeoutMs?: number;
  readonly progress?: (done: number, total: number) => void;
}

/** The host could not be reached at all (the first request failed with a network error). The CLI exits 1. */
export class UnreachableError extends CommandError {
  readonly ending = "input";
  constructor(
    readonly base: string,
    readonly reason: string,
  ) {
    super(`cannot reach ${base}: ${reason}`);
    this.name = "UnreachableError";
  }
}

/** What check asks of its base URL, for the messages of core/values/url.ts. */
export const CHECK_URL: UrlNeed = {
  command: "check",
  needs: "the site's address as http(s)://host[:port]",
  example: "https://mesh.example.org",
  name: "the base URL",
};

const siteOf = (url: URL) => `${url.protocol}//${url.host}`;

/**
 * The site a check requests from: `http(s)://host[:port]`, IPv6 literals in brackets. A trailing
 * `/api/v1/` is taken off with a note (the route table's paths start there); anything else that is
 * not the bare site throws UrlError. Pure.
 */
export function parseBaseUrl(text: string): { base: string; note?: string } {
  const given = text.trim();
  const url = httpUrl(given, CHECK_URL, siteOf);
  const site = siteOf(url);
  const fail = (what: string): never => {
    throw urlError(CHECK_URL, what, site);
  };
  const hash = given.indexOf("#");
  const query = /\?.*/.exec(hash >= 0 ? given.slice(0, hash) : given);
  if (query) fail(`${given} has a query (${query[0]})`);
  if (hash >= 0) fail(`${given} has a fragment (${given.slice(hash)})`);
  if (/^\/*$/.test(url.pathname)) return { base: site };
  const root = urlFor("api-root");
  if (url.pathname === root || url.pathname === root.slice(0, -1))
    return { base: site, note: `checking ${site} (the base URL is the site, not its ${root})` };
  return fail(
    `${given} has a path (${url.pathname}), but the route table's paths are absolute, so a site under a sub-path cannot be checked`,
  );
}

export async function checkDeployment(options: CheckOptions): Promise<CheckResult> {
  const { base } = parseBaseUrl(options.base);
  const all = await requestsFromTree(options.dist);
  // Routes with a key in their path (details) are sampled; every other route (lists, filters) is requested.
  const keyed = new Set(RULES.filter((r) => r.from.includes(":")).map((r) => r.kind));
  const requests = [
    ...all.filter((r) => !keyed.has(r.kind)),
    ...spread(
      all.filter((r) => keyed.has(r.kind)),
      options.sample ?? DEFAULTS.sample,
    ),
  ];
  const skip = new Set((options.skipHeaders ?? []).map((h) => h.toLowerCase()));
  const timeoutMs = options.timeoutMs ?? 30_000;
  const rows = new Map<RouteKind, CheckRow>();
  const problems: { target: string; problem: string }[] = [];
  const stop = new AbortController();
  let stopped: { cause: string; answered: number; total: number } | undefined;
  let next = 0;
  let done = 0;
  /** One request; false when the host did not answer (a network error), which stops the run. */
  const one = async (req: CheckRequest): Promise<boolean> => {
    let problem: { missing: boolean; text: string } | undefined;
    try {
      problem = await withDeadline(timeoutMs, (signal) => compareOne(base, options.dist, req, skip, signal), stop.signal);
    } catch (err) {
      if (stop.signal.aborted) return false;
      const cause = describeNetworkError(err, timeoutMs);
      if (cause !== undefined) {
        stopped = { cause, answered: 0, total: requests.length };
        stop.abort();
        return false;
      }
      problem = { missing: true, text: `request failed: ${err instanceof Error ? err.message : String(err)}` };
    }
    const row = rows.get(req.kind) ?? { kind: req.kind, requested: 0, identical: 0, differing: 0, missing: 0 };
    rows.set(req.kind, row);
    row.requested++;
    if (!problem) row.identical++;
    else {
      if (problem.missing) row.missing++;
      else row.differing++;
      problems.push({ target: req.target, problem: problem.text });
    }
    done++;
    options.progress?.(done, requests.length);
    return true;
  };
  // One request first: a host that cannot be reached at all is one error, not one per request.
  if (requests.length > 0) {
    next = 1;
    if (!(await one(requests[0]))) throw new UnreachableError(base, stopped!.cause);
  }
  const worker = async () => {
    while (!stop.signal.aborted && next < requests.length) await one(requests[next++]);
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 8 }, worker));
  const order = RULES.map((r) => r.kind);
  return {
    rows: [...rows.values()].sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind)),
    problems: problems.sort((a, b) => (a.target < b.target ? -1 : 1)),
    ...(stopped ? { stopped: { ...stopped, answered: done } } : {}),
  };
}

async function compareOne(base: string, dist: string, req: CheckRequest, skip: Set<string>, signal: AbortSignal) {
  const local = await readFile(path.join(dist, req.file));
  // A file with a gzip twin is asked for as a browser asks (gzip accepted) and as a script does
  // (identity only): both must give its bytes. fetch decodes what it is sent and keeps the headers.
  const twin = hasTwin(req.file, local.length) && (await stat(path.join(dist, twinOf(req.file))).catch(() => undefined))?.isFile();
  const wrong: string[] = [];
  for (const encoding of twin ? ["gzip", "identity"] : ["gzip"]) {
    const res = await fetch(base + req.target, { redirect: "manual", signal, headers: { "Accept-Encoding": encoding } });
    const body = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200) return { missing: true, text: `HTTP ${res.status}` };
    const asked = twin ? ` (Accept-Encoding: ${encoding})` : "";
    if (!body.equals(local)) wrong.push(`body differs${asked} (${body.length} bytes, ${local.length} built)`);
    const coding = res.headers.get("content-encoding");
    if (coding !== null && (coding !== TWIN.encoding || encoding === "identity")) wrong.push(`Content-Encoding${asked}: ${coding}`);
    for (const [name, value] of Object.entries(API_HEADERS)) {
      if (skip.has(name.toLowerCase())) continue;
      const got = res.headers.get(name);
      if (!(name.toLowerCase() === "vary" ? sameVary(got, value) : got === value)) wrong.push(`${name}${asked}: ${got ?? "(none)"}`);
    }
  }
  return wrong.length ? { missing: false, text: [...new Set(wrong)].join("; ") } : undefined;
}

/**
 * The API's Vary, and Accept-Encoding beside it where the server negotiates the encoding (a gzip
 * twin's, or a host compressing on its own): compared as a set of names, as caches read it.
 */
function sameVary(got: string | null, want: string): boolean {
  const names = (v: string) =>
    v
      .split(",")
      .map((n) => n.trim().toLowerCase())
      .filter(Boolean);
  const seen = new Set(names(got ?? ""));
  seen.delete("accept-encoding");
  const wanted = new Set(names(want));
  return seen.size === wanted.size && [...wanted].every((n) => seen.has(n));
}

/** Evenly spaced picks, taken in turn from each kind, so every kind is represented. */
function spread(details: readonly CheckRequest[], n: number): CheckRequest[] {
  const groups = [...groupBy(details, (d) => d.kind).values()];
  const quota = groups.map(() => 0);
  for (let left = Math.min(n, details.length), g = 0; left > 0; g = (g + 1) % groups.length) {
    if (quota[g] < groups[g].length) {
      quota[g]++;
      left--;
    }
  }
  return groups.flatMap((items, g) => Array.from({ length: quota[g] }, (_, i) => items[Math.floor((i * items.length) / quota[g])]));
}

/** Every request the build answers with a file of its own, recovered from the file paths through the route table. */
export async function requestsFromTree(dist: string): Promise<CheckRequest[]> {
  // a gzip twin is another encoding of its file's answer, not an answer of its own
  const files = (await fg([...API_SERVED_GLOBS], { cwd: dist, onlyFiles: true }))
    .filter((f) => !isTwin(f))
    .sort()
    .map((f) => `/${f}`);
  const routing = await loadRouting(dist);
  const out: CheckRequest[] = [];
  for (const file of files) {
    // The simplest request for the file: the rule with the fewest query conditions.
    const best = requestsForFile(flatFile(file, routing.layout), routing.rules).sort(
      (a, b) => Object.keys(a.rule.query).length - Object.keys(b.rule.query).length,
    )[0];
    if (!best) continue;
    // Only what the route table maps back to this very file (keys it cannot invert are left out).
    const back = parseRequest(best.target);
    const r = back && resolve(back, routing);
    if (r?.type === "file" && r.file === file) out.push({ kind: best.rule.kind, target: best.target, file });
  }
  return out;
}

export function formatCheck(result: CheckResult): string {
  const header = ["kind", "requested", "identical", "differing", "missing"];
  const rows = result.rows.map((r) => [r.kind, r.requested, r.identical, r.differing, r.missing].map(String));
  const total = ["total", ...[1, 2, 3, 4].map((i) => String(rows.reduce((s, r) => s + Number(r[i]), 0)))];
  const all = [header, ...rows, total];
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  const lines = [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line), line(total)];
  for (const p of result.problems.slice(0, 100)) lines.push(`${p.target}: ${p.problem}`);
  if (result.problems.length > 100) lines.push(`… and ${result.problems.length - 100} more`);
  return lines.join("\n") + "\n";
}
