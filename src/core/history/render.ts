import { createHash } from "node:crypto";
import { z } from "zod";
import { piecesOf, type TextPieces } from "../body.ts";
import type { Places } from "../outputs/output.ts";
import { ChangeEvent, EVENT_KINDS, titleOf } from "./events.ts";

/**
 * The events as the site answers them (issue 42): the API's JSON list, newest first, each event with
 * its readable title and its subject's API URL; and Atom (RFC 4287) feeds of the same, for feed
 * readers and chat bots. Pure; the files and their routes are the history's record (outputs/timeline.ts).
 */

/** An event as the API answers it. */
export const ChangeItem = z.strictObject({
  id: z.string(),
  at: z.string(),
  kind: z.enum(EVENT_KINDS),
  title: z.string(),
  subject: z.strictObject({
    type: z.enum(["accesspoint", "link", "site"]),
    id: z.string(),
    url: z.string(),
    ends: z.tuple([z.string(), z.string()]).optional(),
  }),
  before: z.unknown().optional(),
  after: z.unknown().optional(),
});
export const ChangeList = z.array(ChangeItem);

/** The API detail of what changed, by the site's places (the plan's). */
export function subjectUrl(e: ChangeEvent, url: Places["url"]): string {
  if (e.subject.type === "accesspoint") return url("accesspoint-detail", { ip: e.subject.id });
  if (e.subject.type === "link") return url("link-detail", { key: e.subject.id });
  return url("site-detail", { id: e.subject.id });
}

/** Newest first; among events of one instant, in the order they were recorded. */
export const newestFirst = (events: readonly ChangeEvent[]): ChangeEvent[] =>
  events
    .map((e, i) => ({ e, i, t: Date.parse(e.at) }))
    .sort((a, b) => (a.e.at === b.e.at ? a.i - b.i : b.t - a.t || (a.e.at < b.e.at ? 1 : -1)))
    .map(({ e }) => e);

export function changeItem(e: ChangeEvent, url: Places["url"]): z.infer<typeof ChangeItem> {
  const { ends, ...subject } = e.subject;
  return {
    id: e.id,
    at: e.at,
    kind: e.kind,
    title: titleOf(e),
    subject: { ...subject, url: subjectUrl(e, url), ...(ends && { ends }) },
    ...("before" in e && { before: e.before }),
    ...("after" in e && { after: e.after }),
  };
}

/** The events that concern each access point, by main_ip: its own, and its links' (by either end). */
function eventsByAccesspoint(events: readonly ChangeEvent[]): ReadonlyMap<string, readonly ChangeEvent[]> {
  const by = new Map<string, ChangeEvent[]>();
  const add = (ip: string, e: ChangeEvent) => {
    const list = by.get(ip);
    if (list) list.push(e);
    else by.set(ip, [e]);
  };
  for (const e of events) {
    if (e.subject.type === "accesspoint") add(e.subject.id, e);
    for (const ip of new Set(e.subject.ends ?? [])) add(ip, e);
  }
  return by;
}

/**
 * An entry's id: a URN of a name-based UUID (RFC 4122, version 5 layout over SHA-1) of the event's id,
 * so that it is the same in every build and every feed the event is in.
 */
export function entryId(eventId: string): string {
  // createHash, not the one-shot hash(): the edge function bundles this module, and createHash is what its Deno runtime is tested with
  const h = createHash("sha1").update(`mesh-static-api change ${eventId}`).digest();
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString("hex");
  return `urn:uuid:${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** Text for XML: its five special characters escaped, and the control characters XML 1.0 forbids replaced. */
const xml = (s: string) =>
  !/[&<>"'\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/.test(s)
    ? s
    : s
        .replace(/&/g, "&amp;")
        .replace(/</g, "&lt;")
        .replace(/>/g, "&gt;")
        .replace(/"/g, "&quot;")
        .replace(/'/g, "&apos;")
        .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, "\ufffd");

/** What a feed is about: its title, its own URL, the page it speaks of, and the instant when nothing changed yet. */
export interface FeedHead {
  readonly title: string;
  readonly self: string;
  readonly about: string;
  readonly updated: string;
}

function atomEntry(e: ChangeEvent, url: Places["url"]): string {
  const values = ["before" in e ? `before: ${JSON.stringify(e.before)}` : "", "after" in e ? `after: ${JSON.stringify(e.after)}` : ""]
    .filter(Boolean)
    .join("; ");
  return [
    "  <entry>",
    `    <id>${entryId(e.id)}</id>`,
    `    <title>${xml(titleOf(e))}</title>`,
    `    <updated>${xml(e.at)}</updated>`,
    `    <link rel="alternate" href="${xml(subjectUrl(e, url))}"/>`,
    `    <category term="${xml(e.kind)}"/>`,
    `    <summary>${xml(`${e.kind} at ${e.at}${values ? `; ${values}` : ""}`)}</summary>`,
    "  </entry>",
  ].join("\n");
}

/** The lists and feeds of a build's events, sorted once for all of them. */
export interface EventViews {
  /** every event, newest first */
  readonly sorted: readonly ChangeEvent[];
  /** the events of each access point (eventsByAccesspoint), newest first */
  readonly byAccesspoint: ReadonlyMap<string, readonly ChangeEvent[]>;
  /** the JSON list of some of the events, in their order here, made as it is written (the network's: about 35 MB at 100,000 changes) */
  list(events: readonly ChangeEvent[]): TextPieces;
  /** an Atom feed of some of the events, newest first (its `updated`: the newest event's, else the head's), made as it is written */
  feed(head: FeedHead, events: readonly ChangeEvent[]): TextPieces;
}

/**
 * The lists are sorted once; an access point's keeps that order. An event's texts are made each
 * time they are written (a link's change up to six times: the network's list and feed, both ends'
 * lists and feeds): kept for the build, they held 90 MiB at 58,000 changes and saved no measurable
 * time (docs/performance.md).
 */
export function eventViews(events: readonly ChangeEvent[], url: Places["url"]): EventViews {
  const sorted = newestFirst(events);
  const rank = new Map(sorted.map((e, i) => [e, i]));
  const inOrder = (some: readonly ChangeEvent[]) =>
    some.every((e, i) => i === 0 || rank.get(some[i - 1])! < rank.get(e)!) ? some : newestFirst(some);
  return {
    sorted,
    byAccesspoint: eventsByAccesspoint(sorted),
    list: (some) =>
      piecesOf(function* () {
        yield "[";
        let first = true;
        for (const e of inOrder(some)) {
          yield (first ? "" : ",") + JSON.stringify(changeItem(e, url));
          first = false;
        }
        yield "]";
      }),
    feed: (head, some) =>
      piecesOf(function* () {
        const newest = inOrder(some);
        yield [
          '<?xml version="1.0" encoding="utf-8"?>',
          '<feed xmlns="http://www.w3.org/2005/Atom">',
          `  <id>${entryId(`feed ${head.self}`)}</id>`,
          `  <title>${xml(head.title)}</title>`,
          `  <updated>${xml(newest[0]?.at ?? head.updated)}</updated>`,
          `  <link rel="self" type="application/atom+xml" href="${xml(head.self)}"/>`,
          `  <link rel="alternate" type="application/json" href="${xml(head.about)}"/>`,
          "  <author><name>mesh-static-api</name></author>",
          `  <generator>mesh-static-api</generator>`,
          "",
        ].join("\n");
        for (const e of newest) yield atomEntry(e, url) + "\n";
        yield "</feed>\n";
      }),
  };
}
