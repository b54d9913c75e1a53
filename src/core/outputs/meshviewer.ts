import { z } from "zod";
import { rendered, type EnclosedList } from "../body.ts";
import { compareIp } from "../ip.ts";
import { statusOf, type AccesspointEntry, type Model } from "../model.ts";
import { pyFloat } from "../pyfloat.ts";
import { str } from "../records.ts";
import { linkFacts } from "../resources.ts";
import { brandField } from "../settings.ts";
import { compareCodePoints } from "../text.ts";
import { formatMicros } from "../timestamp.ts";
import type { ResolvedLink } from "../validate.ts";
import { outputRecord } from "./output.ts";

/**
 * `/data/meshviewer.json`: the network in the "ffrgb" format that yanic writes
 * (output/meshviewer-ffrgb of github FreifunkBremen/yanic) and meshviewer (github freifunk/meshviewer)
 * reads: a node per access point, a link per API link between two access points. Every field
 * meshviewer reads is written, with the value meshviewer copes with where the API has no such
 * datum. The mapping, field by field: docs/freifunk.md.
 */

/** What a never-seen access point's `lastseen` says: meshviewer reads a missing one as "now". */
export const NEVER_SEEN = "1970-01-01T00:00:00Z";

const Location = z.strictObject({ latitude: z.number(), longitude: z.number() });
const MeshviewerNode = z.strictObject({
  firstseen: z.string().optional().meta({ description: "the earliest install date the access point reports, where it reports one" }),
  lastseen: z.string(),
  is_online: z.boolean(),
  is_gateway: z.boolean(),
  clients: z.number(),
  clients_wifi24: z.number(),
  clients_wifi5: z.number(),
  clients_other: z.number(),
  loadavg: z.number().optional(),
  uptime: z.string().optional().meta({ description: "when it booted: lastseen_timestamp less system_uptime" }),
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

export const MESHVIEWER = outputRecord({
  kind: "meshviewer",
  name: "Meshviewer Data",
  summary: "The network as meshviewer data (yanic's ffrgb format), for meshviewer",
  files: { meshviewer: "/data/meshviewer.json" },
  file: "meshviewer",
  rootMember: "meshviewer",
  landing:
    "the network as meshviewer reads it (yanic's \"ffrgb\" format): point a meshviewer's <code>dataPath</code> at <code>/data/</code>.",
  schema: { name: "Meshviewer", zod: Meshviewer },
  *bodies(model) {
    yield { file: "meshviewer", body: meshviewerBody(model) };
  },
});

function meshviewerBody(model: Model): EnclosedList {
  return {
    head: `{${model.takenAt === null ? "" : `"timestamp":"${model.takenAt.text}",`}"nodes":`,
    items: rendered(model.accesspoints, (ap) => node(ap, model)),
    tail: { head: ',"links":', items: rendered(betweenAccesspoints(model), (l) => link(l, model)), tail: "}" },
  };
}

/** The links between two access points (a link within one would be a loop on the map), picked as they are written. */
function* betweenAccesspoints(model: Model): Generator<ResolvedLink> {
  for (const l of model.links) {
    const [a, b] = linkFacts(l, model).entries;
    if (a !== undefined && b !== undefined && a.ap !== b.ap) yield l;
  }
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

function node(ap: AccesspointEntry, model: Model): string {
  const f = facts(ap, model.settings.brand);
  const ifaces = ap.interfaces.map((id) => model.interfaceById.get(id)!);
  const addresses = [
    ...new Set([ap.main_ip, ...(ap.main_ipv6 === null ? [] : [ap.main_ipv6]), ...ifaces.flatMap((e) => interfaceAddresses(e.json))]),
  ].sort(compareIp);
  // The hardware address of the interface holding main_ip, else the first one known.
  const holder = model.interfaceByAddress.get(ap.main_ip);
  const mac = (holder?.ap === ap ? holder.mac : null) ?? ifaces.find((e) => e.mac !== null)?.mac ?? null;
  const installed = [f.firmware_install_timestamp, f.mesh_install_timestamp].filter((d): d is string => d !== null).sort(compareCodePoints);
  const seen = ap.lastseen_timestamp;
  const opt = (name: string, value: string | null) => (value === null ? "" : `"${name}":${value},`);
  // An empty text is no datum: left out, as yanic leaves out what a node does not report.
  const text = (value: string | null) => (value === null || value === "" ? null : str(value));
  const macMember = opt("mac", mac === null ? null : str(mac));
  const addressList = `[${addresses.map((a) => str(a)).join(",")}]`;
  const base = text(f.firmware_release_name) ?? text(f.firmware_type);
  const release = text(f.mesh_version);
  const firmware = [...(base === null ? [] : [`"base":${base}`]), ...(release === null ? [] : [`"release":${release}`])];
  return (
    "{" +
    opt("firstseen", installed.length === 0 ? null : `"${installed[0]}T00:00:00Z"`) +
    `"lastseen":"${seen === null ? NEVER_SEEN : seen.text}",` +
    `"is_online":${statusOf(seen, model.takenAt) === "online"},"is_gateway":false,` +
    `"clients":0,"clients_wifi24":0,"clients_wifi5":0,"clients_other":0,` +
    opt("loadavg", f.system_load_1min === null ? null : pyFloat(f.system_load_1min)) +
    opt("uptime", seen === null || f.system_uptime === null ? null : `"${formatMicros(seen.micros - f.system_uptime * 1_000_000)}"`) +
    `"node_id":${str(ap.main_ip)},` +
    macMember +
    `"addresses":${addressList},"network":{${macMember}"addresses":${addressList}},` +
    `"hostname":${str(ap.main_ip)},` +
    opt("owner", text(f.owner)) +
    opt(
      "location",
      ap.position === null
        ? null
        : `{"latitude":${pyFloat(ap.position.coordinates[1])},"longitude":${pyFloat(ap.position.coordinates[0])}}`,
    ) +
    `"firmware":{${firmware.join(",")}},"autoupdater":{"enabled":false}` +
    (text(f.device_model) === null ? "" : `,"model":${text(f.device_model)}`) +
    "}"
  );
}

function link(l: ResolvedLink, model: Model): string {
  const { entries, wireless } = linkFacts(l, model);
  const [source, target] = entries;
  const [sq, tq] = l.endpoints.map((e) => pyFloat(e.quality));
  return (
    `{"type":"${wireless ? "wifi" : "other"}","source":${str(source.ap.main_ip)},"target":${str(target.ap.main_ip)},` +
    `"source_tq":${sq},"target_tq":${tq},` +
    `"source_addr":${str(interfaceAddresses(source.json)[0] ?? source.ap.main_ip)},"target_addr":${str(interfaceAddresses(target.json)[0] ?? target.ap.main_ip)}}`
  );
}
