import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { changes, retain, titleOf, viewOf, type ChangeEvent } from "../src/core/history/events.ts";
import { parseInstant, type Instant } from "../src/core/values/timestamp.ts";
import { readEvents } from "../src/io/read/dump-history.ts";
import { InvalidDumpError } from "../src/core/problems.ts";
import { tempDir } from "./support/tree.ts";
import { keptDays, netdiff, type Graph } from "../src/core/history/daily.ts";

/**
 * Issue 42, the events' rules (core/history/events.ts) on small states made for each rule; the
 * recorded sequence of the original is checked in live-sample.test.ts.
 */

interface Ap {
  ip: string;
  seen?: string | null;
  version?: string | null;
  site?: number | null;
  owner?: string | null;
  position?: [number, number] | null;
  interfaces?: number[];
}

const state = (takenAt: string, aps: Ap[], links: { id: number; ends: [number, number]; seen: string | null }[] = []) =>
  viewOf({
    takenAt,
    accesspoints: aps.map((a) => ({
      main_ip: a.ip,
      lastseen_timestamp: a.seen ?? null,
      mesh_version: a.version ?? null,
      site: a.site ?? null,
      owner: a.owner ?? null,
      post_address: null,
      position: a.position ? { type: "Point", coordinates: a.position } : null,
      interfaces: (a.interfaces ?? []).map((id) => ({ id })),
    })),
    links: links.map((l) => ({ id: l.id, endpoints: l.ends.map((i) => ({ interface: i })), timestamp: l.seen })),
  });

const said = (events: ChangeEvent[]) => events.map((e) => `${e.kind} ${e.subject.id}`);
const T = (minutes: number) => new Date(Date.UTC(2026, 10, 20, 10, minutes)).toISOString().replace(".000Z", "Z");

describe("the events between two states", () => {
  const a = { ip: "10.0.0.1", interfaces: [1] };
  const b = { ip: "10.0.0.2", interfaces: [2] };
  const c = { ip: "10.0.0.10", interfaces: [3] };

  it("what OLSR no longer shows goes silent, and comes back when it shows it again; links alike", () => {
    const s0 = state(
      T(0),
      [
        { ...a, seen: T(0) },
        { ...b, seen: T(0) },
      ],
      [{ id: 1, ends: [1, 2], seen: T(0) }],
    );
    const s1 = state(
      T(6),
      [
        { ...a, seen: T(6) },
        { ...b, seen: T(0) },
      ],
      [{ id: 1, ends: [1, 2], seen: T(0) }],
    );
    expect(said(changes(s0, s1))).toEqual(["accesspoint.silent 10.0.0.2", "link.lost 1"]);
    expect(changes(s0, s1)[1].subject).toEqual({ type: "link", id: "1", ends: ["10.0.0.1", "10.0.0.2"] });
    const s2 = state(
      T(12),
      [
        { ...a, seen: T(12) },
        { ...b, seen: T(12) },
      ],
      [{ id: 1, ends: [1, 2], seen: T(12) }],
    );
    expect(said(changes(s1, s2))).toEqual(["accesspoint.back 10.0.0.2", "link.back 1"]);
  });

  it("a state without an OLSR import (its newest stamp not newer) makes nothing silent", () => {
    const s0 = state(T(0), [
      { ...a, seen: T(0) },
      { ...b, seen: T(0) },
    ]);
    const s1 = state(T(3), [
      { ...a, seen: T(0) },
      { ...b, seen: T(0) },
    ]);
    expect(changes(s0, s1)).toEqual([]);
  });

  it("becomes flapping and offline at the run whose instant crosses the status rule's threshold, once", () => {
    const seen = [{ ...a, seen: T(0) }];
    expect(said(changes(state(T(20), seen), state(T(29), seen)))).toEqual([]);
    expect(said(changes(state(T(29), seen), state(T(31), seen)))).toEqual(["accesspoint.flapping 10.0.0.1"]);
    expect(said(changes(state(T(31), seen), state(T(40), seen)))).toEqual([]);
    expect(said(changes(state(T(40), seen), state("2026-12-21T10:00:00Z", seen)))).toEqual(["accesspoint.offline 10.0.0.1"]);
  });

  it("values: firmware, site, position and owner, with before and after; sites appear, change and dissolve", () => {
    const s0 = state(T(0), [
      { ...a, seen: T(0), version: "0.5.1", site: 1 },
      { ...b, seen: T(0), site: 1, owner: "x", position: [12, 54] },
    ]);
    const s1 = state(T(6), [
      { ...a, seen: T(6), version: "0.5.2", site: 2 },
      { ...b, seen: T(6), site: null, owner: "y", position: [12, 54.1] },
      { ...c, seen: T(6), site: 2 },
    ]);
    const events = changes(s0, s1);
    expect(said(events)).toEqual([
      "accesspoint.firmware 10.0.0.1",
      "accesspoint.moved 10.0.0.1",
      "accesspoint.moved 10.0.0.2",
      "accesspoint.position 10.0.0.2",
      "accesspoint.owner 10.0.0.2",
      "accesspoint.appeared 10.0.0.10",
      "site.dissolved 1",
      "site.appeared 2",
    ]);
    expect(events[0]).toMatchObject({ before: "0.5.1", after: "0.5.2", id: `${T(6)}/accesspoint.firmware/10.0.0.1` });
    expect(titleOf(events[0])).toBe("10.0.0.1 changed firmware from 0.5.1 to 0.5.2");
    expect(events[7]).toMatchObject({ after: ["10.0.0.1", "10.0.0.10"] });
  });

  it("the same for the same records in any order", () => {
    const aps = [
      { ...a, seen: T(0) },
      { ...b, seen: T(6) },
      { ...c, seen: T(6) },
    ];
    const links = [
      { id: 2, ends: [2, 3] as [number, number], seen: T(6) },
      { id: 1, ends: [1, 2] as [number, number], seen: T(0) },
    ];
    const s0 = state(T(0), [{ ...a, seen: T(0) }], []);
    const forward = changes(s0, state(T(6), aps, links));
    expect(changes(s0, state(T(6), [...aps].reverse(), [...links].reverse()))).toEqual(forward);
    expect(said(forward)).toEqual([
      "accesspoint.silent 10.0.0.1",
      "accesspoint.appeared 10.0.0.2",
      "accesspoint.appeared 10.0.0.10",
      "link.appeared 1",
      "link.appeared 2",
    ]);
  });
});

describe("the window of events a dump keeps", () => {
  const event = (at: string, n: number): ChangeEvent => ({
    id: `${at}/accesspoint.appeared/10.0.0.${n}`,
    at,
    kind: "accesspoint.appeared",
    subject: { type: "accesspoint", id: `10.0.0.${n}` },
  });
  const now = parseInstant("2026-12-30T00:00:00Z") as Instant;

  it("keeps the days asked for and at most max, dropping the oldest", () => {
    const events = [event("2026-11-01T00:00:00Z", 1), event("2026-12-01T00:00:00Z", 2), event("2026-12-29T00:00:00Z", 3)];
    expect(retain(events, now).map((e) => e.subject.id)).toEqual(["10.0.0.2", "10.0.0.3"]);
    expect(retain(events, now, { days: 2, max: 10 }).map((e) => e.subject.id)).toEqual(["10.0.0.3"]);
    expect(retain(events, now, { days: 100, max: 2 }).map((e) => e.subject.id)).toEqual(["10.0.0.2", "10.0.0.3"]);
  });

  it("stays bounded over 60 days of changes every 6 minutes", () => {
    let kept: ChangeEvent[] = [];
    const start = Date.UTC(2026, 10, 1);
    for (let run = 0; run < 60 * 240; run++) {
      const at = new Date(start + run * 360_000).toISOString();
      kept = retain([...kept, event(at, run % 250), event(at, (run + 1) % 250)], parseInstant(at) as Instant, { days: 30, max: 5_000 });
    }
    expect(kept.length).toBe(5_000);
  });

  it("a dump's history that is not events is refused, located by file and line", async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, "history"));
    writeFileSync(path.join(dir, "history", "events.ndjson"), `${JSON.stringify(event("2026-12-01T00:00:00Z", 1))}\n{"id":1}\nnot json\n`);
    const err = await readEvents(dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidDumpError);
    const problems = (err as InvalidDumpError).problems.map((p) => `${p.source.file}:${p.source.line} ${p.path}`);
    expect(problems).toContain("history/events.ndjson:2 $.id");
    expect(problems).toContain("history/events.ndjson:3 $");
    expect(await readEvents(tempDir())).toEqual([]);
  });
});

describe("the topology by day (core/history/daily.ts)", () => {
  const graph = (nodes: [string, string][], links: [string, string, number][]): Graph => ({
    type: "NetworkGraph",
    protocol: "olsr",
    version: "1",
    metric: "etx",
    nodes: nodes.map(([id, status]) => ({ id, properties: { status, lastseen_timestamp: `${id}-${Math.random()}` } })),
    links: links.map(([source, target, cost]) => ({ source, target, cost, properties: { timestamp: String(Math.random()) } })),
  });

  it("diffs as netdiff: added, removed, changed (values but the instants of sightings), null where none", () => {
    const before = graph(
      [
        ["a", "online"],
        ["b", "online"],
        ["c", "online"],
      ],
      [
        ["a", "b", 1],
        ["b", "c", 2],
      ],
    );
    const after = graph(
      [
        ["a", "online"],
        ["b", "flapping"],
        ["d", "online"],
      ],
      [
        ["b", "a", 1.5],
        ["a", "d", 1],
      ],
    );
    const d = netdiff(before, after);
    expect(d.added?.nodes.map((n) => n.id)).toEqual(["d"]);
    expect(d.added?.links.map((l) => `${l.source}-${l.target}`)).toEqual(["a-d"]);
    expect(d.removed?.nodes.map((n) => n.id)).toEqual(["c"]);
    expect(d.removed?.links.map((l) => `${l.source}-${l.target}`)).toEqual(["b-c"]);
    // b's status changed; a's only sighting changed; the link a-b (either order) changed its cost
    expect(d.changed?.nodes.map((n) => n.id)).toEqual(["b"]);
    expect(d.changed?.links.map((l) => l.cost)).toEqual([1.5]);
    expect(netdiff(before, before)).toEqual({ added: null, removed: null, changed: null });
  });

  it("keeps the days of the window (11 days: from the 20th to the 30th) and adds today's once, on the first run of the day", () => {
    const day = (d: string, since: string | null) => ({ day: d, at: `${d}T10:00:00Z`, since });
    const carried = [day("2026-11-01", null), day("2026-11-20", "2026-11-01"), day("2026-11-29", "2026-11-20")];
    expect(keptDays(carried, { day: "2026-11-30", at: "2026-11-30T00:06:00Z" }, 11)).toEqual({
      days: [
        day("2026-11-20", "2026-11-01"),
        day("2026-11-29", "2026-11-20"),
        { day: "2026-11-30", at: "2026-11-30T00:06:00Z", since: "2026-11-29" },
      ],
      fresh: true,
    });
    expect(keptDays([...carried, day("2026-11-30", "2026-11-29")], { day: "2026-11-30", at: "2026-11-30T18:00:00Z" }, 30).fresh).toBe(
      false,
    );
  });
});
