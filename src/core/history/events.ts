import { compareIp } from "../values/ip.ts";
import { statusOf, type Status } from "../model/model.ts";
import { parseInstant, type Instant } from "../values/timestamp.ts";

/**
 * What changed between two states of a network (issue 42): each import with memory compares the state
 * it starts from with the one it writes, at the new state's instant, and records an event for each
 * change. Pure: two dumps' records in, events out, the same for the same records in any order.
 *
 * Where each kind's rule comes from (docs/history.md has them in words):
 * - an import stamps what OLSR shows with its instant, so what the newest import saw carries the
 *   state's newest `lastseen_timestamp` (a link's `timestamp`): that is what is **visible**. A state
 *   whose newest stamp is not newer than the previous one's had no OLSR import: nothing went silent
 *   or came back then.
 * - `status` follows the API's rule (model.ts statusOf) at each state's instant: an event is recorded
 *   by the run whose instant crosses a threshold, as the original's answers change then.
 * - values (firmware, site, position, owner, address) and sites compare as the dump holds them.
 */

export { ChangeEvent, EVENT_KINDS, RunCounts, type EventKind } from "./event.ts";
import { ChangeEvent, RunCounts, type EventKind } from "./event.ts";

/** The few values of a state the events compare. */
export interface StateView {
  readonly takenAt: Instant;
  readonly accesspoints: ReadonlyMap<string, AccesspointView>;
  readonly links: ReadonlyMap<number, LinkView>;
  /** site id to its members' main_ip, sorted */
  readonly sites: ReadonlyMap<number, readonly string[]>;
}

export interface AccesspointView {
  readonly lastseen: Instant | null;
  readonly version: string | null;
  readonly site: number | null;
  /** `[longitude, latitude]`, or null */
  readonly position: readonly number[] | null;
  readonly owner: string | null;
  readonly address: string | null;
}

export interface LinkView {
  /** the main_ip of each end's access point */
  readonly ends: readonly [string, string];
  readonly timestamp: Instant | null;
}

const instant = (v: unknown): Instant | null => {
  if (typeof v !== "string") return null;
  const i = parseInstant(v);
  return typeof i === "string" ? null : i;
};
const text = (v: unknown) => (typeof v === "string" ? v : null);

/** The view of a dump's records (as network.json, the access point and link files hold them). */
export function viewOf(records: {
  readonly takenAt: string;
  readonly accesspoints: Iterable<Record<string, unknown>>;
  readonly links: Iterable<unknown>;
}): StateView {
  const takenAt = instant(records.takenAt);
  if (takenAt === null) throw new Error(`not an instant: ${records.takenAt}`);
  const accesspoints = new Map<string, AccesspointView>();
  const apOfInterface = new Map<number, string>();
  const sites = new Map<number, string[]>();
  for (const ap of records.accesspoints) {
    const ip = String(ap.main_ip);
    const position = (ap.position as { coordinates?: number[] } | null | undefined)?.coordinates ?? null;
    const site = typeof ap.site === "number" ? ap.site : null;
    accesspoints.set(ip, {
      lastseen: instant(ap.lastseen_timestamp),
      version: text(ap.mesh_version),
      site,
      position,
      owner: text(ap.owner),
      address: text(ap.post_address),
    });
    for (const f of (ap.interfaces as { id: number }[] | undefined) ?? []) apOfInterface.set(f.id, ip);
    if (site !== null) sites.set(site, [...(sites.get(site) ?? []), ip]);
  }
  const links = new Map<number, LinkView>();
  for (const raw of records.links) {
    const link = raw as { id: number; endpoints: { interface: number }[]; timestamp?: unknown };
    const [a, b] = link.endpoints.map((e) => apOfInterface.get(e.interface) ?? "");
    links.set(link.id, { ends: [a, b], timestamp: instant(link.timestamp) });
  }
  for (const members of sites.values()) members.sort(compareIp);
  return { takenAt, accesspoints, links, sites };
}

/** The newest stamp of a state, of an access point or a link: what its last OLSR import saw carries it. */
function newestOf(state: StateView): number | null {
  let max: number | null = null;
  const take = (s: Instant | null) => {
    if (s !== null && (max === null || s.micros > max)) max = s.micros;
  };
  for (const a of state.accesspoints.values()) take(a.lastseen);
  for (const l of state.links.values()) take(l.timestamp);
  return max;
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The events that lead from `before` to `after`, in a fixed order: by subject kind (access points,
 * links, sites), then by subject (access points by address, links and sites by id), then by kind in
 * EVENT_KINDS order.
 */
export function changes(before: StateView, after: StateView): ChangeEvent[] {
  const at = after.takenAt.text;
  const events: ChangeEvent[] = [];
  const add = (
    kind: EventKind,
    type: "accesspoint" | "link" | "site",
    id: string,
    values: { before?: unknown; after?: unknown; ends?: readonly [string, string] } = {},
  ) =>
    events.push({
      id: `${at}/${kind}/${id}`,
      at,
      kind,
      subject: { type, id, ...(values.ends && { ends: [...values.ends] as [string, string] }) },
      ...(values.before !== undefined && { before: values.before as ChangeEvent["before"] }),
      ...(values.after !== undefined && { after: values.after as ChangeEvent["after"] }),
    });

  // Visibility: what the state's newest OLSR import saw, and only when this state had one (its newest stamp is newer).
  const olsrBefore = newestOf(before);
  const olsrAfter = newestOf(after);
  const imported = olsrAfter !== null && (olsrBefore === null || olsrAfter > olsrBefore);
  const seen = (s: Instant | null, max: number | null) => s !== null && s.micros === max;

  for (const ip of [...after.accesspoints.keys()].sort(compareIp)) {
    const now = after.accesspoints.get(ip)!;
    const was = before.accesspoints.get(ip);
    if (was === undefined) {
      add("accesspoint.appeared", "accesspoint", ip);
      continue;
    }
    const transition = statusChange(statusOf(now.lastseen, before.takenAt), statusOf(now.lastseen, after.takenAt));
    const back = imported && seen(now.lastseen, olsrAfter) && !seen(was.lastseen, olsrBefore);
    if (imported && seen(was.lastseen, olsrBefore) && !seen(now.lastseen, olsrAfter))
      add("accesspoint.silent", "accesspoint", ip, { before: was.lastseen?.text ?? null });
    if (back || transition === "back") add("accesspoint.back", "accesspoint", ip);
    if (transition === "flapping" || transition === "offline") add(`accesspoint.${transition}`, "accesspoint", ip);
    if (was.version !== now.version) add("accesspoint.firmware", "accesspoint", ip, { before: was.version, after: now.version });
    if (was.site !== now.site) add("accesspoint.moved", "accesspoint", ip, { before: was.site, after: now.site });
    if (!sameJson(was.position, now.position))
      add("accesspoint.position", "accesspoint", ip, { before: was.position, after: now.position });
    if (was.owner !== now.owner) add("accesspoint.owner", "accesspoint", ip, { before: was.owner, after: now.owner });
    if (was.address !== now.address) add("accesspoint.address", "accesspoint", ip, { before: was.address, after: now.address });
  }

  for (const id of [...after.links.keys()].sort((a, b) => a - b)) {
    const now = after.links.get(id)!;
    const was = before.links.get(id);
    const ends = { ends: now.ends };
    if (was === undefined) {
      add("link.appeared", "link", String(id), ends);
      continue;
    }
    const transition = statusChange(statusOf(now.timestamp, before.takenAt), statusOf(now.timestamp, after.takenAt));
    const back = imported && seen(now.timestamp, olsrAfter) && !seen(was.timestamp, olsrBefore);
    if (imported && seen(was.timestamp, olsrBefore) && !seen(now.timestamp, olsrAfter))
      add("link.lost", "link", String(id), { ...ends, before: was.timestamp?.text ?? null });
    if (back || transition === "back") add("link.back", "link", String(id), ends);
    if (transition === "flapping" || transition === "offline") add(`link.${transition}`, "link", String(id), ends);
  }

  const siteIds = [...new Set([...before.sites.keys(), ...after.sites.keys()])].sort((a, b) => a - b);
  for (const id of siteIds) {
    const was = before.sites.get(id);
    const now = after.sites.get(id);
    if (was === undefined) add("site.appeared", "site", String(id), { after: now });
    else if (now === undefined) add("site.dissolved", "site", String(id), { before: was });
    else if (!sameJson(was, now)) add("site.members", "site", String(id), { before: was, after: now });
  }
  return events;
}

/** What a change of status means for an event: a threshold crossed, a return, or nothing. */
function statusChange(was: Status, now: Status): "flapping" | "offline" | "back" | undefined {
  if (was === now) return undefined;
  if (now === "online") return "back";
  return now;
}

/** How long events are kept, and how many at most (the oldest go first): a state stays bounded. */
export interface Retention {
  readonly days: number;
  readonly max: number;
}

export const DEFAULT_RETENTION: Retention = { days: 30, max: 100_000 };

/**
 * The lines of a history (events, or each import's counts) in the window that ends at `now`, at most
 * `max`. A history is kept oldest first (each import appends at a later instant), so the lines that
 * left the window are a prefix: only those are read, which keeps a run's cost independent of the
 * history's length.
 */
export function retain<T extends { readonly at: string }>(
  lines: readonly T[],
  now: Instant,
  retention: Retention = DEFAULT_RETENTION,
): T[] {
  const from = now.micros - retention.days * 86_400_000_000;
  let first = 0;
  while (first < lines.length && (instant(lines[first].at)?.micros ?? -Infinity) < from) first++;
  return lines.slice(Math.max(first, lines.length - retention.max));
}

/** How many of these sightings have each status at `takenAt` (model.ts statusOf). */
export function countByStatus(stamps: Iterable<Instant | null>, takenAt: Instant | null): Record<Status, number> {
  const n = { online: 0, flapping: 0, offline: 0 };
  for (const s of stamps) n[statusOf(s, takenAt)]++;
  return n;
}

/** The state's counts by status at its instant. */
export function countsOf(state: StateView): RunCounts {
  return {
    at: state.takenAt.text,
    accesspoints: countByStatus(
      [...state.accesspoints.values()].map((a) => a.lastseen),
      state.takenAt,
    ),
    links: countByStatus(
      [...state.links.values()].map((l) => l.timestamp),
      state.takenAt,
    ),
  };
}

/** A readable line for an event: a feed entry's title, a status page's row. */
export function titleOf(e: ChangeEvent): string {
  const who = e.subject.type === "accesspoint" ? e.subject.id : `${e.subject.type} ${e.subject.id}`;
  const ends = e.subject.ends ? ` (${e.subject.ends.join(" – ")})` : "";
  const value = (v: unknown) => (v === null || v === undefined ? "none" : Array.isArray(v) ? v.join(", ") : String(v));
  switch (e.kind) {
    case "accesspoint.appeared":
    case "link.appeared":
    case "site.appeared":
      return `${who}${ends} appeared`;
    case "accesspoint.silent":
      return `${who} went silent (no longer in OLSR)`;
    case "link.lost":
      return `${who}${ends} was lost (no longer in OLSR)`;
    case "accesspoint.back":
    case "link.back":
      return `${who}${ends} came back`;
    case "accesspoint.flapping":
    case "link.flapping":
      return `${who}${ends} became flapping`;
    case "accesspoint.offline":
    case "link.offline":
      return `${who}${ends} went offline`;
    case "accesspoint.firmware":
      return `${who} changed firmware from ${value(e.before)} to ${value(e.after)}`;
    case "accesspoint.moved":
      return `${who} moved from site ${value(e.before)} to site ${value(e.after)}`;
    case "accesspoint.position":
      return `${who} changed its position`;
    case "accesspoint.owner":
      return `${who} changed its owner`;
    case "accesspoint.address":
      return `${who} changed its address`;
    case "site.members":
      return `${who} changed its members`;
    case "site.dissolved":
      return `${who} was dissolved`;
  }
}
