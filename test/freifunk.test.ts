import { cpSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import { FREIFUNK_API_SCHEMA } from "../src/core/outputs/freifunk-api-document.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_HEADERS, fileFor, urlFor } from "../src/core/routes.ts";
import { synthesize, writeSynthDump } from "../src/gen/synth.ts";
import { build, startPreview, type Preview } from "../src/index.ts";
import { PUBLIC_SAMPLE } from "./support/expected.ts";
import { HOSTILE, hostileDump } from "./support/hostile.ts";
import { command, tempDir } from "./support/tree.ts";

/**
 * The files other maps read (src/core/outputs/nodelist.ts, meshviewer.ts): each build's against the
 * published Freifunk nodelist schema and against what meshviewer reads (test/fixtures/), for the
 * public sample, a synthetic network and the hostile-values network; the public sample's over HTTP
 * against the API's own lists; the nodelist against what the original's generator made of the same
 * lists, apart from the differences docs/freifunk.md states.
 */

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`fixtures/${name}`, import.meta.url), "utf8")) as object;
const ajv = new Ajv({ allErrors: true, strict: true });
const nodelistSchema = ajv.compile(fixture("freifunk/nodelist-1.0.1.schema.json"));
const meshviewerSchema = ajv.compile(fixture("meshviewer/meshviewer.schema.json"));

interface NodelistNode {
  id: string;
  name: string;
  node_type: string;
  status: { online: boolean; firstcontact?: string; lastcontact?: string };
  position?: { lat: number; long: number };
}
interface Nodelist {
  version: string;
  updated_at?: string;
  community?: { href?: string; name?: string };
  nodes: NodelistNode[];
}
interface MeshNode {
  node_id: string;
  hostname: string;
  is_online: boolean;
  is_gateway: boolean;
  firstseen: string;
  lastseen: string;
  uptime?: string;
  memory_usage?: number;
  gateway?: string;
  owner?: string;
  model?: string;
  location?: { latitude: number; longitude: number };
  addresses: string[];
  firmware: { base?: string; release?: string };
}
interface MeshLink {
  source: string;
  target: string;
  type: string;
  source_tq: number;
  target_tq: number;
}
interface Meshviewer {
  timestamp?: string;
  nodes: MeshNode[];
  links: MeshLink[];
}
interface ApiAccesspoint {
  main_ip: string;
  lastseen_timestamp: string | null;
  position: { type: "Point"; coordinates: [number, number] } | null;
  owner: string | null;
  device_model: string | null;
  [field: string]: unknown;
}

/** meshviewer's default window for "new" and "lost" nodes: `maxAge: 14` days (lib/config_default.ts). */
const MAX_AGE_MS = 14 * 24 * 3600_000;
const CREDIBLE = Date.UTC(2000, 0, 1);

/**
 * What meshviewer would show wrong, read as its code reads the file (freifunk/meshviewer, lib/):
 * main.ts parses firstseen and lastseen with moment (missing = now) and lists an online node as new
 * when its firstseen is within maxAge of now; nodelist.ts subtracts `new Date(uptime)` from now for
 * every online node; utils/node.ts draws memory_usage as a share of 1. "Now" is the data's instant.
 */
function meshviewerShowsWrong(mesh: Meshviewer, aps: ApiAccesspoint[]): string[] {
  const wrong: string[] = [];
  const now = Date.parse(mesh.timestamp!);
  const byIp = new Map(aps.map((ap) => [ap.main_ip, ap]));
  for (const n of mesh.nodes) {
    const first = Date.parse(n.firstseen);
    const last = Date.parse(n.lastseen);
    if (!(first >= CREDIBLE) || !(last >= CREDIBLE))
      wrong.push(`${n.node_id}: firstseen ${n.firstseen} or lastseen ${n.lastseen} before 2000 or unreadable`);
    if (first > last || last > now) wrong.push(`${n.node_id}: firstseen after lastseen, or lastseen after the data's instant`);
    if (n.is_online) {
      const uptime = now - new Date(n.uptime!).getTime();
      if (!Number.isFinite(uptime) || uptime < 0) wrong.push(`${n.node_id}: the node list's uptime is ${uptime}`);
    }
    if (n.uptime !== undefined && !(Date.parse(n.uptime) >= CREDIBLE && Date.parse(n.uptime) <= last))
      wrong.push(`${n.node_id}: booted ${n.uptime}`);
    if (n.memory_usage !== undefined && !(n.memory_usage >= 0 && n.memory_usage <= 1)) wrong.push(`${n.node_id}: memory ${n.memory_usage}`);
    const ap = byIp.get(n.node_id)!;
    // One level: the release name, never the system's name beside it.
    if ((n.firmware.base ?? null) !== (ap.firmware_release_name || null)) wrong.push(`${n.node_id}: firmware.base ${n.firmware.base}`);
    // New only when the data shows it appeared within the window: an install date, a boot or a first sighting.
    const isNew = n.is_online && first > now - MAX_AGE_MS;
    const uptimeSeconds = typeof ap.system_uptime === "number" ? ap.system_uptime : null;
    const evidence = [
      last,
      ...(uptimeSeconds !== null && uptimeSeconds >= 0 ? [last - uptimeSeconds * 1000] : []),
      ...[ap.firmware_install_timestamp, ap.mesh_install_timestamp]
        .filter((d) => typeof d === "string")
        .map((d) => Date.parse(`${d}T00:00:00Z`)),
    ].filter((t) => t >= CREDIBLE);
    if (isNew && Math.min(...evidence) <= now - MAX_AGE_MS) wrong.push(`${n.node_id}: new, though its record shows it earlier`);
  }
  return wrong;
}

const read = <T>(out: string, file: string) => JSON.parse(readFileSync(path.join(out, file), "utf8")) as T;
const nodelistOf = (out: string) => read<Nodelist>(out, fileFor("freifunkNodelist"));
const meshviewerOf = (out: string) => read<Meshviewer>(out, fileFor("meshviewer"));

/** Everything wrong with a build's two files against their schemas and against the build's own access point list. */
function problemsOf(out: string): string[] {
  const problems: string[] = [];
  const nodelist = nodelistOf(out);
  const mesh = meshviewerOf(out);
  if (!nodelistSchema(nodelist)) problems.push(`nodelist: ${ajv.errorsText(nodelistSchema.errors)}`);
  if (!meshviewerSchema(mesh)) problems.push(`meshviewer: ${ajv.errorsText(meshviewerSchema.errors)}`);
  const aps = read<ApiAccesspoint[]>(out, fileFor("accesspointList"));
  const online = new Set(read<ApiAccesspoint[]>(out, fileFor("accesspointListByStatus", { status: "online" })).map((a) => a.main_ip));
  const ids = aps.map((a) => a.main_ip);
  if (JSON.stringify(nodelist.nodes.map((n) => n.id)) !== JSON.stringify(ids))
    problems.push("nodelist: not every access point once, in order");
  // meshviewer: every access point ever seen (it has no "never"), once, in order
  const seenIds = aps.filter((a) => a.lastseen_timestamp !== null).map((a) => a.main_ip);
  if (JSON.stringify(mesh.nodes.map((n) => n.node_id)) !== JSON.stringify(seenIds))
    problems.push("meshviewer: not every access point ever seen once, in order");
  problems.push(...meshviewerShowsWrong(mesh, aps));
  const meshById = new Map(mesh.nodes.map((m) => [m.node_id, m]));
  aps.forEach((ap, i) => {
    const n = nodelist.nodes[i];
    if (ap.lastseen_timestamp === null) {
      if (meshById.has(ap.main_ip)) problems.push(`meshviewer ${ap.main_ip}: never seen, yet listed`);
      return;
    }
    const m = meshById.get(ap.main_ip)!;
    if (new Date(Date.parse(n.status.firstcontact!)).toISOString() !== m.firstseen)
      problems.push(`${ap.main_ip}: firstcontact is not firstseen`);
    const position = ap.position && { lat: ap.position.coordinates[1], long: ap.position.coordinates[0] };
    if (JSON.stringify(n.position) !== JSON.stringify(position ?? undefined)) problems.push(`nodelist ${ap.main_ip}: position`);
    const location = ap.position && { latitude: ap.position.coordinates[1], longitude: ap.position.coordinates[0] };
    if (JSON.stringify(m.location) !== JSON.stringify(location ?? undefined)) problems.push(`meshviewer ${ap.main_ip}: location`);
    if (n.status.online !== online.has(ap.main_ip) || m.is_online !== online.has(ap.main_ip)) problems.push(`${ap.main_ip}: online`);
    if (n.status.lastcontact !== (ap.lastseen_timestamp ?? undefined)) problems.push(`nodelist ${ap.main_ip}: lastcontact`);
    if ((n.status.firstcontact === undefined) !== (ap.lastseen_timestamp === null)) problems.push(`nodelist ${ap.main_ip}: firstcontact`);
    // to the millisecond: what the browser's Date reads (lib/nodelist.ts)
    if (m.lastseen !== new Date(Date.parse(ap.lastseen_timestamp)).toISOString()) problems.push(`meshviewer ${ap.main_ip}: lastseen`);
    if ((m.owner ?? null) !== (ap.owner || null) || (m.model ?? null) !== (ap.device_model || null))
      problems.push(`meshviewer ${ap.main_ip}: owner or model`);
    if (!m.addresses.includes(ap.main_ip)) problems.push(`meshviewer ${ap.main_ip}: main_ip not among its addresses`);
  });
  const nodes = new Set(seenIds);
  for (const l of mesh.links)
    if (!nodes.has(l.source) || !nodes.has(l.target) || l.source === l.target)
      problems.push(`meshviewer link ${l.source}-${l.target}: not between two nodes`);
  return problems;
}

describe("the public sample's nodelist and meshviewer data", () => {
  let out: string;
  let preview: Preview;
  const get = async (target: string) => {
    const res = await fetch(preview.url + target);
    return {
      status: res.status,
      type: res.headers.get("content-type"),
      cors: res.headers.get("access-control-allow-origin"),
      body: await res.json(),
    };
  };

  beforeAll(async () => {
    out = path.join(tempDir(), "dist");
    const r = await command([
      "build",
      "--quiet",
      "--data",
      `${PUBLIC_SAMPLE}dump`,
      "--out",
      out,
      "--community-name",
      "Opennet Initiative e.V.",
      "--community-url",
      "https://www.opennet-initiative.de/",
    ]);
    expect(r.stderr).toBe("");
    preview = await startPreview({ dir: out, port: 0 });
  }, 120_000);
  afterAll(async () => preview?.close());

  it("fit their schemas and the build's access points", () => {
    expect(problemsOf(out)).toEqual([]);
    const nodelist = nodelistOf(out);
    expect(nodelist.community).toEqual({ href: "https://www.opennet-initiative.de/", name: "Opennet Initiative e.V." });
    expect(nodelist.updated_at).toBe(read<{ taken_at: string }>(out, fileFor("apiRoot")).taken_at);
  });

  it("agree over HTTP with the API's own lists: node counts, online counts, positions", async () => {
    const nodelist = await get(urlFor("freifunk-nodelist"));
    const mesh = await get(urlFor("meshviewer"));
    for (const answer of [nodelist, mesh]) {
      expect([answer.status, answer.type, answer.cors]).toEqual([200, API_HEADERS["Content-Type"], "*"]);
    }
    const all = (await get(urlFor("accesspoint-list", { status: "all" }))).body as ApiAccesspoint[];
    const online = (await get(urlFor("accesspoint-list", { status: "online" }))).body as ApiAccesspoint[];
    const nodes = (nodelist.body as Nodelist).nodes;
    const meshNodes = (mesh.body as Meshviewer).nodes;
    expect(nodes.length).toBe(all.length);
    const everSeen = all.filter((a) => a.lastseen_timestamp !== null);
    expect(meshNodes.length).toBe(everSeen.length);
    expect(everSeen.length).toBeLessThan(all.length); // the public sample names access points never seen
    expect(nodes.filter((n) => n.status.online).length).toBe(online.length);
    expect(meshNodes.filter((n) => n.is_online).length).toBe(online.length);
    expect(online.length).toBeGreaterThan(0);
    expect(online.length).toBeLessThan(all.length);
    const positions = (list: ApiAccesspoint[]) =>
      list.filter((a) => a.position).map((a) => `${a.main_ip} ${a.position!.coordinates[1]} ${a.position!.coordinates[0]}`);
    expect(positions(all).length).toBeGreaterThan(0);
    expect(nodes.filter((n) => n.position).map((n) => `${n.id} ${n.position!.lat} ${n.position!.long}`)).toEqual(positions(all));
    expect(meshNodes.filter((n) => n.location).map((n) => `${n.node_id} ${n.location!.latitude} ${n.location!.longitude}`)).toEqual(
      positions(everSeen),
    );
    // The API root and the landing page link both.
    const root = (await get(urlFor("api-root"))).body as Record<string, string>;
    expect([root.freifunk_nodelist, root.meshviewer]).toEqual([urlFor("freifunk-nodelist"), urlFor("meshviewer")]);
    const landing = await (await fetch(`${preview.url}/`)).text();
    for (const url of [urlFor("freifunk-nodelist"), urlFor("meshviewer")]) expect(landing).toContain(`<a href="${url}">`);
  });

  it("has every API link between two access points as a meshviewer link, with both endpoints' qualities", async () => {
    const links = (await get(urlFor("link-list", { status: "all" }))).body as {
      id: number;
      is_wireless: boolean;
      endpoints: { quality: number; interface: { accesspoint: string } }[];
    }[];
    const between = links.filter((l) => l.endpoints[0].interface.accesspoint !== l.endpoints[1].interface.accesspoint);
    const want = between.map((l) => ({
      type: l.is_wireless ? "wifi" : "other",
      source: l.endpoints[0].interface.accesspoint,
      target: l.endpoints[1].interface.accesspoint,
      source_tq: l.endpoints[0].quality,
      target_tq: l.endpoints[1].quality,
    }));
    expect(
      meshviewerOf(out).links.map(({ type, source, target, source_tq, target_tq }) => ({ type, source, target, source_tq, target_tq })),
    ).toEqual(want);
    expect(want.length).toBeGreaterThan(100);
  });

  it("is the original generator's nodelist but for the corrected online test, updated_at, lastcontact's spelling, position and scope", async () => {
    // What geronimo_freifunknodelist.py made of the original's default list (the online access points:
    // the original answered `/accesspoint/` with them), run at the dump's taken_at. Restated here as
    // its behaviour, not its code: a node per access point of that list, online when it was last
    // seen MORE than 15 minutes before, lastcontact in Python's isoformat(), position {lon, lat} or null.
    const takenAt = Date.parse(read<{ taken_at: string }>(out, fileFor("apiRoot")).taken_at);
    const defaultList = (await get(urlFor("accesspoint-list", { status: "online" }))).body as ApiAccesspoint[];
    const original = defaultList.map((ap) => ({
      id: ap.main_ip,
      name: ap.main_ip,
      node_type: "AccessPoint",
      status: {
        online: takenAt - Date.parse(ap.lastseen_timestamp!) > 15 * 60_000,
        lastcontact: ap.lastseen_timestamp!.replace(/Z$/, "+00:00"),
      },
      position: ap.position ? { lon: ap.position.coordinates[0], lat: ap.position.coordinates[1] } : null,
    }));
    const ours = new Map(nodelistOf(out).nodes.map((n) => [n.id, n]));
    const differences = new Map<string, number>();
    const count = (what: string) => differences.set(what, (differences.get(what) ?? 0) + 1);
    for (const o of original) {
      const n = ours.get(o.id)!;
      // The documented differences, each counted: online is the build's status (online here, for every
      // access point of the online list), lastcontact ends in Z, position is {lat, long} or absent.
      if (n.status.online !== o.status.online) count("online");
      expect(n.status.online).toBe(true);
      expect(n.status.lastcontact).toBe(o.status.lastcontact.replace(/\+00:00$/, "Z"));
      expect(n.position).toEqual(o.position === null ? undefined : { lat: o.position.lat, long: o.position.lon });
      expect({ ...n, status: undefined, position: undefined }).toEqual({ ...o, status: undefined, position: undefined });
    }
    // Scope: ours has every access point; the original's the online ones.
    expect(ours.size - original.length).toBe([...ours.values()].filter((n) => !n.status.online).length);
    // The original's test called these offline: seen within 15 minutes of taken_at.
    expect(differences.get("online")).toBe(original.filter((o) => !o.status.online).length);
  });
});

describe("meshviewer's firstseen across builds", () => {
  it("keeps the first sighting the build it replaces gave, so a node is new only in the window after it appeared", async () => {
    const day = (n: number) => Date.UTC(2026, 10, 1) + n * 86_400_000;
    const dump = (at: number, extra: string[]) => {
      const data = path.join(tempDir(), "data");
      cpSync(`${PUBLIC_SAMPLE}dump`, data, { recursive: true });
      const file = path.join(data, "accesspoints/accesspoints.ndjson");
      const seen = new Date(at - 60_000).toISOString();
      const lines = readFileSync(file, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const kept = lines.filter((ap) => !extra.includes(ap.main_ip as string) || at > day(0));
      writeFileSync(
        file,
        kept
          .map((ap) =>
            JSON.stringify({
              ...ap,
              lastseen_timestamp: seen,
              system_uptime: null,
              firmware_install_timestamp: null,
              mesh_install_timestamp: null,
            }),
          )
          .join("\n") + "\n",
      );
      const network = JSON.parse(readFileSync(path.join(data, "network.json"), "utf8")) as Record<string, unknown>;
      writeFileSync(path.join(data, "network.json"), JSON.stringify({ ...network, taken_at: new Date(at).toISOString() }));
      return data;
    };
    const all = readFileSync(`${PUBLIC_SAMPLE}dump/accesspoints/accesspoints.ndjson`, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).main_ip as string);
    // the last access point appears with the second dump, 20 days later (it has no links: a plain record)
    const late = [all.at(-1)!];
    const out = path.join(tempDir(), "dist");
    await build({ data: dump(day(0), late), out });
    const newOf = (dir: string) => {
      const mesh = meshviewerOf(dir);
      const now = Date.parse(mesh.timestamp!);
      return mesh.nodes.filter((n) => n.is_online && Date.parse(n.firstseen) > now - MAX_AGE_MS).map((n) => n.node_id);
    };
    expect(newOf(out).length).toBe(meshviewerOf(out).nodes.length); // no evidence, no memory: every node first seen now
    await build({ data: dump(day(20), late), out });
    expect(newOf(out)).toEqual(late);
    expect(problemsOf(out)).toEqual([]);
    const fresh = path.join(tempDir(), "fresh");
    await build({ data: dump(day(20), late), out: fresh });
    expect(newOf(fresh).length).toBe(meshviewerOf(fresh).nodes.length);
  }, 120_000);
});

describe("a synthetic network's and the hostile-values network's", () => {
  it("fit their schemas and the build's access points", async () => {
    const data = path.join(tempDir(), "data");
    await writeSynthDump(data, synthesize({ aps: 300, seed: 21 }));
    const out = path.join(tempDir(), "dist");
    await build({ data, out });
    expect(problemsOf(out)).toEqual([]);
    expect(meshviewerOf(out).links.length).toBeGreaterThan(100);
    expect(nodelistOf(out).nodes.filter((n) => n.status.online).length).toBeGreaterThan(0);
  }, 120_000);

  it("keep hostile owners, models and versions as strings and stay JSON", async () => {
    const data = hostileDump();
    // The hostile values as owner and device model too: texts a meshviewer shows.
    const file = path.join(data, "accesspoints/hostile.json");
    const aps = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>[];
    // Seen (online and long ago), with the values a router without a clock or a broken agent reports.
    const takenAt = "2026-11-20T10:00:00Z";
    const odd = [
      { system_uptime: -5, firmware_install_timestamp: "1970-01-01" },
      { system_uptime: 1e15, device_memory_available: 0, device_memory_free: 5 },
      { system_uptime: 86_400, device_memory_available: 100, device_memory_free: 250 },
      { device_memory_available: 100, device_memory_free: 25, mesh_install_timestamp: "2030-01-01" },
      { mesh_vpn_internet_connections: `${HOSTILE[0]} 10.9.0.2` },
    ];
    writeFileSync(
      file,
      JSON.stringify(
        aps.map((ap, i) => ({
          ...ap,
          owner: HOSTILE[i],
          device_model: HOSTILE[i],
          lastseen_timestamp: i % 2 === 0 ? "2026-11-20T09:59:00.123456Z" : "2025-01-01T00:00:00Z",
          ...odd[i % odd.length],
        })),
      ),
    );
    writeFileSync(path.join(data, "network.json"), JSON.stringify({ format: "mesh-topology-dump/1", taken_at: takenAt }));
    const out = path.join(tempDir(), "dist");
    await build({ data, out, settings: { communityName: HOSTILE.join(" ") } });
    expect(problemsOf(out)).toEqual([]);
    const mesh = meshviewerOf(out);
    const sorted = (values: (string | undefined)[]) => values.map(String).sort();
    expect(sorted(mesh.nodes.map((n) => n.owner))).toEqual(sorted(HOSTILE));
    expect(sorted(mesh.nodes.map((n) => n.model))).toEqual(sorted(HOSTILE));
    expect(sorted(mesh.nodes.map((n) => n.firmware.release))).toEqual(sorted(HOSTILE));
    expect(nodelistOf(out).community?.name).toBe(HOSTILE.join(" "));
    expect(mesh.nodes.filter((n) => n.is_gateway).map((n) => n.node_id)).toEqual(["10.9.0.2"]);
    expect(mesh.nodes.filter((n) => n.memory_usage !== undefined).map((n) => n.memory_usage)).toEqual(
      Array(mesh.nodes.filter((_, i) => i % 5 === 3).length).fill(0.75),
    );
  }, 120_000);
});

describe("the community's Freifunk API file (build --freifunk-api)", () => {
  const template = {
    name: "Freifunk Rostock",
    url: "https://www.opennet-initiative.de/",
    location: { city: "Rostock", country: "DE", state: "DE-MV", geoCode: { lat: 54.0914, lon: 12.1151 } },
    contact: { email: "vorstand@opennet-initiative.de", irc: "irc://irc.libera.chat/opennet" },
    state: { focus: ["Free internet access"] },
    nodeMaps: [{ url: "https://map.opennet-initiative.de/", technicalType: "", mapType: "geographical" }],
  };
  const write = (value: unknown, raw?: string) => {
    const file = path.join(tempDir(), "community.json");
    writeFileSync(file, raw ?? JSON.stringify(value, null, 2));
    return file;
  };

  it("is the template with the online count at taken_at, that instant and the nodelist, over HTTP, and fits the 0.5.3 schema", async () => {
    const out = path.join(tempDir(), "dist");
    const r = await command([
      "build",
      "--quiet",
      "--data",
      `${PUBLIC_SAMPLE}dump`,
      "--out",
      out,
      "--freifunk-api",
      write(template),
      "--site-url",
      "https://api.opennet-initiative.de/",
    ]);
    expect([r.status, r.stderr]).toEqual([0, ""]);
    const preview = await startPreview({ dir: out, port: 0 });
    try {
      const res = await fetch(`${preview.url}/freifunk/api.json`);
      expect([res.status, res.headers.get("content-type"), res.headers.get("access-control-allow-origin")]).toEqual([
        200,
        API_HEADERS["Content-Type"],
        "*",
      ]);
      const doc = (await res.json()) as Record<string, any>;
      const online = (await (await fetch(`${preview.url}${urlFor("accesspoint-list", { status: "online" })}`)).json()) as unknown[];
      const root = (await (await fetch(`${preview.url}${urlFor("api-root")}`)).json()) as Record<string, unknown>;
      expect(online.length).toBe(280);
      expect(doc.state).toEqual({ focus: ["Free internet access"], nodes: online.length, lastchange: root.taken_at });
      expect(doc.api).toBe("0.5.3");
      expect(doc.nodeMaps).toEqual([
        template.nodeMaps[0],
        { url: "https://api.opennet-initiative.de/freifunk/dynamic/nodelist.json", technicalType: "nodelist", mapType: "list/status" },
      ]);
      expect({ ...doc, api: undefined, state: undefined, nodeMaps: undefined }).toEqual({
        ...template,
        state: undefined,
        nodeMaps: undefined,
      });
      expect(root.freifunk_api).toBe("/freifunk/api.json");
      const ajv = new Ajv({ allErrors: true, strict: true });
      addFormats.default(ajv);
      const valid = ajv.compile(FREIFUNK_API_SCHEMA);
      expect(valid(doc), ajv.errorsText(valid.errors)).toBe(true);
    } finally {
      await preview.close();
    }
  }, 120_000);

  it("is not written, named or linked without the option", async () => {
    const out = path.join(tempDir(), "dist");
    await build({ data: `${PUBLIC_SAMPLE}dump`, out });
    const preview = await startPreview({ dir: out, port: 0 });
    try {
      expect((await fetch(`${preview.url}/freifunk/api.json`)).status).toBe(404);
      const root = (await (await fetch(`${preview.url}${urlFor("api-root")}`)).json()) as Record<string, unknown>;
      expect("freifunk_api" in root).toBe(false);
      expect(await (await fetch(`${preview.url}/`)).text()).not.toContain("/freifunk/api.json");
    } finally {
      await preview.close();
    }
  }, 120_000);

  it("refuses a template it cannot use before any work, naming the file and each member (exit 2)", async () => {
    const out = path.join(tempDir(), "dist");
    const run = (file: string, ...more: string[]) =>
      command(["build", "--quiet", "--data", `${PUBLIC_SAMPLE}dump`, "--out", out, "--freifunk-api", file, ...more]);
    const site = ["--site-url", "https://api.example.org/"];
    const cases: [string, string[], RegExp][] = [
      [write(null, '{\n  "name": "x",\n  }'), site, /community\.json: not JSON at line 3, column 3/],
      [write([1]), site, /not a JSON object/],
      [
        write({ ...template, contact: { email: "not mail" }, extra: 1 }),
        site,
        /\$\.contact\.email: must match.*\n.*\$: must NOT have additional properties \(extra\)|\$: must NOT have additional properties \(extra\)[\s\S]*\$\.contact\.email/,
      ],
      [write({ ...template, api: "0.4.14" }), site, /\$\.api: "0\.4\.14", but the build writes and checks version 0\.5\.3/],
      [write(template), [], /\$\.nodeMaps: no entry with "technicalType": "nodelist"; give --site-url/],
      [write({ ...template, location: { city: "Rostock" } }), site, /\$\.location: must have required property 'geoCode'/],
    ];
    for (const [file, more, message] of cases) {
      const r = await run(file, ...more);
      expect([r.status, r.stderr], file).toEqual([2, expect.stringMatching(message)]);
      expect(r.stderr).toContain(file);
    }
    expect((await command(["build", "--data", `${PUBLIC_SAMPLE}dump`, "--out", out, "--site-url", "https://x.org/"])).stderr).toMatch(
      /give --freifunk-api/,
    );
    expect(() => readFileSync(path.join(out, "index.html"))).toThrow(); // nothing written
  }, 120_000);
});
