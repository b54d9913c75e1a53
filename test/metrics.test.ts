import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { bodyPieces } from "../src/core/body.ts";
import { escapeHelp, escapeLabelValue, formatValue, metricsBody, type CycleHealth } from "../src/core/history/metrics.ts";
import { STATUSES, statusOf, type Model } from "../src/core/model/model.ts";
import { renderLink } from "../src/core/model/resources.ts";
import { fileFor, TYPED_FILES } from "../src/core/routes.ts";
import { synthesize } from "../src/gen/synth.ts";
import { startPreview } from "../src/index.ts";
import { ap, model as dumpModel } from "./support/dump.ts";
import { rawRequest } from "./support/http.ts";
import { sharedBuild } from "./support/shared.ts";

/**
 * The metrics file (src/core/history/metrics.ts, issue 42) as text: the exposition format 0.0.4 read
 * back by a reader of the format's grammar written here (hostile label values come back as they
 * were), every value from the model or omitted, the same bytes for the same data in any order, and
 * the preview serving it with its type. test/prometheus.test.ts has promtool and a real Prometheus.
 */

const METRICS_TYPE = "text/plain; version=0.0.4";
const text = (m: Model, health?: CycleHealth) => Buffer.concat([...bodyPieces(metricsBody(m, health))]).toString("utf8");

interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}
interface Parsed {
  readonly help: Map<string, string>;
  readonly type: Map<string, string>;
  readonly samples: Sample[];
}

/** The format's grammar (prometheus.io, "Text-based format"), strictly: every line a comment, a HELP, a TYPE or a sample. */
function parse(body: string): Parsed {
  expect(body.endsWith("\n")).toBe(true);
  const help = new Map<string, string>();
  const type = new Map<string, string>();
  const samples: Sample[] = [];
  const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
  const unescape = (s: string, quote: boolean) => s.replace(quote ? /\\(["\\n])/g : /\\([\\n])/g, (_, c: string) => (c === "n" ? "\n" : c));
  let last: string | undefined;
  for (const line of body.slice(0, -1).split("\n")) {
    const meta = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (meta) {
      const [, kind, name, rest] = meta;
      if (kind === "HELP") {
        expect(help.has(name), `${name}: HELP twice`).toBe(false);
        expect(rest).not.toMatch(/\\(?![\\n])/);
        help.set(name, unescape(rest, false));
      } else {
        expect(type.has(name), `${name}: TYPE twice`).toBe(false);
        expect(["counter", "gauge", "histogram", "summary", "untyped"]).toContain(rest);
        type.set(name, rest);
      }
      last = name;
      continue;
    }
    const name = NAME.exec(line)?.[0];
    if (name === undefined) throw new Error(`not a sample: ${JSON.stringify(line)}`);
    // the samples of a family follow its HELP and TYPE
    expect(name, line).toBe(last);
    let at = name.length;
    const labels: Record<string, string> = {};
    if (line[at] === "{") {
      at++;
      while (line[at] !== "}") {
        const label = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\["\\n])*)"(,?)/.exec(line.slice(at));
        if (!label) throw new Error(`bad label at ${at}: ${JSON.stringify(line)}`);
        expect(labels[label[1]], `${label[1]} twice`).toBeUndefined();
        labels[label[1]] = unescape(label[2], true);
        at += label[0].length;
        if (label[3] === "" && line[at] !== "}") throw new Error(`no comma: ${JSON.stringify(line)}`);
      }
      at++;
    }
    const value = /^ (NaN|[+-]Inf|[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?)$/.exec(line.slice(at));
    if (!value) throw new Error(`bad value: ${JSON.stringify(line)}`);
    samples.push({ name, labels, value: value[1] === "+Inf" ? Infinity : value[1] === "-Inf" ? -Infinity : Number(value[1]) });
  }
  for (const name of new Set(samples.map((s) => s.name))) {
    expect(help.has(name), `${name}: no HELP`).toBe(true);
    expect(type.has(name), `${name}: no TYPE`).toBe(true);
  }
  // no family without a sample
  expect([...type.keys()].filter((n) => !samples.some((s) => s.name === n))).toEqual([]);
  return { help, type, samples };
}

const of = (p: Parsed, name: string) => p.samples.filter((s) => s.name === name);
const valueOf = (p: Parsed, name: string, labels: Record<string, string> = {}) =>
  of(p, name).find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

const HOSTILE = [
  'say "hi"',
  "back\\slash",
  "new\nline",
  "\\n not a newline",
  'all\\"\n',
  "tab\tcr\rnul\u0000",
  "Ünïcödé 📡",
  "}{,=",
  "# HELP x y",
];
const TAKEN = "2026-11-22T03:00:00Z";
const iface = (id: number, address: string) => ({ id, addresses: [{ id, address, netmask_prefixlen: 16 }] });

/** Access points with hostile firmware versions (one online, seen at the instant), one never seen, one with every number. */
function hostileModel(): Model {
  const aps = [
    ...HOSTILE.map((v, i) => ap(`10.7.0.${i + 1}`, { mesh_version: v, lastseen_timestamp: TAKEN }, [iface(100 + i, `10.7.0.${i + 1}`)])),
    ap("10.7.1.1", {}, [iface(200, "10.7.1.1")]),
    ap(
      "10.7.1.2",
      {
        lastseen_timestamp: "2026-11-21T03:00:00.5Z",
        system_uptime: 86400,
        system_load_1min: 0.25,
        device_memory_available: 29364,
        device_memory_free: 0,
      },
      [iface(201, "10.7.1.2")],
    ),
  ];
  const links = [
    {
      id: 7,
      timestamp: TAKEN,
      endpoints: [
        { interface: 201, quality: 0.3 },
        { interface: 100, quality: 0.7 },
      ],
    },
    {
      id: 8,
      timestamp: null,
      endpoints: [
        { interface: 200, quality: 0 },
        { address: "10.7.0.2", quality: 1 },
      ],
    },
  ];
  return dumpModel(aps, links, { format: "mesh-topology-dump/1", taken_at: TAKEN });
}

describe("the metrics file's format", () => {
  it("escapes a label value's backslash, double quote and line feed, and only those; a HELP text's backslash and line feed", () => {
    expect(escapeLabelValue('a"b\\c\nd\re\tf')).toBe('a\\"b\\\\c\\nd\re\tf');
    expect(escapeLabelValue("\\n")).toBe("\\\\n");
    expect(escapeHelp('a"b\\c\nd')).toBe('a"b\\\\c\\nd');
    expect([0.1, 1, 1e-7, 1e21, -0, NaN, Infinity, -Infinity].map(formatValue)).toEqual([
      "0.1",
      "1",
      "1e-7",
      "1e+21",
      "0",
      "NaN",
      "+Inf",
      "-Inf",
    ]);
  });

  it("gives every hostile firmware version back as it was, through the format's grammar", () => {
    const p = parse(text(hostileModel()));
    const versions = new Map(of(p, "mesh_accesspoints_by_version").map((s) => [s.labels.mesh_version, s.value]));
    for (const v of HOSTILE) expect(versions.get(v), JSON.stringify(v)).toBe(1);
    // the two without a version, as the empty value (no label, to Prometheus)
    expect(versions.get("")).toBe(2);
    expect([...versions.values()].reduce((a, b) => a + b, 0)).toBe(HOSTILE.length + 2);
  });

  it("writes HELP and TYPE for every family, counters with _total, and nothing but mesh_ names", () => {
    const p = parse(text(hostileModel(), { run: 3, sources: [{ source: "olsr", at: TAKEN }], previousRunSeconds: 1.5, failedRuns: 0 }));
    for (const [name, type] of p.type) {
      expect(name).toMatch(/^mesh_[a-z0-9_]+$/);
      expect(name.endsWith("_total")).toBe(type === "counter");
    }
    expect([...p.type.keys()]).toEqual([
      "mesh_data_timestamp_seconds",
      "mesh_accesspoints",
      "mesh_links",
      "mesh_accesspoints_by_version",
      "mesh_accesspoint_status",
      "mesh_accesspoint_last_seen_age_seconds",
      "mesh_accesspoint_system_uptime_seconds",
      "mesh_accesspoint_system_load_1min",
      "mesh_accesspoint_device_memory_available",
      "mesh_accesspoint_device_memory_free",
      "mesh_link_quality",
      "mesh_cycle_runs_total",
      "mesh_cycle_source_last_import_timestamp_seconds",
      "mesh_cycle_previous_run_duration_seconds",
      "mesh_cycle_failed_runs",
    ]);
  });

  it("takes every value from the model at the data's instant, and leaves out what the model lacks", () => {
    const m = hostileModel();
    const p = parse(text(m));
    expect(valueOf(p, "mesh_data_timestamp_seconds")).toBe(Date.parse(TAKEN) / 1000);
    expect(STATUSES.map((status) => valueOf(p, "mesh_accesspoints", { status }))).toEqual([HOSTILE.length, 1, 1]);
    expect(STATUSES.map((status) => valueOf(p, "mesh_links", { status }))).toEqual([1, 0, 1]);
    // a status series per access point and status, 1 for its own
    expect(of(p, "mesh_accesspoint_status")).toHaveLength(3 * m.accesspoints.length);
    for (const a of m.accesspoints)
      for (const status of STATUSES)
        expect(valueOf(p, "mesh_accesspoint_status", { main_ip: a.main_ip, status })).toBe(
          statusOf(a.lastseen_timestamp, m.takenAt) === status ? 1 : 0,
        );
    // the age at the data's instant, to the microsecond; none for the one never seen
    expect(valueOf(p, "mesh_accesspoint_last_seen_age_seconds", { main_ip: "10.7.1.2" })).toBe(86399.5);
    expect(valueOf(p, "mesh_accesspoint_last_seen_age_seconds", { main_ip: "10.7.0.1" })).toBe(0);
    expect(of(p, "mesh_accesspoint_last_seen_age_seconds").map((s) => s.labels.main_ip)).not.toContain("10.7.1.1");
    // the numbers only where the record has them (a 0 is a value)
    for (const name of [
      "mesh_accesspoint_system_uptime_seconds",
      "mesh_accesspoint_system_load_1min",
      "mesh_accesspoint_device_memory_available",
      "mesh_accesspoint_device_memory_free",
    ])
      expect(of(p, name).map((s) => s.labels.main_ip)).toEqual(["10.7.1.2"]);
    expect(
      ["system_uptime_seconds", "system_load_1min", "device_memory_available", "device_memory_free"].map((f) =>
        valueOf(p, `mesh_accesspoint_${f}`),
      ),
    ).toEqual([86400, 0.25, 29364, 0]);
    // a link's quality as the API gives it, its ends in endpoint order; quality 0 is a value too
    expect(of(p, "mesh_link_quality")).toEqual([
      { name: "mesh_link_quality", labels: { id: "7", main_ip_a: "10.7.1.2", main_ip_b: "10.7.0.1" }, value: 0.3 * 0.7 },
      { name: "mesh_link_quality", labels: { id: "8", main_ip_a: "10.7.1.1", main_ip_b: "10.7.0.2" }, value: 0 },
    ]);
    // a plain build: no cycle
    expect([...p.type.keys()].filter((n) => n.startsWith("mesh_cycle_"))).toEqual([]);
  });

  it("leaves out the instant and the ages of data without an instant", () => {
    // without network.json's taken_at, a dump's instant is its newest timestamp: none here
    const m = dumpModel([ap("10.7.2.1", { mesh_version: "1.0", system_uptime: 5 })]);
    const p = parse(text(m));
    expect(m.takenAt).toBeNull();
    expect(of(p, "mesh_data_timestamp_seconds")).toEqual([]);
    expect(of(p, "mesh_accesspoint_last_seen_age_seconds")).toEqual([]);
    // the API's rule without an instant: offline; the record's own numbers stay
    expect(valueOf(p, "mesh_accesspoints", { status: "offline" })).toBe(1);
    expect(valueOf(p, "mesh_accesspoint_system_uptime_seconds", { main_ip: "10.7.2.1" })).toBe(5);
  });

  it("says the cycle's health as given, and leaves out a duration no record gave", () => {
    const health: CycleHealth = {
      run: 12,
      sources: [
        { source: "wiki", at: "2026-11-22T02:00:00Z" },
        { source: "olsr", at: "2026-11-22T03:00:00.25Z" },
      ],
      failedRuns: 2,
    };
    const p = parse(text(hostileModel(), health));
    expect(valueOf(p, "mesh_cycle_runs_total")).toBe(12);
    expect(of(p, "mesh_cycle_source_last_import_timestamp_seconds")).toEqual([
      { name: "mesh_cycle_source_last_import_timestamp_seconds", labels: { source: "olsr" }, value: Date.parse(TAKEN) / 1000 + 0.25 },
      { name: "mesh_cycle_source_last_import_timestamp_seconds", labels: { source: "wiki" }, value: Date.parse(TAKEN) / 1000 - 3600 },
    ]);
    expect(of(p, "mesh_cycle_previous_run_duration_seconds")).toEqual([]);
    expect(valueOf(p, "mesh_cycle_failed_runs")).toBe(2);
    expect(valueOf(parse(text(hostileModel(), { ...health, previousRunSeconds: 4.25 })), "mesh_cycle_previous_run_duration_seconds")).toBe(
      4.25,
    );
  });
});

describe("the metrics file of a network", () => {
  it("is the same bytes for the same records in any order, and its counts are the API's", () => {
    const dump = synthesize({ aps: 300, seed: 20 });
    const a = dumpModel(dump.accesspoints, dump.links, dump.network);
    const shuffle = <T>(items: readonly T[], seed: number) =>
      items
        .map((item, i) => ({ item, key: (i * 2654435761 + seed) % 4294967296 }))
        .sort((x, y) => x.key - y.key)
        .map((x) => x.item);
    const b = dumpModel(shuffle(dump.accesspoints, 1), shuffle(dump.links, 2), dump.network);
    const body = text(a);
    expect(text(b)).toBe(body);
    const p = parse(body);
    expect(STATUSES.reduce((n, status) => n + valueOf(p, "mesh_accesspoints", { status })!, 0)).toBe(a.accesspoints.length);
    expect(STATUSES.reduce((n, status) => n + valueOf(p, "mesh_links", { status })!, 0)).toBe(a.links.length);
    // each link's quality is the API's, read back from its JSON
    const api = new Map(a.links.map((l) => [String(l.id), JSON.parse(renderLink(l, a).toString("utf8")).quality as number]));
    const links = of(p, "mesh_link_quality");
    expect(links).toHaveLength(a.links.length);
    for (const s of links) expect(s.value, s.labels.id).toBe(api.get(s.labels.id));
    // the samples of each family in a fixed order: access points by main_ip, links by id
    expect(links.map((s) => Number(s.labels.id))).toEqual(a.links.map((l) => l.id));
    expect(of(p, "mesh_accesspoint_system_uptime_seconds").map((s) => s.labels.main_ip)).toEqual(
      a.accesspoints.filter((x) => x.system_uptime !== null).map((x) => x.main_ip),
    );
  });

  it("is served by the preview at /metrics with the format's type and the file's bytes, to GET and HEAD", async () => {
    const { out } = await sharedBuild("data");
    expect(TYPED_FILES).toEqual([{ file: fileFor("metrics"), type: METRICS_TYPE }]);
    const file = readFileSync(path.join(out, fileFor("metrics")));
    parse(file.toString("utf8"));
    const preview = await startPreview({ dir: out, port: 0 });
    try {
      const port = Number(new URL(preview.url).port);
      const get = await rawRequest(port, "GET", "/metrics");
      expect(get.status).toBe(200);
      expect(get.headers["content-type"]).toBe(METRICS_TYPE);
      expect(get.body.equals(file)).toBe(true);
      const head = await rawRequest(port, "HEAD", "/metrics");
      expect(head.status).toBe(200);
      expect(head.headers["content-type"]).toBe(METRICS_TYPE);
      expect(head.body.length).toBe(0);
    } finally {
      await preview.close();
    }
  });
});
