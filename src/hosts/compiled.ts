import type { PlaceholderValues } from "../core/plan.ts";
import { FLAT, placeFile, QUERY_PLACEHOLDERS, RULES, SHARD_MARK, type Layout, type RouteKind, type Rule } from "../core/routes.ts";
import { isParseableVersion, PARSEABLE_VERSION_GROUP, versionsAtMost } from "../core/values/version.ts";
import { dataPlaceholder } from "./literals.ts";
import { hardwareAddressKeyOf, literalPatterns, OWN_KEY, regexEscape } from "./patterns.ts";

/**
 * The route table compiled once for the web servers (nginx, Apache, Caddy): what each rule tests and
 * where it leads, with the server's syntax left out. A server host is a printer of this form in its
 * own dialect (docs/development.md, "A server host"): how it names a capture, whether it sees
 * runs of slashes merged, how it spells a literal query value, and whether it can lower a value.
 */

/** Where a piece of a rule's target comes from. */
export type TargetPart =
  | { readonly text: string }
  /** a path placeholder: `index` counts the path's placeholders from 0 */
  | { readonly path: string; readonly index: number }
  /** a query placeholder other than the data's (status): its value is its own file-name key */
  | { readonly query: string };

/** What a rule asks of one query parameter. */
export type QueryTest =
  /** the parameter is absent or holds anything (the rule does not name it) */
  | { readonly is: "any" }
  /** exactly this value (as the route table lists it; `""` is an empty or valueless parameter) */
  | { readonly is: "literal"; readonly value: string }
  /** present with a value: a placeholder whose file is decided later (the data's) or never (a 404 rule) */
  | { readonly is: "present" }
  /** present, and the file is reached only when the value is its own file-name key (`name` its placeholder) */
  | { readonly is: "own"; readonly name: string };

export interface ServerRule {
  readonly rule: Rule;
  readonly kind: RouteKind;
  /** the path is a list's (trailing slash): without its slash it moves to it */
  readonly list: boolean;
  /** a rule that answers 404 whatever its values */
  readonly closed: boolean;
  /** the data placeholder of its query, whose value's key is looked up after the rule is chosen */
  readonly data?: { readonly param: string; readonly name: string };
  /** per query parameter the rule names, in the rule's order */
  readonly query: readonly (readonly [param: string, test: QueryTest])[];
  /** its file: up to the data placeholder's key (`to`), and after it (`rest`); empty for a closed rule */
  readonly to: readonly TargetPart[];
  readonly rest: readonly TargetPart[];
  /**
   * In a build that splits a folder of its file (core/routes/layout.ts): the placeholder whose key
   * gets its shard, the data's (`data`) or the one that stands between `to` and `rest` (`key`).
   */
  readonly split: boolean;
  readonly key?: Exclude<TargetPart, { text: string }>;
}

export interface ServerTable {
  /** the route table it was compiled from */
  readonly source: readonly Rule[];
  /** every query parameter a rule names, sorted: a server reads each into a state */
  readonly params: readonly string[];
  /** the data placeholders, sorted: each has its key lookup */
  readonly data: readonly string[];
  /** the kinds of route a rule with a file answers, in table order (their answers to OPTIONS) */
  readonly kinds: readonly RouteKind[];
  readonly rules: readonly ServerRule[];
  /** whether a rule's file lies in a split folder: a server then writes the shard step (shardPattern) */
  readonly split: boolean;
}

const compiled = new WeakMap<readonly Rule[], Map<string, ServerTable>>();

/** The server form of a build's route table (without values, the generic one's). */
export const serverTable = (values: PlaceholderValues | undefined): ServerTable =>
  compileRules(values?.rules ?? RULES, values?.layout ?? FLAT);

/** The server form of a route table for a layout, compiled once per table and layout. */
export function compileRules(rules: readonly Rule[], layout: Layout = FLAT): ServerTable {
  const byLayout = compiled.get(rules) ?? new Map<string, ServerTable>();
  compiled.set(rules, byLayout);
  const id = layout.split.join("\n");
  let table = byLayout.get(id);
  if (!table) {
    const out = rules.map((r) => compileRule(r, layout));
    table = {
      source: rules,
      params: [...new Set(rules.flatMap((r) => Object.keys(r.query)))].sort(),
      data: [...new Set(out.flatMap((r) => (r.data ? [r.data.name] : [])))].sort(),
      kinds: [...new Set(out.filter((r) => !r.closed).map((r) => r.kind))],
      rules: out,
      split: out.some((r) => r.split),
    };
    byLayout.set(id, table);
  }
  return table;
}

/** The placeholder of a target whose folder the layout splits (at most one: only fixed folders split). */
function splitPlaceholder(to: string, layout: Layout): string | undefined {
  for (const m of to.matchAll(/:([a-z]+)/g)) if (layout.split.includes(to.slice(0, m.index))) return m[1];
  return undefined;
}

function compileRule(rule: Rule, layout: Layout): ServerRule {
  const closed = rule.kind === "not-found" || rule.to === null;
  const placeholder = (v: string) => (v.startsWith(":") ? v.slice(1) : undefined);
  const data = dataPlaceholder(rule);
  const query = Object.entries(rule.query).map(([param, v]): [string, QueryTest] => {
    const name = placeholder(v);
    if (name === undefined) return [param, { is: "literal", value: v }];
    return [param, closed || param === data?.param ? { is: "present" } : { is: "own", name }];
  });
  if (closed) return { rule, kind: rule.kind, list: rule.from.endsWith("/"), closed, data, query, to: [], rest: [], split: false };
  const splitAt = splitPlaceholder(rule.to!, layout);
  // A key written out in the target (the null version's `_null`) is placed now, as the plan places its file.
  const target = splitAt === undefined ? placeFile(rule.to!, layout) : rule.to!;
  const pathNames = rule.from
    .split("/")
    .filter((s) => s.startsWith(":"))
    .map((s) => s.slice(1));
  const to: TargetPart[] = [];
  let rest: TargetPart[] | undefined;
  let key: ServerRule["key"];
  for (const piece of target.split(/(:[a-z]+)/)) {
    if (piece === "") continue;
    const name = placeholder(piece);
    if (name !== undefined && name === data?.name) {
      rest = [];
      continue;
    }
    const part: TargetPart =
      name === undefined ? { text: piece } : pathNames.includes(name) ? { path: name, index: pathNames.indexOf(name) } : { query: name };
    if (name !== undefined && name === splitAt && !("text" in part)) {
      // The key of a split folder sits between `to` and `rest`, where a server puts its shard before it.
      key = part;
      rest = [];
      continue;
    }
    (rest ?? to).push(part);
  }
  if (key && data) throw new Error(`${rule.from}: a rule with a data placeholder keys no other split folder`);
  const split = splitAt !== undefined;
  return { rule, kind: rule.kind, list: rule.from.endsWith("/"), closed, data, query, to, rest: rest ?? [], split, ...(key && { key }) };
}

/**
 * A key's shard (core/routes/layout.ts shardOf) as a server computes it: a pattern over
 * `<split>|<key>` (split "1" when the rule's folder splits) whose group `mesh_s` holds the key's last
 * two characters (or its only one); the shard folder is SHARD_MARK, that group and "/".
 */
export function shardPattern(dialect: Dialect): string {
  return `^1\\|.*?${dialect.group("mesh_s", ".{1,2}")}$`;
}
export { SHARD_MARK };

/** A target's parts written by a server: each placeholder as the server refers to its capture, text as it is. */
export function printTarget(parts: readonly TargetPart[], placeholder: (part: Exclude<TargetPart, { text: string }>) => string): string {
  return parts.map((p) => ("text" in p ? p.text : placeholder(p))).join("");
}

/** How a server writes the patterns of the compiled form. */
export interface Dialect {
  /** a capture: named where the server names them (`(?<n>…)` PCRE, `(?P<n>…)` RE2), numbered where not */
  group(name: string, body: string): string;
  /** the path as the server matches it: runs of slashes merged already ("/"), or not ("/+") */
  readonly slash: "/" | "/+";
  /** a literal query value of a rule, over the raw query */
  literal(value: string): string;
  /** the capture of the data placeholder's raw value (with its `=`), where the rule's match carries it on */
  readonly valueGroup?: string;
}

/**
 * A rule's query as one pattern over the server's joined states (`-` absent, `=<raw value>`), one per
 * parameter of the table in order, joined by `&`. `own` lets a plain placeholder capture its key
 * (the rule's file), else it is only tested present (the 404 of a value that is no key).
 */
export function queryPattern(table: ServerTable, rule: ServerRule, own: boolean, dialect: Dialect): string {
  const tests = new Map(rule.query);
  return table.params
    .map((param) => {
      const test = tests.get(param);
      if (test === undefined || test.is === "any") return "[^&]*";
      if (test.is === "literal") return `=${dialect.literal(test.value)}`;
      if (own && test.is === "own") return `=${dialect.group(`mesh_p_${test.name}`, OWN_KEY)}`;
      if (own && dialect.valueGroup && param === rule.data?.param) return dialect.group(dialect.valueGroup, "=[^&]*");
      return "=[^&]*";
    })
    .join("&");
}

/**
 * A rule's path as a pattern over the decoded path; `:name` segments are safe segments, captured
 * (core/routes/resolve.ts isSafeSegment). `slash` for a list: none, required, optional, or an
 * optional one captured (for a server that notes whether it was there).
 */
export function pathPattern(from: string, slash: "" | "/" | "any" | "captured", dialect: Dialect): string {
  const run = (s: string) => (dialect.slash === "/" ? s : s.replace(/\//g, "/+"));
  if (from.endsWith("/*")) return `${run(regexEscape(from.slice(0, -2)))}(?:/.*)?`;
  const body = from
    .replace(/\/$/, "")
    .split("/")
    .map((s) => (s.startsWith(":") ? dialect.group(`mesh_p_${s.slice(1)}`, "[^/\\\\\\x00-\\x1f\\x7f]+") : regexEscape(s)))
    .join(dialect.slash);
  const optional = dialect.slash === "/" ? "/?" : "/*";
  const end = { "": "", "/": dialect.slash, any: optional, captured: dialect.group("mesh_slash", optional) };
  return body + end[slash];
}

/** How a value of one data placeholder becomes its file's key, for a server to write in its order. */
export interface KeyLookup {
  readonly name: string;
  /** the key every value of the class with one answer gets (an unparseable `__after` bound), if the data has that class */
  readonly other?: string;
  /** a hardware address of six hex pairs gets its key computed (lower case, `:` as `_3A`) rather than listed */
  readonly hardware: boolean;
  /** each value of the data that is not its own key: a pattern over its raw spellings, and its key */
  readonly literals: ReadonlyMap<string, string>;
  /**
   * For an ordered placeholder (firmware bounds), the classes of values in their order: a value
   * answers with the key of the first whose pattern (over the value, unanchored source) it matches;
   * the last matches every value the sort key orders. Empty without bounds.
   */
  readonly ordered: readonly { readonly pattern: string; readonly key: string }[];
}

/**
 * The key lookup of a data placeholder for these values (none without them). `lowers`: whether the
 * server can lower a captured value, so that any-case hardware addresses need no pattern of their own;
 * `fits`: whether its syntax and limits carry a pattern (hosts/patterns.ts overlong).
 */
export function keyLookup(
  name: string,
  values: PlaceholderValues | undefined,
  server: { readonly lowers: boolean; readonly fits?: (pattern: string) => boolean },
): KeyLookup {
  const spec = QUERY_PLACEHOLDERS[name];
  const hardware = spec.fold === "lower";
  const other = spec.other ? values?.others.get(name) : undefined;
  const literals = values
    ? literalPatterns(values, name, hardware && server.lowers ? hardwareAddressKeyOf : undefined, server.fits)
    : new Map<string, string>();
  return { name, other, hardware, literals, ordered: orderedClasses(name, values) };
}

/**
 * The classes of an ordered placeholder's values: the build's bounds in their order, a run of bounds
 * answered by one file as one class ("at or before the run's last bound"), the last class any value
 * the sort key orders (core/routes/resolve.ts answers alike).
 */
function orderedClasses(name: string, values: PlaceholderValues | undefined): { pattern: string; key: string }[] {
  const list = (values?.bounds.get(name) ?? []).filter(([bound]) => isParseableVersion(bound));
  const out: { pattern: string; key: string }[] = [];
  list.forEach(([bound, key], i) => {
    if (i + 1 < list.length && list[i + 1][1] === key) return;
    out.push({ pattern: i + 1 < list.length ? unanchored(versionsAtMost(bound)) : PARSEABLE_VERSION_GROUP, key });
  });
  return out;
}

/** A pattern's source without its anchors, to be put inside another. */
function unanchored(source: string): string {
  return `(?:${source.replace(/^\^/, "").replace(/\$$/, "")})`;
}
