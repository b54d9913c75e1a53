import { spawnSync } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPreview, type Preview } from "../src/index.ts";
import { ChangeList } from "../src/core/history/render.ts";
import { cycle } from "../src/live/run.ts";
import { rawRequest } from "./support/http.ts";
import { tempDir } from "./support/tree.ts";
import AjvDraft04 from "ajv-draft-04";
import { readFileSync } from "node:fs";

/**
 * Issue 42, what changed as served: three runs of the recorded live sequence through `cycle`, the
 * served site on the preview. The changes as JSON (valid against the OpenAPI schema's zod, every
 * subject's URL answered), and as Atom feeds parsed by Debian's python3-feedparser (scripts/test-deps.mjs
 * installs it), whose entry ids stay the same from run to run.
 */

const LIVE = new URL("./fixtures/live-sample/steps/", import.meta.url).pathname;
const PYTHON = "/usr/bin/python3";
const STEPS = [
  { at: "2026-11-20T10:00:00Z", olsr: "00", wiki: "00/wiki_nodes.html" },
  { at: "2026-11-20T10:06:00Z", olsr: "01" },
  { at: "2026-11-20T10:12:00Z", olsr: "02" },
  // the next days: their first runs write the day's graph and its diff
  { at: "2026-11-21T10:00:00Z", olsr: "02" },
  { at: "2026-11-22T10:00:00Z", olsr: "05" },
];

const ajv = new AjvDraft04.default({ allErrors: true, strict: false });
const validateGraph = ajv.compile(JSON.parse(readFileSync(new URL("fixtures/netjson/network-graph.schema.json", import.meta.url), "utf8")));
let dir: string;
let preview: Preview;
let port: number;
const feeds: { changes: Feed; ap: Feed }[] = [];

interface Feed {
  bozo: number;
  error: string | null;
  version: string;
  title: string;
  updated: string;
  entries: { id: string; title: string; updated: string; link: string }[];
}

/** The feed as feedparser reads it: its version, whether it found the XML broken (bozo), its entries. */
function parseFeed(xml: Buffer): Feed {
  const script = [
    "import sys, json, feedparser",
    "d = feedparser.parse(sys.stdin.buffer.read())",
    "print(json.dumps({'bozo': int(d.bozo), 'error': str(d.get('bozo_exception')) if d.bozo else None, 'version': d.version,",
    "  'title': d.feed.get('title'), 'updated': d.feed.get('updated'),",
    "  'entries': [{'id': e.id, 'title': e.title, 'updated': e.updated, 'link': e.link} for e in d.entries]}))",
  ].join("\n");
  const r = spawnSync(PYTHON, ["-c", script], { input: xml, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`feedparser: ${r.stderr}`);
  return JSON.parse(r.stdout) as Feed;
}

const get = (target: string) => rawRequest(port, "GET", target);

describe("what changed, served: the changes as JSON and as Atom feeds", () => {
  beforeAll(async () => {
    dir = tempDir();
    const state = path.join(dir, "state");
    const serve = path.join(dir, "www");
    for (const step of STEPS) {
      await cycle({
        state,
        serve,
        olsr: { source: `${LIVE}${step.olsr}/olsr.txt`, every: 1 },
        ...(step.wiki && { wiki: { source: `${LIVE}${step.wiki}`, every: 1 } }),
        sitesEvery: 1000,
        at: step.at,
        keep: 30,
        settings: { brand: "opennet", defaultStatus: "online" },
      });
      if (preview === undefined) {
        preview = await startPreview({ dir: serve, port: 0 });
        port = Number(new URL(preview.url).port);
      }
      feeds.push({
        changes: parseFeed((await get("/feeds/changes.atom")).body),
        ap: parseFeed((await get("/feeds/accesspoint/192.168.1.36.atom")).body),
      });
    }
  }, 300_000);

  afterAll(async () => {
    await preview?.close();
  });

  it("answers the changes newest first, valid against the document's schema, each subject's URL answered", async () => {
    const r = await get("/api/v1/changes/");
    expect(r.status).toBe(200);
    expect(r.headers["content-type"]).toBe("application/json");
    const list = ChangeList.parse(JSON.parse(r.body.toString("utf8")));
    expect(list.map((e) => e.at)).toEqual([...list.map((e) => e.at)].sort().reverse());
    expect(list.find((e) => e.kind === "accesspoint.appeared")).toMatchObject({
      title: "192.168.2.250 appeared",
      subject: { url: "/api/v1/accesspoint/192.168.2.250" },
    });
    for (const url of new Set(list.map((e) => e.subject.url))) expect((await get(url)).status, url).toBe(200);
    const one = JSON.parse((await get("/api/v1/accesspoint/192.168.1.36/changes/")).body.toString("utf8")) as { kind: string }[];
    // its own silence and its four links lost with it, then flapping, it and they, a day later
    expect(one.map((e) => e.kind).sort()).toEqual([
      ...["accesspoint.flapping", "accesspoint.silent"],
      ...["link.flapping", "link.flapping", "link.flapping", "link.flapping"],
      ...["link.lost", "link.lost", "link.lost", "link.lost"],
    ]);
    expect(JSON.parse((await get("/api/v1/accesspoint/192.168.1.97/changes/")).body.toString("utf8"))).toEqual([]);
    expect((await get("/api/v1/accesspoint/10.9.9.9/changes/")).status).toBe(404);
  });

  it("writes Atom feeds that feedparser reads without error, typed by their extension", async () => {
    expect((await get("/feeds/changes.atom")).headers["content-type"]).toMatch(/^application\/atom\+xml/);
    for (const { changes, ap } of feeds)
      for (const feed of [changes, ap]) {
        expect(feed.error).toBe(null);
        expect(feed.bozo).toBe(0);
        expect(feed.version).toBe("atom10");
      }
    const last = feeds.at(-1)!.changes;
    const list = JSON.parse((await get("/api/v1/changes/")).body.toString("utf8")) as {
      title: string;
      at: string;
      subject: { url: string };
    }[];
    expect(last.entries.map((e) => e.title)).toEqual(list.map((e) => e.title));
    expect(last.updated).toBe(list[0].at);
    expect(last.entries[0].link).toBe(list[0].subject.url);
    expect(feeds[0].changes.entries).toEqual([]);
  });

  it("keeps each entry's id from run to run, and the ids are unique", () => {
    const [, second, third, , fifth] = feeds;
    expect(second.changes.entries.length).toBeGreaterThan(5);
    const ids = (f: Feed) => new Map(f.entries.map((e) => [`${e.title} ${e.updated}`, e.id]));
    const before = ids(second.changes);
    const after = ids(third.changes);
    for (const [key, id] of before) expect(after.get(key), key).toBe(id);
    expect(new Set(third.changes.entries.map((e) => e.id)).size).toBe(third.changes.entries.length);
    expect(third.ap.entries.map((e) => e.id)).toEqual(second.ap.entries.map((e) => e.id));
    expect(third.ap.entries.length).toBe(5);
    // the access point's later entries come first; the earlier ones keep their ids
    expect(fifth.ap.entries.slice(-5).map((e) => e.id)).toEqual(second.ap.entries.map((e) => e.id));
  });

  it("keeps the NetworkGraph of each day's first run and its netdiff to the day before, valid NetJSON", async () => {
    const index = JSON.parse((await get("/api/v1/netjson/history/")).body.toString("utf8")) as {
      day: string;
      at: string;
      since: string | null;
      graph: string;
      diff: string | null;
    }[];
    expect(index.map((d) => [d.day, d.at, d.since])).toEqual([
      ["2026-11-22", "2026-11-22T10:00:00Z", "2026-11-21"],
      ["2026-11-21", "2026-11-21T10:00:00Z", "2026-11-20"],
      ["2026-11-20", "2026-11-20T10:00:00Z", null],
    ]);
    for (const d of index) {
      const graph = await get(d.graph);
      expect(graph.status, d.graph).toBe(200);
      const g = JSON.parse(graph.body.toString("utf8"));
      expect(validateGraph(g), ajv.errorsText(validateGraph.errors)).toBe(true);
      // the first run of the day, not a later one
      expect(g.properties.taken_at).toBe(d.at);
      if (d.diff === null) continue;
      const diff = JSON.parse((await get(d.diff)).body.toString("utf8")) as Record<string, unknown>;
      expect(Object.keys(diff)).toEqual(["added", "removed", "changed"]);
      for (const part of Object.values(diff))
        if (part !== null) expect(validateGraph(part), ajv.errorsText(validateGraph.errors)).toBe(true);
    }
    // 2026-11-21 against 2026-11-20: the new access point and its link added; 2026-11-22: two access points flapping,
    // their status changed (the instants of sightings do not count as changes)
    const diff = async (day: string) => JSON.parse((await get(`/api/v1/netjson/diff/${day}/`)).body.toString("utf8"));
    const d21 = await diff("2026-11-21");
    expect(d21.added.nodes.map((n: { id: string }) => n.id)).toEqual(["192.168.2.250"]);
    expect(d21.added.links).toHaveLength(1);
    const d22 = await diff("2026-11-22");
    expect(d22.added).toBe(null);
    expect(d22.changed.nodes.map((n: { properties: { status: string } }) => n.properties.status)).toContain("flapping");
    expect((await get("/api/v1/netjson/history/2026-11-19/")).status).toBe(404);
  });
});
