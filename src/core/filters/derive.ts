import { deferred, type Body } from "../body.ts";
import { groupBy } from "../model/collections.ts";
import { STATUSES, type Model } from "../model/model.ts";
import { fill } from "../routes/placeholders.ts";
import type { RouteKind } from "../routes/responses.ts";
import type { DefaultStatus } from "../settings.ts";
import { FILTERS, LISTS, REFUSAL_PLACEHOLDERS, STATUS, type Docs, type FilterRecord, type ListRecord } from "./records.ts";

/**
 * The route table's list rules, the plan's list files and the filters' other facts, derived from the
 * records (filters/records.ts). A rule is first match wins (routes/table.ts).
 */

export interface Rule {
  readonly kind: RouteKind;
  /** canonical request path; `:name` segments are placeholders; a trailing "/" marks a list form */
  readonly from: string;
  /** query conditions: a literal value (possibly "") or a `:placeholder` */
  readonly query: Readonly<Record<string, string>>;
  /** target file under the output root, with placeholders; null for a 404 */
  readonly to: string | null;
}

export const rule = (kind: RouteKind, from: string, query: Record<string, string>, to: string | null): Rule => ({ kind, from, query, to });

/**
 * A list with a status filter. `status=all` means no filter; `status=` (empty) means the parameter was
 * not given, as an empty value does for every filter, and so answers the list's default like a
 * request without `status`: the whole list, or with `--default-status online` the online file.
 */
export function withStatus(
  kind: RouteKind,
  from: string,
  query: Record<string, string>,
  file: string,
  statusFile: string,
  byDefault: DefaultStatus = "all",
): Rule[] {
  const fallback = byDefault === "all" ? file : fill(statusFile, { [STATUS.placeholder]: byDefault });
  return [
    rule(kind, from, { ...query, [STATUS.param]: "all" }, file),
    rule(kind, from, { ...query, [STATUS.param]: "" }, fallback),
    rule(kind, from, { ...query, [STATUS.param]: `:${STATUS.placeholder}` }, statusFile),
    rule(kind, from, query, fallback),
  ];
}

/** One way a request gives a filter, in rule order: a spelling of a choice, the empty value, a data value, another (refused) value. */
type Given =
  | { readonly as: "choice"; readonly query: string; readonly value: string }
  | { readonly as: "none" | "null"; readonly query: "" }
  | { readonly as: "data"; readonly query: string }
  | { readonly as: "refused"; readonly query: string };

interface Part {
  readonly filter: FilterRecord;
  readonly given: Given;
}

function ways(f: FilterRecord): Given[] {
  const v = f.values;
  if (v.kind === "data")
    return [
      { as: f.empty, query: "" },
      { as: "data", query: `:${v.placeholder}` },
    ];
  const choices = v.choices.flatMap((c) => c.spellings.map((query): Given => ({ as: "choice", query, value: c.value })));
  // An ignored value falls through to the list without the filter, the empty one too: no rule names them.
  if (v.others === "ignored") return choices;
  return [...choices, { as: "none", query: "" }, { as: "refused", query: ":" }];
}

const paired = (a: FilterRecord, b: FilterRecord, key: "exclusiveWith" | "notWith") =>
  (a[key] ?? []).includes(b.param) || (b[key] ?? []).includes(a.param);

/** Every subset of the filters, each with its first filter before those without it: larger combinations first. */
function* subsets(filters: readonly FilterRecord[]): Generator<FilterRecord[]> {
  if (filters.length === 0) return yield [];
  const [first, ...rest] = filters;
  for (const s of subsets(rest)) yield [first, ...s];
  yield* subsets(rest);
}

/** An answered combination of filters: the file templates and what fills them. */
export interface Target {
  readonly list: ListRecord;
  /** the filters that select (an empty value meaning none does not) */
  readonly parts: readonly Part[];
  /** the same in the file's order (its segments, its name in FILES) */
  readonly ordered: readonly Part[];
  readonly file: string;
  /** with a status per item: the file per status (`:status`) */
  readonly statusFile?: string;
  /** a slotted choice's value, the null value */
  readonly fills: Readonly<Record<string, string | null>>;
}

/** A combination's parts in its file's order: declaration order, a format's last. */
function inFileOrder(declared: readonly FilterRecord[], parts: readonly Part[]): Part[] {
  const order = [...declared.filter((f) => !f.format), ...declared.filter((f) => f.format)];
  return order.flatMap((f) => parts.filter((p) => p.filter === f));
}

/** The file of a combination: its filters' segments in the file's order, `status` after them. */
function template(list: ListRecord, ordered: readonly Part[], status: boolean): string {
  const segments = ordered.map(({ filter: f, given }) => {
    const v = f.values;
    if (v.kind === "data") return `${f.param}/:${v.placeholder}`;
    return `${f.param}/${v.slot && given.as === "choice" ? `:${v.slot}` : (given as { value: string }).value}`;
  });
  if (status) segments.push(`${STATUS.param}/:${STATUS.placeholder}`);
  return segments.length === 0 ? `${list.path}index.json` : `${list.path}_q/${segments.join("/")}/index.json`;
}

/**
 * A list's rules from its filters, and the combinations they answer with a file. First the pairs of
 * exclusive filters, whatever their values; then every other combination, larger ones first, each
 * filter given in each of its ways: a combination that refuses (a refused value, or filters not
 * precomputed together) is one 404 rule, any other its file (with a file per status, `withStatus`).
 */
export function listRules(
  list: ListRecord,
  byDefault: DefaultStatus,
  filters: readonly FilterRecord[] = FILTERS,
): { rules: Rule[]; targets: Target[] } {
  const declared = filters.filter((f) => f.resource === list.resource);
  // Rule order: fixed filters (their spellings are the most specific rules), then data filters.
  const ranked = [...declared.filter((f) => f.values.kind === "fixed"), ...declared.filter((f) => f.values.kind === "data")];
  const inRuleOrder = (pair: readonly FilterRecord[]) => [...pair].sort((a, b) => ranked.indexOf(a) - ranked.indexOf(b));
  const rules: Rule[] = [];
  const answered = new Map<string, Target>();
  const refuse = (filters: readonly FilterRecord[]) =>
    rule(list.kind, list.path, Object.fromEntries(filters.map((f, i) => [f.param, `:${REFUSAL_PLACEHOLDERS[i]}`])), null);
  for (const [j, later] of declared.entries())
    for (const earlier of declared.slice(0, j))
      if (paired(earlier, later, "exclusiveWith")) rules.push(refuse(inRuleOrder([earlier, later])));
  for (const combination of subsets(ranked)) {
    if (combination.some((a, i) => combination.slice(i + 1).some((b) => paired(a, b, "exclusiveWith")))) continue;
    let tuples: Part[][] = [[]];
    for (const filter of combination) tuples = tuples.flatMap((t) => ways(filter).map((given) => [...t, { filter, given }]));
    for (const tuple of tuples) {
      const parts = tuple.filter((p) => p.given.as !== "none");
      const refused =
        parts.some((p) => p.given.as === "refused") ||
        parts.some((a, i) => parts.slice(i + 1).some((b) => paired(a.filter, b.filter, "notWith")));
      if (refused) {
        // The null value is refused by the placeholder's rule that follows: one rule does for both.
        if (tuple.some((p) => p.given.as === "null")) continue;
        let n = 0;
        const query = tuple.map(({ filter, given }) => [
          filter.param,
          given.as === "data" || given.as === "refused" ? `:${REFUSAL_PLACEHOLDERS[n++]}` : given.query,
        ]);
        rules.push(rule(list.kind, list.path, Object.fromEntries(query), null));
        continue;
      }
      const query = Object.fromEntries(tuple.map(({ filter, given }) => [filter.param, given.query]));
      const fills: Record<string, string | null> = {};
      for (const { filter, given } of parts) {
        const v = filter.values;
        if (given.as === "choice" && v.kind === "fixed" && v.slot) fills[v.slot] = given.value;
        if (given.as === "null" && v.kind === "data") fills[v.placeholder] = null;
      }
      const ordered = inFileOrder(declared, parts);
      const file = template(list, ordered, false);
      const statusFile = list.status && template(list, ordered, true);
      const to = fill(file, fills);
      if (statusFile) rules.push(...withStatus(list.kind, list.path, query, to, fill(statusFile, fills), byDefault));
      else rules.push(rule(list.kind, list.path, query, to));
      // Several ways of asking share a file (an empty value meaning none, and none at all): it is written once.
      if (!answered.has(to)) answered.set(to, { list, parts, ordered, file, statusFile, fills });
    }
  }
  return { rules, targets: [...answered.values()] };
}

/** Every list file of a model: each answered combination's groups of items, with a file per status where the list has one. */
export function* listFiles(
  model: Model,
  lists: readonly ListRecord[] = LISTS,
  filters: readonly FilterRecord[] = FILTERS,
): Generator<ListFile> {
  for (const list of lists) {
    const earlier = new SameMembers();
    for (const t of listRules(list, model.settings.defaultStatus, filters).targets) {
      const format = t.parts.find((p) => p.filter.format);
      const render = list.render[format?.given.as === "choice" ? format.given.value : ""];
      let groups: [Record<string, string | null>, readonly unknown[]][] = [[{ ...t.fills }, list.items(model)]];
      for (const { filter, given } of t.parts) {
        if (filter.format) continue;
        const v = filter.values;
        const slot = v.kind === "fixed" ? v.slot : v.placeholder;
        const wanted = (value: string | null) =>
          given.as === "choice" ? value === given.value : given.as === "null" ? value === null : value !== null;
        groups = groups.flatMap(([fills, items]) =>
          [...filter.group!(model, items)]
            .filter(([value]) => wanted(value))
            .map(([value, members]): [Record<string, string | null>, readonly unknown[]] => [
              slot && given.as !== "null" ? { ...fills, [slot]: value } : fills,
              members,
            ]),
        );
      }
      for (const [fills, members] of groups) {
        const path = fill(t.file, fills);
        yield earlier.file(path, render, members, render(model, members));
        if (!list.status || !t.statusFile) continue;
        // grouped when the first of them is written: the layout's pass wants their paths alone
        let byStatus: Map<unknown, unknown[]> | undefined;
        const of = (status: string) => (byStatus ??= groupBy(members, (item) => list.status!(model, item))).get(status) ?? [];
        for (const status of STATUSES) {
          const path = fill(t.statusFile, { ...fills, [STATUS.placeholder]: status });
          // the members are needed to know the file's twin: grouped only once a writer reads the body or asks
          yield earlier.deferred(
            path,
            render,
            () => of(status),
            (items) => render(model, items),
          );
        }
      }
    }
  }
}

/** The present values of every data filter, the values answered by another value's file, and the keys answering a class of values. */
export function filterValues(model: Model, filters: readonly FilterRecord[] = FILTERS) {
  const data = filters.flatMap((f) => (f.values.kind === "data" ? [f.values] : []));
  return {
    values: Object.fromEntries(data.map((v) => [v.placeholder, v.present(model)])),
    aliases: new Map(data.flatMap((v) => (v.aliases ? [[v.placeholder, v.aliases(model)] as const] : []))),
    others: new Map(
      data.flatMap((v) => {
        const key = v.otherKey?.(model);
        return key === undefined ? [] : [[v.placeholder, key] as const];
      }),
    ),
    bounds: new Map(data.flatMap((v) => (v.ordered ? [[v.placeholder, v.ordered(model)] as const] : []))),
  };
}

/**
 * What a query parameter means on a path of this kind; which values it takes comes from the rules.
 * `status` and `data_format` mean the same wherever they are taken; a filter is its list's own
 * (`is_wireless` on links would not mean what it means on interfaces), and a rule naming a parameter
 * no record describes for that kind is a developer's error, not a borrowed text.
 */
export function queryDoc(
  kind: string,
  name: string,
  settings: Docs,
  filters: readonly FilterRecord[] = FILTERS,
  lists: readonly ListRecord[] = LISTS,
): string {
  if (name === STATUS.param) return STATUS.doc(settings);
  const list = lists.find((l) => l.kind === kind);
  const record = list && filters.find((f) => f.resource === list.resource && f.param === name);
  if (!record) throw new Error(`the route table names ${name} on ${kind}, which no filter record describes`);
  return record.doc(settings);
}

/** A list file, and the earlier file of its list holding its very bytes, when the plan knows one. */
interface ListFile {
  readonly path: string;
  readonly body: Body;
  readonly sameAs?: string;
}

type Render = (members: readonly unknown[]) => Body;

/**
 * The files of one list so far, by renderer and members. A renderer reads its members alone, so a
 * file whose members are an earlier file's, the same items in the same order, under the same
 * renderer, holds that file's very bytes: it names it (OutputFile.sameAs), and a writer gives both
 * names one file, never rendering it twice. The list default and its own status file (`online` for
 * Opennet) are always such a pair; a filter that keeps every item (`status=online` when every access
 * point is, `firmware_version=` when none says its firmware) is one in the data. At 40,000 access
 * points of the benchmark a third of the long lists' bytes (docs/performance.md).
 *
 * Only the last `keep` files are remembered: a writer links to a recent file alone (io/write/emit.ts
 * RecentFiles), and a list of a filter value per item (a hardware address) would otherwise be held
 * whole. The most recent of a set of equal files is the one named.
 */
class SameMembers {
  /** by renderer, then by the members' count and first member */
  private readonly byKey = new Map<object, Map<number, Map<unknown, Noted[]>>>();
  private readonly order: Noted[] = [];

  constructor(private readonly keep = 1024) {}

  /** A file whose members are known now. */
  file(path: string, renderer: object, members: readonly unknown[], body: Body): ListFile {
    const sameAs = this.note(path, renderer, members);
    return sameAs === undefined ? { path, body } : { path, body, sameAs };
  }

  /**
   * A file whose members are made only when its body or its `sameAs` is first read (the layout's
   * pass reads its path alone); read in the plan's order, as a writer does.
   */
  deferred(path: string, renderer: object, members: () => readonly unknown[], render: Render): ListFile {
    let known: { readonly sameAs: string | undefined } | undefined;
    const notes = this;
    return {
      path,
      body: deferred(() => render(members())),
      get sameAs() {
        known ??= { sameAs: notes.note(path, renderer, members()) };
        return known.sameAs;
      },
    };
  }

  private note(path: string, renderer: object, members: readonly unknown[]): string | undefined {
    let byLength = this.byKey.get(renderer);
    if (byLength === undefined) this.byKey.set(renderer, (byLength = new Map()));
    let byFirst = byLength.get(members.length);
    if (byFirst === undefined) byLength.set(members.length, (byFirst = new Map()));
    const first = members[0];
    const candidates = byFirst.get(first);
    const same = candidates?.find((c) => sameItems(c.members, members));
    if (same !== undefined) {
      const earlier = same.path;
      // the most recent of equal files is the one a later file names, and the last forgotten
      same.path = path;
      this.order.splice(this.order.indexOf(same), 1);
      this.order.push(same);
      return earlier;
    }
    const noted: Noted = { path, members, drop: () => {} };
    if (candidates === undefined) byFirst.set(first, [noted]);
    else candidates.push(noted);
    noted.drop = () => {
      const left = byFirst.get(first)!.filter((c) => c !== noted);
      if (left.length === 0) byFirst.delete(first);
      else byFirst.set(first, left);
    };
    this.order.push(noted);
    if (this.order.length > this.keep) this.order.shift()!.drop();
    return undefined;
  }
}

interface Noted {
  path: string;
  readonly members: readonly unknown[];
  drop: () => void;
}

function sameItems(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
