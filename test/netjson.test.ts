import { readFileSync } from "node:fs";
import AjvDraft04 from "ajv-draft-04";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildModel, STATUSES, statusOf, type Model, type Status } from "../src/core/model/model.ts";
import { networkGraph, networkGraphBody } from "../src/core/outputs/netjson-graph.ts";
import { graphOf, netdiff } from "../src/core/history/daily.ts";
import { bodyText, jsonPieces } from "../src/core/body.ts";
import { renderLink } from "../src/core/model/resources.ts";
import { validateDump } from "../src/core/model/validator.ts";
import { synthesize } from "../src/gen/synth.ts";
import { loadDump } from "../src/io/read/load.ts";
import { ap, at, model as dumpModel } from "./support/dump.ts";
import { PUBLIC_SAMPLE } from "./support/expected.ts";
import { rawRequest } from "./support/http.ts";
import { sampleSite, type SampleSite } from "./support/site.ts";

/**
 * The NetJSON NetworkGraph (src/core/outputs/netjson-graph.ts) against the NetworkGraph schema of the NetJSON
 * specification (test/fixtures/netjson/), and every node and link against the rules the schema cannot
 * say (it checks only the first node) and the ones docs/api.md states.
 */

interface Node {
  id: string;
  label?: string;
  local_addresses?: string[];
  properties: Record<string, unknown> & { location?: { lat: number; lng: number }; status: Status };
}
interface Link {
  source: string;
  target: string;
  cost: number;
  properties: { id: number; quality: number; is_wireless: boolean; wifi_ssid: string | null; timestamp: string | null };
}
interface Graph {
  type: string;
  nodes: Node[];
  links: Link[];
  properties: { taken_at: string | null; status: Status | null; links_left_out: Record<string, number> };
}

const SCHEMA = JSON.parse(readFileSync(new URL("fixtures/netjson/network-graph.schema.json", import.meta.url), "utf8"));
// A CommonJS module: under NodeNext its class is the default export of the default export. Not
// strict: Ajv's strict mode lints schemas, and refuses keywords this one has that draft-04 ignores
// (additionalItems beside a single-schema items), which does not change what it validates.
const ajv = new AjvDraft04.default({ allErrors: true, strict: false });
const validateGraph = ajv.compile(SCHEMA);
// The schema's own item schemas: the node schema is the first (only) entry of its tuple-form `items`.
const validateNode = ajv.compile(SCHEMA.properties.nodes.items[0]);
const validateLink = ajv.compile(SCHEMA.properties.links.items);

/** Everything wrong with a graph, as sentences; [] when it is a NetworkGraph a consumer can load whole. */
function problemsOf(graph: Graph): string[] {
  const problems: string[] = [];
  if (!validateGraph(graph)) problems.push(`schema: ${ajv.errorsText(validateGraph.errors)}`);
  const ids = new Set<string>();
  const addressOwner = new Map<string, string>();
  graph.nodes.forEach((node, i) => {
    if (!validateNode(node)) problems.push(`node ${i}: ${ajv.errorsText(validateNode.errors)}`);
    if (ids.has(node.id)) problems.push(`node ${i}: id ${node.id} twice`);
    ids.add(node.id);
    for (const address of [node.id, ...(Array.isArray(node.local_addresses) ? node.local_addresses : [])]) {
      const owner = addressOwner.get(address);
      if (owner !== undefined && owner !== node.id) problems.push(`node ${i}: address ${address} also names ${owner}`);
      addressOwner.set(address, node.id);
    }
    const location = node.properties?.location;
    if (location !== undefined && !(Math.abs(location.lat) <= 90 && Math.abs(location.lng) <= 180))
      problems.push(`node ${i}: location out of range`);
  });
  const pairs = new Set<string>();
  graph.links.forEach((link, i) => {
    if (!validateLink(link)) problems.push(`link ${i}: ${ajv.errorsText(validateLink.errors)}`);
    for (const end of [link.source, link.target]) if (!ids.has(end)) problems.push(`link ${i}: ${end} is not a node`);
    if (link.source === link.target) problems.push(`link ${i}: a loop on ${link.source}`);
    if (!(Number.isFinite(link.cost) && link.cost > 0)) problems.push(`link ${i}: cost ${link.cost}`);
    const pair = [link.source, link.target].sort().join(" ");
    if (pairs.has(pair)) problems.push(`link ${i}: a second link between ${pair}`);
    pairs.add(pair);
  });
  return problems;
}

const parse = (text: string) => JSON.parse(text) as Graph;
const leftOutTotal = (g: Graph) => Object.values(g.properties.links_left_out).reduce((a, b) => a + b, 0);

async function sampleModel(): Promise<Model> {
  const validation = validateDump(await loadDump(`${PUBLIC_SAMPLE}dump`));
  return buildModel(validation.dump!);
}

/** A synthetic network as records, before validation: tests change records, then build its model. */
const synth = (aps: number, seed: number) => synthesize({ aps, seed });
const synthModel = (dump: ReturnType<typeof synth>) => dumpModel(dump.accesspoints, dump.links, dump.network);

describe("the NetworkGraph of the public sample", () => {
  let model: Model;
  let text: string;
  let graph: Graph;
  beforeAll(async () => {
    model = await sampleModel();
    text = networkGraph(model);
    graph = parse(text);
  });

  it("is a NetworkGraph of the schema, every node and link valid, every link between two nodes", () => {
    expect(problemsOf(graph)).toEqual([]);
    expect(graph).toMatchObject({ type: "NetworkGraph", protocol: "olsr", version: "1", metric: "etx" });
    expect(graph.properties).toMatchObject({ taken_at: "2026-11-22T11:28:02.756363Z", status: null });
  });

  it("has a node per access point and a link per API link but the one of quality 0 and the 9 parallel ones", () => {
    expect(graph.nodes.map((n) => n.id)).toEqual(model.accesspoints.map((a) => a.main_ip));
    expect(graph.nodes).toHaveLength(423);
    expect(graph.links).toHaveLength(615);
    expect(graph.properties.links_left_out).toEqual({ endpoint_of_other_status: 0, same_access_point: 0, infinite_cost: 1, parallel: 9 });
    expect(graph.links.length + leftOutTotal(graph)).toBe(model.links.length);
  });

  it("gives a link the API's quality, endpoints, is_wireless, wifi_ssid and timestamp, and cost 1/quality", () => {
    const api = new Map(model.links.map((l) => [l.id, JSON.parse(renderLink(l, model).toString("utf8"))]));
    for (const link of graph.links) {
      const a = api.get(link.properties.id);
      expect([link.source, link.target]).toEqual(a.endpoints.map((e: { interface: { accesspoint: string } }) => e.interface.accesspoint));
      expect(link.properties).toMatchObject({
        quality: a.quality,
        is_wireless: a.is_wireless,
        wifi_ssid: a.wifi_ssid,
        timestamp: a.timestamp,
      });
      expect(link.cost).toBe(1 / a.quality);
    }
    const zero = model.links.find((l) => l.endpoints.some((e) => e.quality === 0))!;
    expect(graph.links.some((l) => l.properties.id === zero.id)).toBe(false);
  });

  it("keeps, of parallel links, the one of the lowest cost", () => {
    const byPair = new Map<string, { id: number; cost: number }[]>();
    for (const l of model.links) {
      const ips = l.endpoints.map((e) => model.interfaceById.get(e.interfaceId)!.ap.main_ip).sort();
      const q = l.endpoints.reduce((p, e) => p * e.quality, 1);
      if (q === 0) continue;
      const key = ips.join(" ");
      byPair.set(key, [...(byPair.get(key) ?? []), { id: l.id, cost: 1 / q }]);
    }
    const kept = new Set(graph.links.map((l) => l.properties.id));
    const parallel = [...byPair.values()].filter((links) => links.length > 1);
    expect(parallel).toHaveLength(9);
    for (const links of parallel) {
      const best = [...links].sort((a, b) => a.cost - b.cost || a.id - b.id)[0];
      expect(links.filter((l) => kept.has(l.id)).map((l) => l.id)).toEqual([best.id]);
    }
  });

  it("places a node by its position (location), only when it has one, and gives the API's fields", () => {
    const byIp = new Map(model.accesspoints.map((a) => [a.main_ip, a]));
    let located = 0;
    for (const node of graph.nodes) {
      const a = byIp.get(node.id)!;
      expect(node.label).toBe(a.main_ip);
      if (a.position === null) expect(node.properties.location).toBeUndefined();
      else {
        located++;
        expect(node.properties.location).toEqual({ lat: a.position.coordinates[1], lng: a.position.coordinates[0] });
      }
      expect(node.properties).toMatchObject({
        status: statusOf(a.lastseen_timestamp, model.takenAt),
        main_ipv6: a.main_ipv6,
        mesh_version: a.mesh_version,
        site: a.site,
        post_address: a.post_address,
        lastseen_timestamp: a.lastseen_timestamp?.text ?? null,
      });
    }
    expect(located).toBe(387);
  });

  it("lists as local addresses the other addresses the API resolves to the access point, none a main_ip, each at one node", () => {
    const mainIps = new Set(model.accesspoints.map((a) => a.main_ip));
    for (const node of graph.nodes) {
      for (const address of node.local_addresses ?? []) {
        expect(mainIps.has(address)).toBe(false);
        expect(model.interfaceByAddress.get(address)!.ap.main_ip).toBe(node.id);
      }
    }
    const listed = graph.nodes.flatMap((n) => n.local_addresses ?? []);
    expect(listed).toHaveLength([...model.interfaceByAddress.keys()].filter((address) => !mainIps.has(address)).length);
    expect(listed.length).toBeGreaterThan(0);
    const naming = (address: string) => graph.nodes.filter((n) => [n.id, ...(n.local_addresses ?? [])].includes(address)).map((n) => n.id);
    // 10.3.0.1 is held by interfaces of two access points; the API answers with interface 479's.
    expect(naming("10.3.0.1")).toEqual([model.interfaceById.get(479)!.ap.main_ip]);
    // 192.168.2.53 is an access point's main_ip, and the API answers with another's interface 342:
    // it names only the access point whose main_ip it is.
    expect(model.interfaceById.get(342)!.ap.main_ip).not.toBe("192.168.2.53");
    expect(naming("192.168.2.53")).toEqual(["192.168.2.53"]);
  });

  it("per status: the access points of that status, and the links of that status between two of them", () => {
    const seen = new Set<string>();
    for (const status of STATUSES) {
      const g = parse(networkGraph(model, status));
      expect(problemsOf(g)).toEqual([]);
      expect(g.properties.status).toBe(status);
      expect(g.nodes.map((n) => n.id)).toEqual(
        model.accesspoints.filter((a) => statusOf(a.lastseen_timestamp, model.takenAt) === status).map((a) => a.main_ip),
      );
      for (const n of g.nodes) seen.add(n.id);
      for (const l of g.links) expect(statusOf(model.links.find((m) => m.id === l.properties.id)!.timestamp, model.takenAt)).toBe(status);
      const ofStatus = model.links.filter((l) => statusOf(l.timestamp, model.takenAt) === status);
      expect(g.links.length + leftOutTotal(g)).toBe(ofStatus.length);
    }
    expect(seen.size).toBe(423);
    // Every link of the sample is online and joins two online access points.
    expect(parse(networkGraph(model, "online")).links).toEqual(graph.links);
    expect(parse(networkGraph(model, "offline")).links).toEqual([]);
  });

  it("is the same text every time", () => {
    expect(networkGraph(model)).toBe(text);
  });
});

describe("the NetworkGraph of a synthetic network", () => {
  const dump = synth(400, 11);
  // One link's endpoint reports quality 0: the link has no finite ETX.
  const zeroId = (dump.links[5] as { id: number }).id;
  (dump.links[5] as { endpoints: { quality: number }[] }).endpoints[1].quality = 0;
  const model = synthModel(dump);

  it("is valid, whole and per status, and leaves the link of quality 0 out", () => {
    const g = parse(networkGraph(model));
    expect(problemsOf(g)).toEqual([]);
    expect(g.nodes).toHaveLength(400);
    expect(g.properties.links_left_out).toEqual({ endpoint_of_other_status: 0, same_access_point: 0, infinite_cost: 1, parallel: 0 });
    expect(g.links.map((l) => l.properties.id)).toEqual(model.links.map((l) => l.id).filter((id) => id !== zeroId));
    let otherStatus = 0;
    for (const status of STATUSES) {
      const s = parse(networkGraph(model, status));
      expect(problemsOf(s)).toEqual([]);
      otherStatus += s.properties.links_left_out.endpoint_of_other_status;
    }
    // Link and access point ages are drawn apart in the synthetic network, so status graphs lose links.
    expect(otherStatus).toBeGreaterThan(0);
  });

  it("is read item by item as JSON.parse reads its whole text, and its diff written in pieces as JSON.stringify writes it (the topology by day)", () => {
    const whole = (status?: Status) => JSON.parse(networkGraph(model, status)) as ReturnType<typeof graphOf>;
    for (const status of [undefined, ...STATUSES]) {
      const read = graphOf(networkGraphBody(model, status));
      // the same members in the same order, each of the same value
      expect(JSON.stringify(read)).toBe(JSON.stringify(whole(status)));
      expect(read).toEqual(whole(status));
    }
    const before = whole("online");
    const after = whole();
    for (const [a, b] of [
      [before, after],
      [after, before],
      [{ ...after, nodes: [], links: [] }, after],
      [after, after],
    ])
      expect(bodyText(jsonPieces(netdiff(a, b)))).toBe(JSON.stringify(netdiff(a, b)));
  });

  it("does not depend on the order of the records", () => {
    const shuffle = <T>(items: T[]) =>
      items
        .map((item, i) => ({ item, k: (i * 7919) % 1009 }))
        .sort((a, b) => a.k - b.k)
        .map((x) => x.item);
    const shuffled = dumpModel(shuffle([...dump.accesspoints]).reverse(), shuffle([...dump.links]).reverse(), dump.network);
    expect(networkGraph(shuffled)).toBe(networkGraph(model));
    for (const status of STATUSES) expect(networkGraph(shuffled, status)).toBe(networkGraph(model, status));
  });
});

describe("links the graph cannot hold as they are", () => {
  const TAKEN = "2026-11-22T03:00:00Z";
  const SEEN = { lastseen_timestamp: "2026-11-22T02:59:00Z" };
  const twoInterfaces = [
    { id: 1, addresses: [{ id: 1, address: "10.0.0.1", netmask_prefixlen: 16 }] },
    { id: 2, addresses: [{ id: 2, address: "10.9.0.1", netmask_prefixlen: 16 }] },
  ];
  const link = (id: number, a: string, qa: number, b: string, qb: number) => ({
    id,
    timestamp: "2026-11-22T02:58:00Z",
    endpoints: [
      { address: a, quality: qa },
      { address: b, quality: qb },
    ],
  });
  const model = dumpModel(
    [
      ap("10.0.0.1", SEEN, twoInterfaces),
      ap("10.0.0.2", SEEN),
      ap("10.0.0.3", SEEN),
      ap("10.0.0.4", { lastseen_timestamp: "2026-11-01T00:00:00Z" }),
    ],
    [
      link(1, "10.0.0.1", 1, "10.9.0.1", 1), // both ends on 10.0.0.1
      link(2, "10.0.0.1", 0.5, "10.0.0.2", 1), // cost 2
      link(3, "10.0.0.2", 1, "10.0.0.1", 1), // cost 1: the one kept of 1-2
      link(4, "10.9.0.1", 1, "10.0.0.2", 1), // cost 1, a higher id: parallel
      link(5, "10.0.0.2", 1e-200, "10.0.0.3", 1e-200), // the product underflows to 0
      link(6, "10.0.0.3", 0.25, "10.0.0.4", 1), // to a flapping access point
    ],
    { format: "mesh-topology-dump/1", taken_at: TAKEN },
  );

  it("leaves out loops, links without a finite cost and all but the cheapest of parallel links, and counts them", () => {
    const g = parse(networkGraph(model));
    expect(problemsOf(g)).toEqual([]);
    expect(g.links.map((l) => [l.properties.id, l.source, l.target, l.cost])).toEqual([
      [3, "10.0.0.2", "10.0.0.1", 1],
      [6, "10.0.0.3", "10.0.0.4", 4],
    ]);
    expect(g.properties.links_left_out).toEqual({ endpoint_of_other_status: 0, same_access_point: 1, infinite_cost: 1, parallel: 2 });
    expect(g.nodes.find((n) => n.id === "10.0.0.1")!.local_addresses).toEqual(["10.9.0.1"]);
    expect(g.nodes.find((n) => n.id === "10.0.0.2")!.local_addresses).toBeUndefined();
  });

  it("leaves out of a status graph the links of that status with an access point of another", () => {
    const online = parse(networkGraph(model, "online"));
    expect(problemsOf(online)).toEqual([]);
    expect(online.nodes.map((n) => n.id)).toEqual(["10.0.0.1", "10.0.0.2", "10.0.0.3"]);
    expect(online.links.map((l) => l.properties.id)).toEqual([3]);
    expect(online.properties.links_left_out).toEqual({ endpoint_of_other_status: 1, same_access_point: 1, infinite_cost: 1, parallel: 2 });
    const flapping = parse(networkGraph(model, "flapping"));
    expect(flapping.nodes.map((n) => n.id)).toEqual(["10.0.0.4"]);
    expect(flapping.links).toEqual([]);
    expect(leftOutTotal(flapping)).toBe(0);
  });

  it("is valid when there is nothing in it", () => {
    const empty = dumpModel([], []);
    const g = parse(networkGraph(empty));
    expect(problemsOf(g)).toEqual([]);
    expect(g).toMatchObject({ nodes: [], links: [], properties: { taken_at: null } });
  });
});

describe("strings from the data", () => {
  // Lone surrogates are not here: validation refuses them ("not valid Unicode text").
  const hostile = [
    '"}],"nodes":[{"id":"x"}]',
    "back\\slash",
    "</script><script>alert(1)</script>",
    "line\u2028sep\u2029",
    "\u0000\u001f\u007f",
    "😀 Ünïcödé",
  ];

  it("are written by jsonPieces as JSON.stringify writes them, in objects and lists at any depth", () => {
    const values: unknown[] = [
      hostile,
      { a: hostile, b: { c: [], d: {}, e: [{ f: null, g: [1.5, -0, 1e21, true] }] }, skipped: undefined, last: "😀" },
      { only: undefined },
      [[], {}, [[hostile]], null],
      [undefined, 1],
      ...hostile,
      0,
      null,
    ];
    for (const value of values) expect(bodyText(jsonPieces(value))).toBe(JSON.stringify(value));
  });

  it("are JSON-escaped in node and link properties and read back unchanged", () => {
    const wifi = (ssid: string) => ({
      wifi_ssid: ssid,
      wifi_bssid: "00:11:22:33:44:55",
      wifi_driver: "nl80211",
      wifi_hwmode: "802.11an",
      wifi_mode: "adhoc",
      wifi_channel: 36,
      wifi_freq: "5180.000",
      wifi_transmit_power: 17,
      wifi_signal: -60,
      wifi_noise: -95,
      wifi_bitrate: "130.0",
      wifi_crypt: "Plain",
      wifi_vaps_enabled: false,
    });
    const aps = hostile.map((s, i) =>
      ap(`10.1.0.${i + 1}`, { post_address: s, mesh_version: s, position: at(7.6, 51.9) }, [
        { id: 500 + i, if_name: "wlan0", addresses: [{ id: 500 + i, address: `10.1.0.${i + 1}`, netmask_prefixlen: 16 }], wifi: wifi(s) },
      ]),
    );
    const links = hostile.slice(1).map((_, i) => ({
      id: i + 1,
      endpoints: [
        { interface: 500 + i, quality: 0.9 },
        { interface: 501 + i, quality: 0.8 },
      ],
    }));
    const model = dumpModel(aps, links);
    const text = networkGraph(model);
    const g = parse(text);
    expect(problemsOf(g)).toEqual([]);
    expect(g.nodes).toHaveLength(hostile.length);
    expect(g.nodes.map((n) => n.properties.post_address)).toEqual(hostile);
    expect(g.nodes.map((n) => n.properties.mesh_version)).toEqual(hostile);
    expect(g.links.map((l) => l.properties.wifi_ssid)).toEqual(hostile.slice(0, -1));
    expect(text).not.toMatch(/[\u0000-\u001f]/);
  });
});

describe("the per-node check", () => {
  it("finds a bad node that the schema alone lets through, because it checks only the first node", () => {
    const good = { id: "10.0.0.1", properties: {} };
    const bad = { id: 42, label: ["not", "text"], local_addresses: "10.0.0.9" };
    const graph = { type: "NetworkGraph", protocol: "olsr", version: "1", metric: "etx", nodes: [good, bad], links: [] };
    expect(validateGraph(graph)).toBe(true);
    const problems = problemsOf(graph as unknown as Graph);
    expect(problems.filter((p) => p.startsWith("node 1:"))).toHaveLength(1);
    expect(problems[0]).toMatch(/^node 1: .*must be string/);
  });

  it("finds a link to no node, a loop, a second link of a pair and a cost that is no positive number", () => {
    const nodes = [{ id: "a" }, { id: "b" }];
    const graph = {
      type: "NetworkGraph",
      protocol: "olsr",
      version: "1",
      metric: "etx",
      nodes,
      links: [
        { source: "a", target: "b", cost: 1 },
        { source: "b", target: "a", cost: 2 },
        { source: "a", target: "c", cost: 1 },
        { source: "a", target: "a", cost: 1 },
        { source: "b", target: "c", cost: 0 },
      ],
    };
    expect(problemsOf(graph as unknown as Graph)).toEqual([
      "link 1: a second link between a b",
      "link 2: c is not a node",
      "link 3: a loop on a",
      "link 4: c is not a node",
      "link 4: cost 0",
    ]);
  });
});

describe("the preview of a build", () => {
  let site: SampleSite;
  beforeAll(async () => {
    site = await sampleSite();
  });
  afterAll(() => site?.preview.close());

  const get = async (target: string) => {
    const r = await rawRequest(site.port, "GET", target);
    return { status: r.status, type: r.headers["content-type"], body: r.body.toString("utf8") };
  };

  it("serves the graph, whole and per status, as application/json with the bodies networkGraph() writes", async () => {
    const model = site.result.model!;
    const whole = { status: 200, type: "application/json", body: networkGraph(model) };
    expect(await get("/api/v1/netjson/networkgraph.json")).toEqual(whole);
    expect(await get("/api/v1/netjson/networkgraph.json?status=all")).toEqual(whole);
    for (const status of STATUSES) {
      const body = networkGraph(model, status);
      expect(await get(`/api/v1/netjson/networkgraph.json?status=${status}`)).toEqual({ status: 200, type: "application/json", body });
    }
    expect(await get("/api/v1/netjson/networkgraph.json?status=unknown")).toMatchObject({ status: 404, body: '{"detail":"Not found."}' });
  });
});
