import { readFile } from "node:fs/promises";
import path from "node:path";
import fg from "fast-glob";
import { loadDataRules } from "../hosts/netlify.ts";
import { API_HEADERS, parseRequest, resolve, RULES, type Rule, type RouteKind } from "../core/routes.ts";
import { NULL_KEY } from "../core/names.ts";

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
}

export interface CheckOptions {
  readonly base: string;
  readonly dist: string;
  readonly sample?: number;
  /** headers not compared (a host that cannot set them, e.g. Allow on Netlify) */
  readonly skipHeaders?: readonly string[];
  readonly concurrency?: number;
  readonly progress?: (done: number, total: number) => void;
}

export async function checkDeployment(options: CheckOptions): Promise<CheckResult> {
  const all = await requestsFromTree(options.dist);
  const requests = [...all.filter((r) => r.kind.endsWith("-list")), ...spread(all.filter((r) => !r.kind.endsWith("-list")), options.sample ?? 200)];
  const skip = new Set((options.skipHeaders ?? []).map((h) => h.toLowerCase()));
  const base = options.base.replace(/\/+$/, "");
  const rows = new Map<RouteKind, CheckRow>();
  const problems: { target: string; problem: string }[] = [];
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < requests.length) {
      const req = requests[next++];
      const row = rows.get(req.kind) ?? { kind: req.kind, requested: 0, identical: 0, differing: 0, missing: 0 };
      rows.set(req.kind, row);
      row.requested++;
      const problem = await compareOne(base, options.dist, req, skip).catch((err: Error) => ({ missing: true, text: `request failed: ${err.message}` }));
      if (!problem) row.identical++;
      else {
        if (problem.missing) row.missing++;
        else row.differing++;
        problems.push({ target: req.target, problem: problem.text });
      }
      options.progress?.(++done, requests.length);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 8 }, worker));
  const order = RULES.map((r) => r.kind);
  return {
    rows: [...rows.values()].sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind)),
    problems: problems.sort((a, b) => (a.target < b.target ? -1 : 1)),
  };
}

async function compareOne(base: string, dist: string, req: CheckRequest, skip: Set<string>) {
  const res = await fetch(base + req.target, { redirect: "manual" });
  const body = Buffer.from(await res.arrayBuffer());
  if (res.status !== 200) return { missing: true, text: `HTTP ${res.status}` };
  const local = await readFile(path.join(dist, req.file));
  const wrong: string[] = [];
  if (!body.equals(local)) wrong.push(`body differs (${body.length} bytes, ${local.length} built)`);
  for (const [name, value] of Object.entries(API_HEADERS)) {
    if (skip.has(name.toLowerCase())) continue;
    const got = res.headers.get(name);
    if (got !== value) wrong.push(`${name}: ${got ?? "(none)"}`);
  }
  return wrong.length ? { missing: false, text: wrong.join("; ") } : undefined;
}

/** Evenly spaced picks, taken in turn from each kind, so every kind is represented. */
function spread(details: readonly CheckRequest[], n: number): CheckRequest[] {
  const byKind = new Map<RouteKind, CheckRequest[]>();
  for (const d of details) {
    const list = byKind.get(d.kind);
    if (list) list.push(d);
    else byKind.set(d.kind, [d]);
  }
  const groups = [...byKind.values()];
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
  const files = (await fg("api/v1/**/index.json", { cwd: dist, onlyFiles: true })).sort().map((f) => `/${f}`);
  const compiled = RULES.filter((r) => r.to !== null).map((rule) => ({ rule, ...compile(rule.to!) }));
  const dataRules = await loadDataRules(dist);
  const out: CheckRequest[] = [];
  for (const file of files) {
    let best: { rule: Rule; target: string; size: number } | undefined;
    for (const { rule, regex, names } of compiled) {
      const m = regex.exec(file);
      if (!m) continue;
      const values = Object.fromEntries(names.map((n, i) => [n, m[i + 1]]));
      const target = requestFor(rule, values);
      if (target === undefined) continue;
      const size = Object.keys(rule.query).length;
      if (!best || size < best.size) best = { rule, target, size };
    }
    if (!best) continue;
    // Only what the route table maps back to this very file (keys it cannot invert are left out).
    const back = parseRequest(best.target);
    const r = back && resolve(back, dataRules);
    if (r?.type === "file" && r.file === file) out.push({ kind: best.rule.kind, target: best.target, file });
  }
  return out;
}

function compile(pattern: string): { regex: RegExp; names: string[] } {
  const names: string[] = [];
  const source = pattern
    .split(/(:[a-z]+)/)
    .map((part) => (part.startsWith(":") ? (names.push(part.slice(1)), "([^/]+)") : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("");
  return { regex: new RegExp(`^${source}$`), names };
}

function requestFor(rule: Rule, values: Record<string, string>): string | undefined {
  const pathPart = rule.from.replace(/:([a-z]+)/g, (_, n: string) => values[n] ?? `:${n}`);
  const query: string[] = [];
  for (const [name, want] of Object.entries(rule.query)) {
    if (!want.startsWith(":")) {
      query.push(`${name}=${encodeURIComponent(want)}`);
      continue;
    }
    const key = values[want.slice(1)];
    const value = key === undefined ? undefined : unkey(key);
    if (value === undefined) return undefined;
    query.push(`${name}=${encodeURIComponent(value)}`);
  }
  return query.length ? `${pathPart}?${query.join("&")}` : pathPart;
}

/** The inverse of fileKey(); undefined for hashed keys and for names that are not keys. */
export function unkey(key: string): string | undefined {
  if (key === NULL_KEY || key.startsWith("_H")) return undefined;
  const bytes: number[] = [];
  for (let i = 0; i < key.length; i++) {
    if (key[i] === "_") {
      const hex = key.slice(i + 1, i + 3);
      if (!/^[0-9A-F]{2}$/.test(hex)) return undefined;
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else bytes.push(key.charCodeAt(i));
  }
  return Buffer.from(bytes).toString("utf8");
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
