import { compareVersionKeys } from "../values/version.ts";
import { FLAT, placeFile, type Layout } from "./layout.ts";
import { keyFor, QUERY_PLACEHOLDERS } from "./placeholders.ts";
import { RULES, type Rule } from "./table.ts";

export interface Request {
  /** decoded path */
  readonly path: string;
  /** decoded query parameters; for a repeated name the last value counts (as on the hosts) */
  readonly params: ReadonlyMap<string, string>;
}

export type Resolution =
  | { readonly type: "file"; readonly rule: Rule; readonly file: string }
  | { readonly type: "redirect"; readonly rule: Rule; readonly location: string }
  | { readonly type: "not-found"; readonly rule?: Rule };

/**
 * Filter values answered by the file of another value (`firmware_version__before` bounds with the
 * same result): placeholder -> value -> key. The plan decides them; the build writes them to
 * FILES.aliases for the preview and check, and hosts turn them into rules of their own.
 */
export type Aliases = ReadonlyMap<string, ReadonlyMap<string, string>>;

/** The key answering every value of a placeholder's `other` class (QueryPlaceholder.other): placeholder -> key. */
export type Others = ReadonlyMap<string, string>;

/**
 * The present values of an ordered placeholder (QueryPlaceholder.sortKey) in their order, each with
 * the key of its file: placeholder -> [value, key][]. A value the sort key orders answers as the
 * first of them at or after it, past them all as the last.
 */
export type Bounds = ReadonlyMap<string, readonly (readonly [string, string])[]>;

/**
 * What a host needs from a build to route it beyond the route table's templates: the filter aliases,
 * the key of each placeholder's class with one answer, the ordered bounds, the list default that
 * picks the table, and the folders split into shards. The build writes it to FILES.aliases (routing.ts).
 */
export interface Routing {
  readonly aliases: Aliases;
  readonly others: Others;
  readonly bounds: Bounds;
  readonly rules: readonly Rule[];
  /** the folders the build splits into shards (layout.ts) */
  readonly layout: Layout;
}

/** The routing of a build without its routing file: no aliases, classes or bounds, and the default table. */
export const NO_ROUTING: Routing = { aliases: new Map(), others: new Map(), bounds: new Map(), rules: RULES, layout: FLAT };

/**
 * Resolves a request the way the preview serves it: the rules' matching (above), plus the original API's
 * path-form rules that static hosts cannot express (a list path without its slash redirects; a
 * detail path with a trailing slash is not found). Placeholder values become file-name keys.
 */
export function resolve(req: Request, routing: Routing = NO_ROUTING): Resolution {
  const { aliases, others, bounds } = routing;
  const path = pathOf(req.path);
  for (const rule of routing.rules) {
    const m = matchPath(rule.from, path);
    if (!m) continue;
    const values = matchQuery(rule.query, req.params, aliases, others, bounds);
    if (!values) continue;
    // A placeholder with an empty value names no file (on a static host too: the target is missing).
    if (rule.kind === "not-found" || rule.to === null || Object.values(values).includes("")) return { type: "not-found", rule };
    if (rule.from.endsWith("/") && !m.slash) return { type: "redirect", rule, location: `${req.path}/` };
    if (!rule.from.endsWith("/") && m.slash) continue;
    return { type: "file", rule, file: placeFile(substitute(rule.to, { ...m.values, ...values }), routing.layout) };
  }
  return { type: "not-found" };
}

/** A request's path as the rules compare it: whole, with its trailing slash noted, and split into segments (once a request, not once a rule). */
interface SplitPath {
  readonly whole: string;
  readonly slash: boolean;
  readonly segments: readonly string[];
}

function pathOf(whole: string): SplitPath {
  const slash = whole.endsWith("/") && whole.length > 1;
  return { whole, slash, segments: (slash ? whole.slice(0, -1) : whole).split("/") };
}

function matchPath(pattern: string, path: SplitPath): { values: Record<string, string>; slash: boolean } | undefined {
  if (pattern.endsWith("/*"))
    return path.whole === pattern.slice(0, -2) || path.whole.startsWith(pattern.slice(0, -1)) ? { values: {}, slash: false } : undefined;
  const want = patternSegments(pattern);
  const got = path.segments;
  if (want.length !== got.length) return undefined;
  for (let i = 0; i < want.length; i++) if (!want[i].startsWith(":") && want[i] !== got[i]) return undefined;
  const values: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (!want[i].startsWith(":")) continue;
    if (!isSafeSegment(got[i])) return undefined;
    values[want[i].slice(1)] = got[i];
  }
  return { values, slash: path.slash };
}

/** Patterns are few, requests many: each pattern is split once. */
const splitPatterns = new Map<string, readonly string[]>();
function patternSegments(pattern: string): readonly string[] {
  let segments = splitPatterns.get(pattern);
  if (!segments) splitPatterns.set(pattern, (segments = pattern.replace(/\/$/, "").split("/")));
  return segments;
}

/** A path placeholder is used verbatim in a file name: refuse anything that could leave its folder. */
function isSafeSegment(segment: string): boolean {
  return segment !== "" && segment !== "." && segment !== ".." && !/[\\\0\u0001-\u001f\u007f]/.test(segment);
}

function matchQuery(
  query: Readonly<Record<string, string>>,
  params: ReadonlyMap<string, string>,
  aliases: Aliases,
  others: Others,
  bounds: Bounds,
): Record<string, string> | undefined {
  const values: Record<string, string> = {};
  for (const [name, want] of Object.entries(query)) {
    const got = params.get(name);
    if (got === undefined) return undefined;
    if (want.startsWith(":")) {
      const placeholder = want.slice(1);
      // An empty value stays empty: it names no file.
      values[placeholder] =
        got === ""
          ? ""
          : (aliases.get(placeholder)?.get(got) ??
            orderedKey(placeholder, got, bounds) ??
            otherKey(placeholder, got, others) ??
            keyFor(placeholder, got));
    } else if (want !== got) return undefined;
  }
  return values;
}

/** The sort keys of a Bounds list, parsed once per list. */
const sortKeys = new WeakMap<readonly (readonly [string, string])[], readonly (readonly number[] | undefined)[]>();

function orderedKey(placeholder: string, value: string, bounds: Bounds): string | undefined {
  const sortKey = QUERY_PLACEHOLDERS[placeholder]?.sortKey;
  const list = bounds.get(placeholder);
  const key = sortKey?.(value);
  if (!list || list.length === 0 || key === undefined) return undefined;
  let keys = sortKeys.get(list);
  if (!keys) sortKeys.set(list, (keys = list.map(([v]) => sortKey!(v))));
  // The first present value that sorts at or after the value (unordered present values sort first).
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const k = keys[mid];
    if (k === undefined || compareVersionKeys(k, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return list[Math.min(lo, list.length - 1)][1];
}

function otherKey(placeholder: string, value: string, others: Others): string | undefined {
  const key = others.get(placeholder);
  return key !== undefined && QUERY_PLACEHOLDERS[placeholder]?.other?.(value) ? key : undefined;
}

function substitute(pattern: string, values: Record<string, string>): string {
  return pattern.replace(/:([a-z]+)/g, (_, name: string) => values[name] ?? `:${name}`);
}
