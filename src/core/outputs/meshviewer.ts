import { z } from "zod";
import { deferred, rendered, type EnclosedList } from "../body.ts";
import { canonicalIp, compareIp } from "../values/ip.ts";
import { bootMicros, EARLIEST_CREDIBLE } from "../model/evidence.ts";
import { statusOf, type AccesspointEntry, type InterfaceEntry, type Model } from "../model/model.ts";
import { pyFloat } from "../values/pyfloat.ts";
import { str } from "../model/render-json.ts";
import { linkFacts } from "../model/resources.ts";
import { brandField } from "../settings.ts";
import type { ResolvedLink } from "../model/validator.ts";
import { outputRecord } from "./output.ts";

/**
 * `/data/meshviewer.json`: the network in the "ffrgb" format that yanic writes
 * (output/meshviewer-ffrgb of github FreifunkBremen/yanic) and meshviewer (github freifunk/meshviewer)
 * reads: a node per access point, a link per API link between two access points. Every field
 * meshviewer reads is written, with the value meshviewer copes with where the API has no such
 * datum. The mapping, field by field: docs/freifunk.md.
 */

const Location = z.strictObject({ latitude: z.number(), longitude: z.number() });
const MeshviewerNode = z.strictObject({
  firstseen: z.string().meta({
    description:
      "when an import with memory saw it appear; else the earliest its record shows it existed (install dates, boot, last sighting)",
  }),
  lastseen: z.string(),
  is_online: z.boolean(),
  is_gateway: z.boolean().meta({ description: "whether an access point names it as its internet gateway (mesh_vpn_internet_connections)" }),
  clients: z.number(),
  clients_wifi24: z.number(),
  clients_wifi5: z.number(),
  clients_other: z.number(),
  loadavg: z.number().optional(),
  memory_usage: z.number().optional().meta({ description: "1 - device_memory_free / device_memory_available, where both are known" }),
  uptime: z.string().optional().meta({
    description: "when it booted: lastseen_timestamp less system_uptime; an online one without uptime, its lastseen (a lower bound)",
  }),
  gateway: z.string().optional().meta({ description: "the node (else the address) of its first internet gateway" }),
  node_id: z.string(),
  mac: z.string().optional(),
  addresses: z.array(z.string()),
  network: z.strictObject({ mac: z.string().optional(), addresses: z.array(z.string()) }),
  hostname: z.string(),
  owner: z.string().optional(),
  location: Location.optional(),
  firmware: z.strictObject({ base: z.string().optional(), release: z.string().optional() }),
  autoupdater: z.strictObject({ enabled: z.boolean() }),
  model: z.string().optional(),
});
const MeshviewerLink = z.strictObject({
  type: z.enum(["wifi", "other"]),
  source: z.string(),
  target: z.string(),
  source_tq: z.number(),
  target_tq: z.number(),
  source_addr: z.string(),
  target_addr: z.string(),
});
const Meshviewer = z.strictObject({
  timestamp: z.string().optional().meta({ description: "the dump's taken_at; left out when the dump has no time" }),
  nodes: z.array(MeshviewerNode),
  links: z.array(MeshviewerLink),
});

/**
 * Every instant as meshviewer parses it best: its node list reads `uptime` with the browser's `Date`,
 * which is only sure of milliseconds and `Z` (lib/nodelist.ts); moment reads the rest alike.
 */
const time = (micros: number) => new Date(Math.floor(micros / 1000)).toISOString();

const KIND = "meshviewer";
const FILE = "/data/meshviewer.json";

/**
 * The `firstseen` of every node in an earlier build's meshviewer file (the output a build replaces,
 * or the build a cycle served), in microseconds by node id: the previous state that saw each node, so
 * that a node keeps the first sighting a build once gave it (docs/freifunk.md). An unreadable or
 * absent file is no history.
 */
export function firstSeenIn(text: string | undefined): ReadonlyMap<string, number> {
  const seen = new Map<string, number>();
  if (text === undefined) return seen;
  try {
    const parsed = JSON.parse(text) as { nodes?: unknown };
    if (!Array.isArray(parsed.nodes)) return seen;
    for (const node of parsed.nodes as { node_id?: unknown; firstseen?: unknown }[]) {
      if (typeof node?.node_id !== "string" || typeof node.firstseen !== "string") continue;
      const micros = Date.parse(node.firstseen) * 1000;
      if (Number.isFinite(micros) && micros >= EARLIEST_CREDIBLE) seen.set(node.node_id, micros);
    }
  } catch {
    // not JSON: no history
  }
  return seen;
}

/**
 * When the network first saw an access point, in microseconds: when an import with memory saw it
 * appear, else the earliest its record shows it existed; never later than the first sighting an
 * earlier build gave it (what this output carries). Null for one never seen. The meshviewer file's
 * firstseen and the nodelist's firstcontact (docs/freifunk.md).
 */
export function firstSeenOf(ap: AccesspointEntry, model: Model): number | null {
  let first = ap.first_seen?.micros ?? ap.existed_by;
  if (first === null) return null;
  // The meshviewer file keeps milliseconds: an earlier build's instant counts when it is earlier at that precision.
  const before = (model.carried?.get(KIND) as ReadonlyMap<string, number> | undefined)?.get(ap.main_ip);
  if (before !== undefined && before < Math.floor(first / 1000) * 1000) first = before;
  return Math.min(first, ap.lastseen_timestamp?.micros ?? Infinity);
}

export const MESHVIEWER = outputRecord({
  kind: KIND,
  name: "Meshviewer Data",
  summary: "The network as meshviewer data (yanic's ffrgb format), for meshviewer",
  files: { meshviewer: FILE },
  file: "meshviewer",
  rootMember: "meshviewer",
  landing:
    "the network as meshviewer reads it (yanic's \"ffrgb\" format): point a meshviewer's <code>dataPath</code> at <code>/data/</code>.",
  schema: { name: "Meshviewer", zod: Meshviewer },
  carry: async (earlier) => firstSeenIn(await earlier.buildText(FILE)),
  *bodies(model) {
    yield { file: "meshviewer", body: deferred(() => meshviewerBody(model)) };
  },
});

/**
 * The access points ever seen: meshviewer has no "never" (a missing lastseen reads as now, a lost node
 * with an alert; null as "Invalid date", and "NaN" in the node list), and yanic lists only nodes it heard.
 */
const seen = (model: Model) => model.accesspoints.filter((ap) => ap.lastseen_timestamp !== null);

function meshviewerBody(model: Model): EnclosedList {
  const read: Reading = { facts: once((ap) => facts(ap, model.settings.brand)), addresses: once((e) => interfaceAddresses(e.json)) };
  const gateways = internetGateways(model, read);
  return {
    head: `{${model.takenAt === null ? "" : `"timestamp":"${time(model.takenAt.micros)}",`}"nodes":`,
    items: rendered(seen(model), (ap) => node(ap, model, gateways, read)),
    tail: { head: ',"links":', items: rendered(betweenAccesspoints(model), (l) => link(l, model, read)), tail: "}" },
  };
}

/**
 * What the file reads of the API JSON of access points and interfaces, each parsed once for the file:
 * an access point's is read for the gateways and for its node, an interface's for its node and each
 * of its links (at 40,000 access points a second of a cycle's thread, parsed again and again).
 */
interface Reading {
  readonly facts: (ap: AccesspointEntry) => Facts;
  readonly addresses: (entry: InterfaceEntry) => string[];
}

function once<K, V>(read: (key: K) => V): (key: K) => V {
  const memo = new Map<K, V>();
  return (key) => {
    if (!memo.has(key)) memo.set(key, read(key));
    return memo.get(key)!;
  };
}

/** The links between two access points ever seen (a link within one would be a loop on the map), picked as they are written. */
function* betweenAccesspoints(model: Model): Generator<ResolvedLink> {
  for (const l of model.links) {
    const [a, b] = linkFacts(l, model).entries;
    if (a !== undefined && b !== undefined && a.ap !== b.ap && a.ap.lastseen_timestamp !== null && b.ap.lastseen_timestamp !== null)
      yield l;
  }
}

/** The access point holding an address, else none. */
const holderOf = (model: Model, address: string): AccesspointEntry | undefined =>
  model.accesspointByIp.get(address) ?? model.interfaceByAddress.get(address)?.ap;

/** The first address of `mesh_vpn_internet_connections`: the gateway its internet traffic goes through. */
function firstGateway(connections: unknown): string | null {
  if (typeof connections !== "string") return null;
  for (const word of connections.split(/[\s,;]+/)) {
    const ip = canonicalIp(word);
    if (ip) return ip.address;
  }
  return null;
}

/** The access points some access point names as its internet gateway. */
function internetGateways(model: Model, read: Reading): Set<AccesspointEntry> {
  const gateways = new Set<AccesspointEntry>();
  for (const ap of model.accesspoints) {
    const address = firstGateway(read.facts(ap).mesh_vpn_internet_connections);
    const holder = address === null ? undefined : holderOf(model, address);
    if (holder) gateways.add(holder);
  }
  return gateways;
}

/** The fields of an access point's API JSON that meshviewer has a place for (brand fields by their neutral names). */
interface Facts {
  owner: string | null;
  device_model: string | null;
  firmware_type: string | null;
  firmware_release_name: string | null;
  firmware_install_timestamp: string | null;
  system_uptime: number | null;
  system_load_1min: number | null;
  device_memory_available: number | null;
  device_memory_free: number | null;
  mesh_vpn_internet_connections: string | null;
  mesh_version: string | null;
  mesh_install_timestamp: string | null;
}

/** Read from the rendered JSON as each node is written: the model keeps only what every response needs. */
function facts(ap: AccesspointEntry, brand: string): Facts {
  const json = JSON.parse(ap.json.toString("utf8")) as Record<string, unknown>;
  const field = (name: keyof Facts) => json[brandField(name, brand)] ?? null;
  return Object.fromEntries(
    (
      [
        "owner",
        "device_model",
        "firmware_type",
        "firmware_release_name",
        "firmware_install_timestamp",
        "system_uptime",
        "system_load_1min",
        "device_memory_available",
        "device_memory_free",
        "mesh_vpn_internet_connections",
        "mesh_version",
        "mesh_install_timestamp",
      ] as const
    ).map((name) => [name, field(name)]),
  ) as unknown as Facts;
}

/** The addresses an interface holds, from its API JSON. */
function interfaceAddresses(json: Buffer): string[] {
  const parsed = JSON.parse(json.toString("utf8")) as { addresses: { address: string }[] };
  return parsed.addresses.map((a) => a.address);
}

/** The share of memory in use, 0 to 1, where the two fields make sense together. */
function memoryUsage(available: number | null, free: number | null): number | null {
  if (available === null || free === null || !(available > 0) || free < 0 || free > available) return null;
  return 1 - free / available;
}

function node(ap: AccesspointEntry, model: Model, gateways: ReadonlySet<AccesspointEntry>, read: Reading): string {
  const f = read.facts(ap);
  const ifaces = ap.interfaces.map((id) => model.interfaceById.get(id)!);
  const addresses = [
    ...new Set([ap.main_ip, ...(ap.main_ipv6 === null ? [] : [ap.main_ipv6]), ...ifaces.flatMap((e) => read.addresses(e))]),
  ].sort(compareIp);
  // The hardware address of the interface holding main_ip, else the first one known.
  const holder = model.interfaceByAddress.get(ap.main_ip);
  const mac = (holder?.ap === ap ? holder.mac : null) ?? ifaces.find((e) => e.mac !== null)?.mac ?? null;
  const seen = ap.lastseen_timestamp!;
  const online = statusOf(seen, model.takenAt) === "online";
  const uptime = typeof f.system_uptime === "number" ? f.system_uptime : null;
  const first = firstSeenOf(ap, model)!;
  // An online node without a credible boot: its last sighting, for meshviewer's node list subtracts
  // the uptime of every online node (lib/nodelist.ts) and shows NaN for none.
  const boot = bootMicros(seen.micros, uptime) ?? (online ? seen.micros : null);
  const memory = memoryUsage(f.device_memory_available, f.device_memory_free);
  const gatewayAddress = firstGateway(f.mesh_vpn_internet_connections);
  const gateway = gatewayAddress === null ? null : (holderOf(model, gatewayAddress)?.main_ip ?? gatewayAddress);
  const opt = (name: string, value: string | null) => (value === null ? "" : `"${name}":${value},`);
  // An empty text is no datum: left out, as yanic leaves out what a node does not report.
  const text = (value: string | null) => (value === null || value === "" ? null : str(value));
  const macMember = opt("mac", mac === null ? null : str(mac));
  const addressList = `[${addresses.map((a) => str(a)).join(",")}]`;
  // One level: the release the system is built on. firmware_type names the system, not a version.
  const base = text(f.firmware_release_name);
  const release = text(f.mesh_version);
  const firmware = [...(base === null ? [] : [`"base":${base}`]), ...(release === null ? [] : [`"release":${release}`])];
  return (
    "{" +
    `"firstseen":"${time(first)}",` +
    `"lastseen":"${time(seen.micros)}",` +
    `"is_online":${online},"is_gateway":${gateways.has(ap)},` +
    `"clients":0,"clients_wifi24":0,"clients_wifi5":0,"clients_other":0,` +
    opt("loadavg", f.system_load_1min === null ? null : pyFloat(f.system_load_1min)) +
    opt("memory_usage", memory === null ? null : pyFloat(memory)) +
    opt("uptime", boot === null ? null : `"${time(boot)}"`) +
    opt("gateway", gateway === null ? null : str(gateway)) +
    `"node_id":${str(ap.main_ip)},` +
    macMember +
    `"addresses":${addressList},"network":{${macMember}"addresses":${addressList}},` +
    `"hostname":${str(ap.main_ip)},` +
    opt("owner", text(f.owner)) +
    opt("location", ap.positionText === null ? null : `{"latitude":${ap.positionText[1]},"longitude":${ap.positionText[0]}}`) +
    `"firmware":{${firmware.join(",")}},"autoupdater":{"enabled":false}` +
    (text(f.device_model) === null ? "" : `,"model":${text(f.device_model)}`) +
    "}"
  );
}

function link(l: ResolvedLink, model: Model, read: Reading): string {
  const { entries, wireless } = linkFacts(l, model);
  const [source, target] = entries;
  const [sq, tq] = l.endpoints.map((e) => pyFloat(e.quality));
  return (
    `{"type":"${wireless ? "wifi" : "other"}","source":${str(source.ap.main_ip)},"target":${str(target.ap.main_ip)},` +
    `"source_tq":${sq},"target_tq":${tq},` +
    `"source_addr":${str(read.addresses(source)[0] ?? source.ap.main_ip)},"target_addr":${str(read.addresses(target)[0] ?? target.ap.main_ip)}}`
  );
}
