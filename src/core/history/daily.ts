import { bodyText, deferred, jsonPieces, type Body, type EnclosedList } from "../body.ts";

/**
 * The topology by day (issue 42): the NetJSON NetworkGraph of the first run of each UTC day of the
 * history window, and what changed since the day before in netdiff's format (github.com/openwisp/netdiff:
 * `added`, `removed` and `changed`, each a NetworkGraph or null), with the changed nodes' and links'
 * new properties (netdiff#39). Pure: graphs in, graphs out. The first run of a day writes that day's
 * graph and diff; later builds carry them as they were (pipeline.ts), as snapshots are carried.
 */

/** A NetworkGraph as this project writes it (netjson.ts), as far as the diff reads it. */
export interface Graph {
  readonly type: "NetworkGraph";
  readonly protocol: string;
  readonly version: string;
  readonly revision?: string;
  readonly metric: string | null;
  readonly nodes: readonly GraphNode[];
  readonly links: readonly GraphLink[];
  readonly properties?: Readonly<Record<string, unknown>>;
}

interface GraphNode {
  readonly id: string;
  readonly label?: string;
  readonly local_addresses?: readonly string[];
  readonly properties?: Readonly<Record<string, unknown>>;
}

interface GraphLink {
  readonly source: string;
  readonly target: string;
  readonly cost: number;
  readonly cost_text?: string;
  readonly properties?: Readonly<Record<string, unknown>>;
}

/**
 * The graph a NetworkGraph body holds (its nodes, then its links: outputs/netjson-graph.ts), each
 * item parsed alone: the values JSON.parse gives of the whole text, without that text.
 */
export function graphOf(body: EnclosedList): Graph {
  const rest = body.tail;
  if (typeof rest === "string" || typeof rest.tail !== "string") throw new Error("a NetworkGraph body holds its nodes, then its links");
  const parse = (item: Buffer): unknown => JSON.parse(item.toString("utf8"));
  const nodes = Array.from(body.items, parse) as GraphNode[];
  const links = Array.from(rest.items, parse) as GraphLink[];
  // the members around the lists, in their order; the lists take their places
  return { ...(JSON.parse(`${body.head}[]${rest.head}[]${rest.tail}`) as Graph), nodes, links };
}

/** A graph of no node and no link, of `g`'s protocol: what the first day of a history is compared with. */
const emptyLike = (g: Graph): Graph => ({ ...g, nodes: [], links: [] });

/** The UTC day of an instant's text: `YYYY-MM-DD`. */
export const dayOf = (at: string): string => new Date(Date.parse(at)).toISOString().slice(0, 10);

/** A day of the history: its graph's run, and whether a diff to an earlier day exists. */
export interface Day {
  readonly day: string;
  /** the instant of the run whose graph it is */
  readonly at: string;
  /** the day its diff compares with; null for the first day of the history */
  readonly since: string | null;
}

/** Properties that are when an item was last seen, not what it is: left out of what counts as changed. */
const SIGHTINGS = new Set(["lastseen_timestamp", "timestamp"]);

const linkKey = (l: GraphLink) => (l.source < l.target ? `${l.source} ${l.target}` : `${l.target} ${l.source}`);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * netdiff's diff of two graphs: nodes and links added and removed, and those in both whose values
 * changed (a node's label, addresses or properties; a link's cost or properties), as the new graph
 * has them. Each part is a NetworkGraph of the new graph's protocol, or null when it is empty.
 */
export function netdiff(before: Graph, after: Graph): { added: Graph | null; removed: Graph | null; changed: Graph | null } {
  const nodesBefore = new Map(before.nodes.map((n) => [n.id, n]));
  const nodesAfter = new Map(after.nodes.map((n) => [n.id, n]));
  const linksBefore = new Map(before.links.map((l) => [linkKey(l), l]));
  const linksAfter = new Map(after.links.map((l) => [linkKey(l), l]));
  const graph = (nodes: GraphNode[], links: GraphLink[]): Graph | null =>
    nodes.length === 0 && links.length === 0
      ? null
      : {
          type: "NetworkGraph",
          protocol: after.protocol,
          version: after.version,
          ...(after.revision !== undefined && { revision: after.revision }),
          metric: after.metric,
          nodes,
          links,
        };
  // A sighting's instant moves with every import: the status says what it means, and is compared.
  const steady = (p: Readonly<Record<string, unknown>> | undefined) =>
    p && Object.fromEntries(Object.entries(p).filter(([k]) => !SIGHTINGS.has(k)));
  const nodeValues = (n: GraphNode) => [n.label, n.local_addresses, steady(n.properties)];
  const linkValues = (l: GraphLink) => [l.cost, l.cost_text, steady(l.properties)];
  return {
    added: graph(
      after.nodes.filter((n) => !nodesBefore.has(n.id)),
      after.links.filter((l) => !linksBefore.has(linkKey(l))),
    ),
    removed: graph(
      before.nodes.filter((n) => !nodesAfter.has(n.id)),
      before.links.filter((l) => !linksAfter.has(linkKey(l))),
    ),
    changed: graph(
      after.nodes.filter((n) => nodesBefore.has(n.id) && !same(nodeValues(nodesBefore.get(n.id)!), nodeValues(n))),
      after.links.filter((l) => linksBefore.has(linkKey(l)) && !same(linkValues(linksBefore.get(linkKey(l))!), linkValues(l))),
    ),
  };
}

/**
 * The days of a history after a build: the carried ones within the window that ends at `today`
 * (oldest first), and today's when no run of today has written it yet.
 */
export function keptDays(carried: readonly Day[], today: { day: string; at: string }, windowDays: number): { days: Day[]; fresh: boolean } {
  const from = Date.parse(`${today.day}T00:00:00Z`) - (windowDays - 1) * 86_400_000;
  const kept = carried
    .filter((d) => Date.parse(`${d.day}T00:00:00Z`) >= from && d.day <= today.day)
    .sort((a, b) => (a.day < b.day ? -1 : 1));
  if (kept.some((d) => d.day === today.day)) return { days: kept, fresh: false };
  return { days: [...kept, { day: today.day, at: today.at, since: kept.at(-1)?.day ?? null }], fresh: true };
}

/** What a build carries of the history by day, from the build it replaces (pipeline.ts reads it). */
export interface CarriedDays {
  readonly days: readonly Day[];
  /** a carried day's graph, read when it is written */
  readonly graph: (day: string) => Body;
  /** a carried day's diff, read when it is written; undefined when it has none */
  readonly diff: (day: string) => Body | undefined;
  /** how many days the window holds (--history-days) */
  readonly windowDays: number;
}

export const NO_DAYS: CarriedDays = { days: [], graph: () => "", diff: () => undefined, windowDays: 30 };

/** A file of the history by day: the index, a day's graph or its diff. */
export interface DayFile {
  readonly file: "netjsonHistory" | "netjsonDay" | "netjsonDiff";
  readonly day?: string;
  readonly body: Body;
}

/**
 * The history's files after this build: the carried days as they were, today's graph (and its diff
 * to the newest earlier day) when this is the first run of today, and the index, newest first.
 */
export function* dayFiles(
  takenAt: string | null,
  todayGraph: () => EnclosedList,
  carried: CarriedDays,
  url: (kind: "netjson-day" | "netjson-diff", day: string) => string,
): Generator<DayFile> {
  if (takenAt === null) {
    yield { file: "netjsonHistory", body: "[]" };
    return;
  }
  const today = { day: dayOf(takenAt), at: takenAt };
  const { days, fresh } = keptDays(carried.days, today, carried.windowDays);
  const index: { day: string; at: string; since: string | null; graph: string; diff: string | null }[] = [];
  for (const d of days) {
    let hasDiff = true;
    if (fresh && d.day === today.day) {
      // Made when written (a pass that wants the paths alone renders no graph), and today's graph and
      // the diff never as one text: at 40,000 access points the graph's text is 25 MB, and its diff to
      // an empty day as long again. The diff reads the graph rendered once more, item by item
      // (docs/performance.md); the day before, carried as a file, is parsed from its text as read (bodyText).
      const dayBefore = d.since;
      yield { file: "netjsonDay", day: d.day, body: deferred(todayGraph) };
      // The first day of a history compares with an empty network: everything was added (as netdiff answers).
      const diff = () => {
        const now = graphOf(todayGraph());
        const since = dayBefore === null ? emptyLike(now) : (JSON.parse(bodyText(carried.graph(dayBefore))) as Graph);
        return jsonPieces(netdiff(since, now));
      };
      yield { file: "netjsonDiff", day: d.day, body: deferred(diff) };
    } else {
      yield { file: "netjsonDay", day: d.day, body: carried.graph(d.day) };
      const diff = carried.diff(d.day);
      if (diff !== undefined) yield { file: "netjsonDiff", day: d.day, body: diff };
      hasDiff = diff !== undefined;
    }
    index.push({
      day: d.day,
      at: d.at,
      since: d.since,
      graph: url("netjson-day", d.day),
      diff: hasDiff ? url("netjson-diff", d.day) : null,
    });
  }
  yield { file: "netjsonHistory", body: JSON.stringify(index.reverse()) };
}
