import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { NETWORK_FORMAT } from "../core/model/schema.ts";
import { formatMicros } from "../core/values/timestamp.ts";
import { assertReplaceable, writeMarker } from "../io/write/ownership.ts";
import { replaceFolder } from "../io/write/swap.ts";

/**
 * A synthetic but realistic mesh network in the dump format, deterministic for a seed: clustered
 * positions, 1-3 interfaces per access point, some IPv6, wifi attributes on radios, a mix of firmware
 * versions and of online, flapping and offline nodes, links between neighbours referenced by interface
 * id or by address, and sites of 4-7 members. Used for the sample data, the tests and the benchmark.
 *
 * The network validates without a warning: every address is held by one interface only (see the
 * address plan at mainIpv4) and no two links join the same pair of access points.
 */
export interface SynthOptions {
  readonly aps: number;
  readonly seed: number;
  /** records per dump file */
  readonly chunk?: number;
}

export interface SynthDump {
  readonly network: Record<string, unknown>;
  readonly accesspoints: Record<string, unknown>[];
  readonly links: Record<string, unknown>[];
}

const TAKEN_AT = Date.UTC(2026, 10, 22, 3, 0, 0) * 1000; // micros
const VERSIONS = ["0.5.4-1", "0.5.5-unstable-3021", "0.5.5-2-f3a9c1", "0.5.6-4", "opennet0.6.sdk", "0.4-5", null, null, null, ""];
const STREETS = ["Hauptstraße", "Am Markt", "Kirchweg", "Ludgeristraße", "Hafenweg", "Schulstraße", "Über'm Kamp"];
const MODELS = ["NanoStation M5", "TL-WR1043ND", "GL-AR150", "Archer C7", "NanoBridge M5"];
const SSIDS = ["mesh.freifunk.net", "muenster.freifunk.net", "Hafen-Backbone", "on-i.de Nord", "Café Meshtest"];
const HEX_DIGITS = "0123456789abcdef";

/**
 * The secondary interfaces' address ranges (see the address plan at mainIpv4), as [first address,
 * number of /30 blocks]: 172.16.0.0/12, then 100.64.0.0/10.
 */
const LAN_RANGES: readonly (readonly [number, number])[] = [
  [172 * 2 ** 24 + 16 * 2 ** 16, 2 ** (32 - 12 - 2)],
  [100 * 2 ** 24 + 64 * 2 ** 16, 2 ** (32 - 10 - 2)],
];

/** The most access points the address plan has room for: two /30 blocks each (655,360). */
export const SYNTH_MAX_APS = LAN_RANGES.reduce((n, [, blocks]) => n + blocks, 0) / 2;

export function synthesize(options: SynthOptions): SynthDump {
  assertRoomFor(options.aps);
  const draw = drawsOf(mulberry32(options.seed));
  const { accesspoints, radios } = synthAccesspoints(options.aps, draw);
  const links = synthLinks(radios, draw);
  return {
    network: {
      format: NETWORK_FORMAT,
      name: `synthetic mesh (${options.aps} access points, seed ${options.seed})`,
      taken_at: formatMicros(TAKEN_AT),
    },
    accesspoints,
    links,
  };
}

/**
 * The seeded random draws. Every value of the network is drawn from one sequence, so the steps below
 * draw in a fixed order: changing the order of two draws changes the network of every seed.
 */
interface Draws {
  /** from 0 (included) to 1 */
  rand(): number;
  pick<T>(items: readonly T[]): T;
  /** a MAC address, upper case now and then */
  mac(): string;
  /** a link quality, 0.05 to 1 in steps of 0.001 */
  quality(): number;
}

/** One of an access point's interfaces that links may join, by id or by address. */
interface Radio {
  readonly ap: number;
  readonly iface: number;
  readonly address: string;
}

/** What is drawn of an access point before its interfaces. */
interface AccesspointPlan {
  readonly index: number;
  readonly main: string;
  readonly v6: string | null;
  readonly site: number | null;
  /** micros before TAKEN_AT it was last seen, -1: never */
  readonly age: number;
  /** whether it reports device, system and wifi details */
  readonly reporting: boolean;
  readonly version: string | null;
  /** the centre of its cluster */
  readonly cluster: Centre;
}

interface Centre {
  readonly lon: number;
  readonly lat: number;
}

/** The ids handed out so far, shared by all access points: interface and address ids are unique in the dump. */
interface IdCounters {
  iface: number;
  address: number;
}

function assertRoomFor(aps: number): void {
  if (!Number.isInteger(aps) || aps < 0 || aps > SYNTH_MAX_APS) {
    throw new RangeError(
      `the number of access points must be a whole number from 0 to ${SYNTH_MAX_APS} (the room in the address plan), not ${aps}`,
    );
  }
}

function drawsOf(rand: () => number): Draws {
  const pick = <T>(items: readonly T[]) => items[Math.floor(rand() * items.length)];
  // a digit a draw, in the order of the draws, from a table: toString(16) and joins made the MACs more than half of a large network's synthesis
  const digit = () => HEX_DIGITS[Math.floor(rand() * 16)];
  return {
    rand,
    pick,
    mac: () => {
      let text = digit() + digit();
      for (let i = 1; i < 6; i++) text += ":" + digit() + digit();
      return rand() < 0.3 ? text.toUpperCase() : text;
    },
    quality: () => Math.round((0.05 + rand() * 0.95) * 1000) / 1000,
  };
}

/** A timestamp `ageMicros` before the dump was taken. */
function ago(ageMicros: number): string {
  return formatMicros(Math.round(TAKEN_AT - ageMicros));
}

/** The access points, in clusters of 40, and the radios of each (by index) for the links. */
function synthAccesspoints(count: number, draw: Draws): { accesspoints: Record<string, unknown>[]; radios: Radio[][] } {
  const accesspoints: Record<string, unknown>[] = [];
  const radios: Radio[][] = [];
  const ids: IdCounters = { iface: 0, address: 0 };
  const nextSite = siteRuns(draw);
  let cluster: Centre = { lon: 7.62, lat: 51.96 };
  for (let i = 0; i < count; i++) {
    if (i % 40 === 0) cluster = { lon: 6.5 + draw.rand() * 2.5, lat: 51.2 + draw.rand() * 1.5 };
    const plan = planAccesspoint(i, cluster, nextSite, draw);
    const { interfaces, radios: own } = synthInterfaces(plan, ids, draw);
    radios.push(own);
    accesspoints.push(accesspointRecord(plan, interfaces, draw));
  }
  return { accesspoints, radios };
}

/**
 * Sites as runs of consecutive access points: after one ends, the next access point starts another
 * of 4-7 members now and then (so neighbours share a site). Returns the next access point's site.
 */
function siteRuns(draw: Draws): () => number | null {
  let siteId = 0;
  let siteLeft = 0;
  return () => {
    if (siteLeft === 0 && draw.rand() < 0.15) [siteId, siteLeft] = [siteId + 1, 4 + Math.floor(draw.rand() * 4)];
    const site = siteLeft > 0 ? siteId : null;
    if (siteLeft > 0) siteLeft--;
    return site;
  };
}

function planAccesspoint(i: number, cluster: Centre, nextSite: () => number | null, draw: Draws): AccesspointPlan {
  const main = mainIpv4(i);
  const v6 = draw.rand() < 0.2 ? `fd00:${(i >> 16).toString(16)}::${(i & 0xffff).toString(16)}:1` : null;
  const site = nextSite();
  const age = draw.pick([60e6 * 3, 60e6 * 12, 3600e6 * 20, 86400e6 * 4, 86400e6 * 90, -1]);
  const reporting = draw.rand() < 0.6;
  const version = reporting ? draw.pick(VERSIONS) : null;
  return { index: i, main, v6, site, age, reporting, version, cluster };
}

/** 1-3 interfaces: the first wireless and holding the main addresses, the others on the access point's own /30 blocks. */
function synthInterfaces(plan: AccesspointPlan, ids: IdCounters, draw: Draws): { interfaces: Record<string, unknown>[]; radios: Radio[] } {
  const interfaces: Record<string, unknown>[] = [];
  const radios: Radio[] = [];
  const count = 1 + Math.floor(draw.rand() * 3);
  for (let k = 0; k < count; k++) {
    const wireless = k === 0 || draw.rand() < 0.4;
    const address = k === 0 ? plan.main : lanIpv4(2 * plan.index + k - 1);
    const addresses = [{ id: ++ids.address, address, netmask_prefixlen: k === 0 ? 16 : 30 }];
    if (k === 0 && plan.v6) addresses.push({ id: ++ids.address, address: plan.v6, netmask_prefixlen: 64 });
    const id = ++ids.iface;
    interfaces.push({
      id,
      if_name: wireless ? `wlan${k}` : k === 1 ? "eth0" : `tap${k}`,
      if_hwaddress: k === 2 && !wireless ? null : draw.mac(),
      addresses,
      // only access points that report details report their radios' wifi
      wifi: wireless && plan.reporting ? wifiRecord(draw) : null,
    });
    radios.push({ ap: plan.index, iface: id, address });
  }
  return { interfaces, radios };
}

function wifiRecord(draw: Draws): Record<string, unknown> {
  return {
    wifi_ssid: draw.pick(SSIDS),
    wifi_bssid: draw.mac(),
    wifi_driver: "nl80211",
    wifi_hwmode: draw.pick(["802.11bgn", "802.11an", "802.11acn"]),
    wifi_mode: draw.pick(["master", "client", "adhoc"]),
    wifi_channel: draw.pick([1, 6, 11, 36, 108]),
    // numbers and numeric text alike, as firmware reports them
    wifi_freq: draw.pick([2412, "2437.000", 5180, "5.540"]),
    wifi_transmit_power: Math.floor(draw.rand() * 20),
    wifi_signal: -40 - Math.floor(draw.rand() * 50),
    wifi_noise: -95,
    wifi_bitrate: draw.pick([54, "130.0", 0]),
    wifi_crypt: "Plain",
    wifi_vaps_enabled: draw.rand() < 0.5,
  };
}

function accesspointRecord(plan: AccesspointPlan, interfaces: Record<string, unknown>[], draw: Draws): Record<string, unknown> {
  const positioned = draw.rand() < 0.9;
  return {
    main_ip: plan.main,
    main_ipv6: plan.v6,
    post_address: draw.rand() < 0.8 ? `${draw.pick(STREETS)} ${1 + Math.floor(draw.rand() * 90)}` : "",
    antenna: draw.pick(["", "integriert", "2x2 MIMO", "Sektor 120°"]),
    position: positioned
      ? {
          type: "Point",
          coordinates: [round6(plan.cluster.lon + (draw.rand() - 0.5) * 0.02), round6(plan.cluster.lat + (draw.rand() - 0.5) * 0.02)],
        }
      : null,
    owner: draw.pick(["Verein", "privat", "Stadtwerke"]),
    device_model: draw.pick(MODELS),
    lastseen_timestamp: plan.age < 0 ? null : ago(plan.age + draw.rand() * 60e6),
    ...(plan.reporting ? reportedDetails(plan, draw) : {}),
    site: plan.site,
    interfaces,
  };
}

/** What an access point that runs the reporting firmware says of its device and system. */
function reportedDetails(plan: AccesspointPlan, draw: Draws): Record<string, unknown> {
  const load = () => Math.round(draw.rand() * 300) / 100;
  return {
    device_board: draw.pick(["ath79", "ramips"]),
    device_architecture: "",
    device_cpu: "MIPS 24Kc V7.4",
    device_memory_available: 20000 + Math.floor(draw.rand() * 100000),
    device_memory_free: Math.floor(draw.rand() * 20000),
    system_kernel: "Linux 5.15.150",
    system_watchdog_enabled: draw.rand() < 0.7,
    system_uptime: Math.floor(draw.rand() * 1e7),
    system_load_1min: load(),
    system_load_5min: load(),
    system_load_15min: load(),
    firmware_release_name: "OpenWrt 23.05",
    firmware_install_timestamp: "2025-03-14",
    mesh_version: plan.version,
    mesh_id: `${1 + (plan.index >> 8)}.${plan.index & 255}`,
    olsrd_running: true,
    olsrd_main_ip: plan.main,
  };
}

/**
 * Links: each access point to one to three of the previous few in its cluster, each peer once (a
 * set, and only to earlier ones), so no two links join the same pair. Endpoints named by address
 * reach the intended interface because no address is held twice.
 */
function synthLinks(radios: readonly (readonly Radio[])[], draw: Draws): Record<string, unknown>[] {
  const links: Record<string, unknown>[] = [];
  for (let i = 1; i < radios.length; i++) {
    const peers = new Set<number>();
    for (let p = 1 + Math.floor(draw.rand() * 3); p > 0; p--)
      peers.add(Math.max(Math.floor(i / 40) * 40, i - 1 - Math.floor(draw.rand() * 6)));
    for (const j of peers) {
      if (j === i) continue;
      const a = draw.pick(radios[i]);
      const b = draw.pick(radios[j]);
      links.push(linkRecord(links.length + 1, a, b, draw));
    }
  }
  return links;
}

/** A link between two radios, each endpoint named by interface id or by address (half and half). */
function linkRecord(id: number, a: Radio, b: Radio, draw: Draws): Record<string, unknown> {
  const ref = (r: Radio) => (draw.rand() < 0.5 ? { interface: r.iface } : { address: r.address });
  return {
    id,
    timestamp: ago(draw.pick([60e6 * 2, 60e6 * 10, 86400e6 * 2, 86400e6 * 60])),
    endpoints: [
      { ...ref(a), quality: draw.quality() },
      { ...ref(b), quality: draw.quality() },
    ],
  };
}

/**
 * Writes the dump: access points as NDJSON files, links as JSON array files (or NDJSON with
 * `linksAs: "ndjson"`, for an all-NDJSON dump), `chunk` records each, and the marker that says the
 * folder is a dump this tool wrote. `dir` must be absent, empty or such a marked folder (anything
 * else, the current folder, its ancestors and the home folder are refused with a RefusedOutputError
 * before anything is written); the dump is written into a temporary sibling and swapped in.
 */
export async function writeSynthDump(dir: string, dump: SynthDump, chunk = 5000, linksAs: "json" | "ndjson" = "json"): Promise<void> {
  if (!Number.isInteger(chunk) || chunk < 1) throw new RangeError(`records per file must be a whole number from 1 on, not ${chunk}`);
  await assertReplaceable({ out: dir, option: "--out", kind: "dump" });
  await replaceFolder(dir, async (tmp) => {
    await mkdir(path.join(tmp, "accesspoints"));
    await mkdir(path.join(tmp, "links"));
    await writeFile(path.join(tmp, "network.json"), JSON.stringify(dump.network, null, 2) + "\n");
    for (let i = 0; i * chunk < Math.max(1, dump.accesspoints.length); i++) {
      const part = dump.accesspoints.slice(i * chunk, (i + 1) * chunk);
      await writeFile(
        path.join(tmp, "accesspoints", `part-${String(i).padStart(3, "0")}.ndjson`),
        part.map((r) => JSON.stringify(r) + "\n").join(""),
      );
    }
    for (let i = 0; i * chunk < Math.max(1, dump.links.length); i++) {
      const part = dump.links.slice(i * chunk, (i + 1) * chunk);
      const name = path.join(tmp, "links", `part-${String(i).padStart(3, "0")}.${linksAs}`);
      await writeFile(name, linksAs === "json" ? JSON.stringify(part, null, 1) + "\n" : part.map((r) => JSON.stringify(r) + "\n").join(""));
    }
    await writeMarker(tmp, "dump");
  });
}

/*
 * The address plan: each address belongs to one interface, whatever the size.
 * - Access point i's main address, on its interface 0 (netmask /16): the hosts .1-.254 of the /24s of
 *   10.0.0.0/8 from 10.1.0.1 on, in order; room for 16,581,120 access points.
 * - Its main IPv6 address, on interface 0 too (one in five access points): fd00:<i / 65536>::<i mod 65536>:1.
 * - Its interfaces 1 and 2 (whether it has them or not): /30 blocks 2i and 2i + 1, each interface the
 *   first host of its own block, taken from 172.16.0.0/12 and then from 100.64.0.0/10 (shared address
 *   space, as community networks use it); the blocks set SYNTH_MAX_APS.
 * The three never overlap: 10/8, 172.16/12 and 100.64/10 are disjoint.
 */
function mainIpv4(i: number): string {
  return `10.${1 + Math.floor(i / (254 * 256))}.${Math.floor(i / 254) % 256}.${(i % 254) + 1}`;
}

/** The first host of /30 block `block` of LAN_RANGES. */
function lanIpv4(block: number): string {
  for (const [first, blocks] of LAN_RANGES) {
    if (block < blocks) {
      const n = first + block * 4 + 1;
      return `${Math.floor(n / 2 ** 24)}.${Math.floor(n / 2 ** 16) % 256}.${Math.floor(n / 256) % 256}.${n % 256}`;
    }
    block -= blocks;
  }
  throw new RangeError(`no room for /30 block ${block} in the address plan`);
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

/** A small seeded PRNG (mulberry32): the same draws for the same seed. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
