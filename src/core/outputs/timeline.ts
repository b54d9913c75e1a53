import { z } from "zod";
import { API } from "../base.ts";
import { dayFiles, NO_DAYS, type CarriedDays, type Day } from "../history/daily.ts";
import type { ChangeEvent, RunCounts } from "../history/event.ts";
import { DEFAULT_RETENTION } from "../history/events.ts";
import { COUNTS_FILE, EVENTS_FILE, parseCounts, parseEvents } from "../history/lines.ts";
import { ChangeList, eventViews, type EventViews } from "../history/render.ts";
import { statusPage } from "../history/status-page.ts";
import type { Model } from "../model/model.ts";
import { networkGraphBody } from "./netjson-graph.ts";
import { NetworkGraph } from "./netjson.ts";
import { outputGroup, type Earlier, type Places } from "./output.ts";

/**
 * What changed, and when (issue 42; docs/history.md): the changes the dump's imports recorded, as
 * JSON lists and Atom feeds, the status page with the counts over the window, and the topology by
 * day with its diffs. It carries the dump's history (its events and counts) and the days the build it
 * replaces kept. A dump without history answers empty lists and one day.
 */

/** The status page's folder: its page is the folder's index. */
export const STATUS_FOLDER = "/status/";

const FILES = {
  /** what changed, newest first: the network's, and each access point's (its own and its links') */
  changes: `${API}/changes/index.json`,
  /** the topology by day (history/daily.ts): the days, each day's NetworkGraph, and its diff to the day before */
  netjsonHistory: `${API}/netjson/history/index.json`,
  netjsonDay: `${API}/netjson/history/:day/index.json`,
  netjsonDiff: `${API}/netjson/diff/:day/index.json`,
  accesspointChanges: `${API}/accesspoint/:ip/changes/index.json`,
  /** Atom feeds of the changes: the network's and each access point's (history/render.ts) */
  changesFeed: "/feeds/changes.atom",
  accesspointFeed: "/feeds/accesspoint/:ip.atom",
  /** the counts by status over the history window and the newest changes (history/status-page.ts) */
  status: `${STATUS_FOLDER}index.html`,
} as const;

/** What the history carries into a build. */
interface Carried {
  readonly events: readonly ChangeEvent[];
  readonly counts: readonly RunCounts[];
  readonly days: CarriedDays;
}

const NOTHING: Carried = { events: [], counts: [], days: NO_DAYS };
const isDay = (v: unknown): v is string => typeof v === "string" && /^\d{4}-\d{2}-\d{2}$/.test(v);
const dayFile = (template: string, day: string) => template.replace(":day", day);

/**
 * The topology by day the build being replaced kept (its index, each day's graph and diff read when
 * written); an index that is not ours, or a day whose graph is gone, is not carried.
 */
async function carriedDays(earlier: Earlier, windowDays: number): Promise<CarriedDays> {
  const text = await earlier.buildText(FILES.netjsonHistory);
  let days: Day[] = [];
  try {
    const index = text === undefined ? [] : (JSON.parse(text) as { day?: unknown; at?: unknown; since?: unknown }[]);
    days = index
      .filter((d) => isDay(d.day) && typeof d.at === "string" && (d.since === null || isDay(d.since)))
      .map((d) => ({ day: d.day as string, at: d.at as string, since: (d.since as string | null) ?? null }))
      .filter((d) => earlier.buildBody(dayFile(FILES.netjsonDay, d.day)) !== undefined);
  } catch {
    days = [];
  }
  return {
    days,
    windowDays,
    graph: (day) => earlier.buildBody(dayFile(FILES.netjsonDay, day)) ?? "",
    diff: (day) => earlier.buildBody(dayFile(FILES.netjsonDiff, day)),
  };
}

/** An Atom feed whose `updated`, without entries, is an instant that does not move from run to run (a quiet feed keeps its bytes). */
const feed = (views: EventViews, title: string, self: string, about: string, events: readonly ChangeEvent[], since: string | undefined) =>
  views.feed({ title, self, about, updated: since ?? "1970-01-01T00:00:00Z" }, events);

export const HISTORY = outputGroup({
  kind: "history",
  files: FILES,
  routes: [
    {
      kind: "changes",
      name: "Change List",
      summary: "What changed in the network in the history window, newest first (empty without history)",
      body: "ChangeList",
      path: "changes/",
      file: "changes",
      about: "what changed in the network, newest first",
    },
    {
      kind: "netjson-history",
      name: "NetJSON History",
      summary: "The days of the history window whose NetworkGraph this site keeps, newest first, each with the instant of its run",
      body: "NetjsonHistory",
      path: "netjson/history/",
      file: "netjsonHistory",
    },
    {
      kind: "netjson-day",
      name: "NetJSON Network Graph Of A Day",
      summary: "The NetworkGraph of the first run of a day (UTC) of the history window",
      body: "NetworkGraph",
      path: "netjson/history/:day/",
      file: "netjsonDay",
    },
    {
      kind: "netjson-diff",
      name: "NetJSON Diff Of A Day",
      summary:
        "What changed since the day before (for the first day of the history: since no network), in netdiff's format: added, removed and changed nodes and links (null where none)",
      body: "NetjsonDiff",
      path: "netjson/diff/:day/",
      file: "netjsonDiff",
    },
    {
      kind: "accesspoint-changes",
      name: "Accesspoint Change List",
      summary: "What changed for an access point and its links in the history window, newest first (empty without history)",
      body: "ChangeList",
      path: "changes/",
      beside: "accesspoint",
      file: "accesspointChanges",
      about: "what changed for an access point and its links, newest first",
    },
  ],
  schemas: {
    ChangeList,
    NetjsonHistory: z.array(
      z.strictObject({
        day: z.string().meta({ description: "YYYY-MM-DD (UTC)" }),
        at: z.string().meta({ description: "the instant of the run whose graph it is: the first of that day" }),
        since: z
          .string()
          .nullable()
          .meta({ description: "the day its diff compares with; null for the first day, compared with no network" }),
        graph: z.string(),
        diff: z
          .string()
          .nullable()
          .meta({ description: "its diff to the day before it in the history (null only for a day carried without one)" }),
      }),
    ),
    NetjsonDiff: z.strictObject({ added: NetworkGraph.nullable(), removed: NetworkGraph.nullable(), changed: NetworkGraph.nullable() }),
  },
  pathParameters: {
    day: {
      description: "A day of the history window (UTC), as the history's index lists it.",
      schema: { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}$" },
    },
  },
  siteFiles: ["changesFeed", "accesspointFeed", "status"],
  rootLinks: [
    { member: "changes", route: "changes" },
    { member: "feed", file: "changesFeed", description: "the changes as an Atom feed" },
  ],
  landingLinks: (places) => [
    `<li><a href="${places.file("changesFeed")}"><code>${places.file("changesFeed")}</code></a>: what changed, as an Atom feed for feed readers and chat bots (each access point's: <code>${FILES.accesspointFeed.replace(":ip", "&lt;ip&gt;")}</code>).</li>`,
    `<li><a href="${STATUS_FOLDER}"><code>${STATUS_FOLDER}</code></a>: the counts by status over the history window, and the newest changes.</li>`,
  ],
  options: [
    {
      flags: "--history-days <days>",
      description: `how many days of changes and of the topology by day the site keeps (at most ${DEFAULT_RETENTION.max.toLocaleString("en-US")} changes; default: ${DEFAULT_RETENTION.days})`,
      value: "count",
    },
  ],
  settings: (values) => (values["--history-days"] === undefined ? null : { days: values["--history-days"] as number }),
  async carry(earlier, settings): Promise<Carried> {
    const windowDays = (settings as { days: number } | null)?.days ?? DEFAULT_RETENTION.days;
    return {
      days: await carriedDays(earlier, windowDays),
      // what the dump's imports recorded (its history/; none without one)
      events: parseEvents(await earlier.dumpText(EVENTS_FILE)),
      counts: parseCounts(await earlier.dumpText(COUNTS_FILE)),
    };
  },
  *bodies(model: Model, places: Places) {
    const { events, counts, days } = (model.carried?.get("history") as Carried | undefined) ?? NOTHING;
    const name = model.settings.communityName ?? "the mesh network";
    const changes = places.url("changes");
    const network = places.file("changesFeed");
    const views = eventViews(events, places.url);
    yield { file: "changes", body: views.list(views.sorted) };
    yield { file: "changesFeed", body: feed(views, `What changed in ${name}`, network, changes, views.sorted, model.takenAt?.text) };
    yield { file: "status", body: statusPage(model, { events, counts }, places, { changes, feed: network }) };
    // The topology by day: carried from the build before, today's written by the first run of today.
    const url = (kind: string, day: string) => places.url(kind, { day });
    for (const f of dayFiles(model.takenAt?.text ?? null, () => networkGraphBody(model), days, url))
      yield { file: f.file, values: f.day === undefined ? {} : ({ day: f.day } as Record<string, string>), body: f.body };
    // Each access point's, beside its detail; its feed under its main_ip.
    for (const [ip, a] of model.accesspointByIp) {
      const mine = views.byAccesspoint.get(a.main_ip) ?? [];
      yield { file: "accesspointChanges", values: { ip }, body: mine.length === 0 ? "[]" : views.list(mine) };
      if (ip === a.main_ip) {
        const self = places.file("accesspointFeed", { ip });
        const about = places.url("accesspoint-changes", { ip });
        yield {
          file: "accesspointFeed",
          values: { ip },
          body: feed(views, `What changed at ${ip}`, self, about, mine, a.first_seen?.text),
        };
      }
    }
  },
});
