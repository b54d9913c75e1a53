import { unkey } from "../values/names.ts";
import { FILES, type FileName } from "./files.ts";
import type { Request } from "./resolve.ts";
import type { RouteKind } from "./responses.ts";
import { RULES, type Rule } from "./table.ts";

/**
 * The URL of a route: the first rule of `kind` with a file whose query names exactly the parameters
 * given (besides its path placeholders) and whose literal values are the ones given. Path values are
 * used as segments as they are (percent-encoded but for ":", which addresses keep); query values
 * percent-encoded, in the rule's order. The only way code outside this table names a URL.
 */
export function urlFor(kind: RouteKind, values: Readonly<Record<string, string>> = {}, rules: readonly Rule[] = RULES): string {
  const given = Object.keys(values);
  for (const rule of candidatesOf(rules, kind)) {
    if (!rule.path.every((name) => name in values)) continue;
    if (rule.want.length !== given.length - rule.path.length) continue;
    if (!rule.want.every(([name, v]) => name in values && (v.startsWith(":") ? values[name] !== "" : v === values[name]))) continue;
    const filled = rule.from.replace(/:([a-z]+)/g, (_, name: string) => encodeURIComponent(values[name]).replace(/%3A/gi, ":"));
    const q = rule.want.map(([name]) => `${name}=${encodeURIComponent(values[name])}`).join("&");
    return q ? `${filled}?${q}` : filled;
  }
  throw new Error(`no route of ${kind} takes ${JSON.stringify(given)}`);
}

/** A rule with a file, its path placeholders and its query as urlFor reads them. */
interface Candidate {
  readonly from: string;
  readonly path: readonly string[];
  readonly want: readonly (readonly [string, string])[];
}

/**
 * The rules of each kind that have a file, in the table's order, read once per table: the history
 * names a URL for each access point and each change (tens of thousands a build), where scanning the
 * whole table each time cost a tenth of a second per 10,000 (docs/performance.md).
 */
const candidates = new WeakMap<readonly Rule[], Map<string, Candidate[]>>();
function candidatesOf(rules: readonly Rule[], kind: RouteKind): readonly Candidate[] {
  let byKind = candidates.get(rules);
  if (!byKind) {
    byKind = new Map();
    for (const rule of rules) {
      if (rule.to === null) continue;
      const path = [...new Set([...rule.from.matchAll(/:([a-z]+)/g)].map((m) => m[1]))];
      const list = byKind.get(rule.kind) ?? [];
      list.push({ from: rule.from, path, want: Object.entries(rule.query) });
      byKind.set(rule.kind, list);
    }
    candidates.set(rules, byKind);
  }
  return byKind.get(kind) ?? [];
}

/**
 * The path forms of a kind (`rule.from`, in the table's order) as `/api/v1/accesspoint/:ip`: for
 * pages that show a form with its placeholders.
 */
export function pathFormsOf(kind: RouteKind, rules: readonly Rule[] = RULES): string[] {
  return [...new Set(rules.filter((r) => r.kind === kind && r.to !== null).map((r) => r.from))];
}

/** Templates as patterns, compiled once: file -> template and the keys it holds. */
const compiled = new Map<string, { regex: RegExp; names: string[] }>();
function compile(template: string): { regex: RegExp; names: string[] } {
  let c = compiled.get(template);
  if (!c) {
    const names: string[] = [];
    const source = template
      .split(/(:[a-z]+)/)
      .map((part) => (part.startsWith(":") ? (names.push(part.slice(1)), "([^/]+)") : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
      .join("");
    compiled.set(template, (c = { regex: new RegExp(`^${source}$`), names }));
  }
  return c;
}

function match(template: string, file: string): Record<string, string> | undefined {
  const { regex, names } = compile(template);
  const m = regex.exec(file);
  return m ? Object.fromEntries(names.map((n, i) => [n, m[i + 1]])) : undefined;
}

/** The template a file of the build was made from; undefined for a file the route table does not know. */
export function templateOf(file: string): FileName | undefined {
  return (Object.keys(FILES) as FileName[]).find((name) => match(FILES[name], file) !== undefined);
}

/**
 * Requests the route table answers with a file, recovered from the file: one per rule whose target
 * it matches and whose keys can be turned back into values (hashed keys cannot).
 */
export function requestsForFile(file: string, rules: readonly Rule[] = RULES): { rule: Rule; target: string }[] {
  const index = targetIndex(rules);
  const found: { at: number; rule: Rule; target: string }[] = [];
  const add = (entries: readonly (readonly [number, Rule])[], keys: Record<string, string>) => {
    for (const [at, rule] of entries) {
      const target = requestFor(rule, keys);
      if (target !== undefined) found.push({ at, rule, target });
    }
  };
  add(index.exact.get(file) ?? [], {});
  for (const t of index.patterned) {
    if (!file.startsWith(t.prefix)) continue;
    const keys = match(t.template, file);
    if (keys) add(t.rules, keys);
  }
  // In the table's order, as a walk over every rule gives them.
  return found.sort((a, b) => a.at - b.at).map(({ rule, target }) => ({ rule, target }));
}

/**
 * A table's rules by their targets, made once per table: a file is compared with the few templates
 * that hold placeholders (after their fixed start), and finds the rules of a written-out target at
 * once, instead of matching every rule (thousands of files times hundreds of rules in `check`).
 */
interface TargetIndex {
  readonly exact: ReadonlyMap<string, readonly (readonly [number, Rule])[]>;
  readonly patterned: readonly {
    readonly template: string;
    readonly prefix: string;
    readonly rules: readonly (readonly [number, Rule])[];
  }[];
}
const indexes = new WeakMap<readonly Rule[], TargetIndex>();
function targetIndex(rules: readonly Rule[]): TargetIndex {
  let index = indexes.get(rules);
  if (!index) {
    const exact = new Map<string, [number, Rule][]>();
    const patterned = new Map<string, [number, Rule][]>();
    rules.forEach((rule, at) => {
      if (rule.to === null) return;
      const into = rule.to.includes(":") ? patterned : exact;
      const entries = into.get(rule.to) ?? [];
      if (entries.length === 0) into.set(rule.to, entries);
      entries.push([at, rule]);
    });
    index = {
      exact,
      patterned: [...patterned].map(([template, entries]) => ({
        template,
        prefix: template.slice(0, template.indexOf(":")),
        rules: entries,
      })),
    };
    indexes.set(rules, index);
  }
  return index;
}

function requestFor(rule: Rule, keys: Record<string, string>): string | undefined {
  const pathPart = rule.from.replace(/:([a-z]+)/g, (_, n: string) => keys[n] ?? `:${n}`);
  const query: string[] = [];
  for (const [name, want] of Object.entries(rule.query)) {
    const value = want.startsWith(":") ? unkey(keys[want.slice(1)] ?? "") : want;
    if (value === undefined) return undefined;
    query.push(`${name}=${encodeURIComponent(value)}`);
  }
  return query.length ? `${pathPart}?${query.join("&")}` : pathPart;
}

/** Parses a raw request target (path and query as sent) like a host does; undefined for bad encoding. */
export function parseRequest(target: string): Request | undefined {
  const q = target.indexOf("?");
  const rawPath = q < 0 ? target : target.slice(0, q);
  const rawQuery = q < 0 ? "" : target.slice(q + 1);
  let path: string;
  try {
    path = decodeURIComponent(rawPath);
  } catch {
    return undefined;
  }
  const params = new Map<string, string>();
  for (const part of rawQuery.split("&")) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    const rawName = eq < 0 ? part : part.slice(0, eq);
    const rawValue = eq < 0 ? "" : part.slice(eq + 1);
    try {
      params.set(formDecode(rawName), formDecode(rawValue));
    } catch {
      return undefined;
    }
  }
  return { path: path.replace(/\/{2,}/g, "/"), params };
}

function formDecode(text: string): string {
  return decodeURIComponent(text.replace(/\+/g, " "));
}
