import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { NETWORK_FORMAT } from "../core/schema.ts";
import { formatMicros } from "../core/timestamp.ts";

/**
 * A synthetic but realistic mesh network in the dump format, deterministic for a seed: clustered
 * positions, 1-3 interfaces per access point, some IPv6, wifi attributes on radios, a mix of firmware
 * versions and of online, flapping and offline nodes, links between neighbours referenced by interface
 * id or by address, and sites of 4-7 members. Used for the sample data, the tests and the benchmark.
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

export function synthesize(options: SynthOptions): SynthDump {
  const rand = mulberry32(options.seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(rand() * items.length)];
  const hex = (n: number) => Array.from({ length: n }, () => Math.floor(rand() * 16).toString(16)).join("");
  const mac = () => {
    const text = Array.from({ length: 6 }, () => hex(2)).join(":");
    return rand() < 0.3 ? text.toUpperCase() : text;
  };
  const quality = () => Math.round((0.05 + rand() * 0.95) * 1000) / 1000;
  const at = (ageMicros: number) => formatMicros(Math.round(TAKEN_AT - ageMicros));

  const accesspoints: Record<string, unknown>[] = [];
  const links: Record<string, unknown>[] = [];
  const radios: { ap: number; iface: number; address: string }[][] = [];
  let ifaceId = 0;
  let addressId = 0;
  let siteId = 0;
  let siteLeft = 0;
  let cluster = { lon: 7.62, lat: 51.96 };
  for (let i = 0; i < options.aps; i++) {
    if (i % 40 === 0) cluster = { lon: 6.5 + rand() * 2.5, lat: 51.2 + rand() * 1.5 };
    const main = ipv4(i);
    const v6 = rand() < 0.2 ? `fd00:${(i >> 16).toString(16)}::${(i & 0xffff).toString(16)}:1` : null;
    if (siteLeft === 0 && rand() < 0.15) [siteId, siteLeft] = [siteId + 1, 4 + Math.floor(rand() * 4)];
    const site = siteLeft > 0 ? siteId : null;
    if (siteLeft > 0) siteLeft--;
    const age = pick([60e6 * 3, 60e6 * 12, 3600e6 * 20, 86400e6 * 4, 86400e6 * 90, -1]);
    const reporting = rand() < 0.6;
    const version = reporting ? pick(VERSIONS) : null;
    const interfaces: Record<string, unknown>[] = [];
    const apRadios: { ap: number; iface: number; address: string }[] = [];
    const count = 1 + Math.floor(rand() * 3);
    for (let k = 0; k < count; k++) {
      const wireless = k === 0 || rand() < 0.4;
      const address = k === 0 ? main : `172.${16 + (i >> 16)}.${(i >> 8) & 255}.${((i & 255) * 3 + k) % 254 + 1}`;
      const addresses = [{ id: ++addressId, address, netmask_prefixlen: k === 0 ? 16 : 24 }];
      if (k === 0 && v6) addresses.push({ id: ++addressId, address: v6, netmask_prefixlen: 64 });
      const id = ++ifaceId;
      interfaces.push({
        id,
        if_name: wireless ? `wlan${k}` : k === 1 ? "eth0" : `tap${k}`,
        if_hwaddress: k === 2 && !wireless ? null : mac(),
        addresses,
        wifi: wireless && reporting
          ? {
              wifi_ssid: pick(SSIDS),
              wifi_bssid: mac(),
              wifi_driver: "nl80211",
              wifi_hwmode: pick(["802.11bgn", "802.11an", "802.11acn"]),
              wifi_mode: pick(["master", "client", "adhoc"]),
              wifi_channel: pick([1, 6, 11, 36, 108]),
              wifi_freq: pick([2412, "2437.000", 5180, "5.540"]),
              wifi_transmit_power: Math.floor(rand() * 20),
              wifi_signal: -40 - Math.floor(rand() * 50),
              wifi_noise: -95,
              wifi_bitrate: pick([54, "130.0", 0]),
              wifi_crypt: "Plain",
              wifi_vaps_enabled: rand() < 0.5,
            }
          : null,
      });
      apRadios.push({ ap: i, iface: id, address });
    }
    radios.push(apRadios);
    const positioned = rand() < 0.9;
    const load = () => Math.round(rand() * 300) / 100;
    accesspoints.push({
      main_ip: main,
      main_ipv6: v6,
      post_address: rand() < 0.8 ? `${pick(STREETS)} ${1 + Math.floor(rand() * 90)}` : "",
      antenna: pick(["", "integriert", "2x2 MIMO", "Sektor 120°"]),
      position: positioned
        ? { type: "Point", coordinates: [round6(cluster.lon + (rand() - 0.5) * 0.02), round6(cluster.lat + (rand() - 0.5) * 0.02)] }
        : null,
      owner: pick(["Verein", "privat", "Stadtwerke"]),
      device_model: pick(MODELS),
      lastseen_timestamp: age < 0 ? null : at(age + rand() * 60e6),
      ...(reporting
        ? {
            device_board: pick(["ath79", "ramips"]),
            device_architecture: "",
            device_cpu: "MIPS 24Kc V7.4",
            device_memory_available: 20000 + Math.floor(rand() * 100000),
            device_memory_free: Math.floor(rand() * 20000),
            system_kernel: "Linux 5.15.150",
            system_watchdog_enabled: rand() < 0.7,
            system_uptime: Math.floor(rand() * 1e7),
            system_load_1min: load(),
            system_load_5min: load(),
            system_load_15min: load(),
            firmware_release_name: "OpenWrt 23.05",
            firmware_install_timestamp: "2025-03-14",
            mesh_version: version,
            mesh_id: `${1 + (i >> 8)}.${i & 255}`,
            olsrd_running: true,
            olsrd_main_ip: main,
          }
        : {}),
      site,
      interfaces,
    });
  }
  // Links: each access point to one or two of the previous few in its cluster.
  let linkId = 0;
  for (let i = 1; i < radios.length; i++) {
    const peers = new Set<number>();
    for (let p = 1 + Math.floor(rand() * 3); p > 0; p--) peers.add(Math.max(Math.floor(i / 40) * 40, i - 1 - Math.floor(rand() * 6)));
    for (const j of peers) {
      if (j === i) continue;
      const a = pick(radios[i]);
      const b = pick(radios[j]);
      const ref = (r: { iface: number; address: string }) => (rand() < 0.5 ? { interface: r.iface } : { address: r.address });
      links.push({
        id: ++linkId,
        timestamp: at(pick([60e6 * 2, 60e6 * 10, 86400e6 * 2, 86400e6 * 60])),
        endpoints: [
          { ...ref(a), quality: quality() },
          { ...ref(b), quality: quality() },
        ],
      });
    }
  }
  return {
    network: { format: NETWORK_FORMAT, name: `synthetic mesh (${options.aps} access points, seed ${options.seed})`, taken_at: formatMicros(TAKEN_AT) },
    accesspoints,
    links,
  };
}

/**
 * Writes the dump: access points as NDJSON files, links as JSON array files (or NDJSON with
 * `linksAs: "ndjson"`, for an all-NDJSON dump), `chunk` records each.
 */
export async function writeSynthDump(dir: string, dump: SynthDump, chunk = 5000, linksAs: "json" | "ndjson" = "json"): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(path.join(dir, "accesspoints"), { recursive: true });
  await mkdir(path.join(dir, "links"), { recursive: true });
  await writeFile(path.join(dir, "network.json"), JSON.stringify(dump.network, null, 2) + "\n");
  for (let i = 0; i * chunk < Math.max(1, dump.accesspoints.length); i++) {
    const part = dump.accesspoints.slice(i * chunk, (i + 1) * chunk);
    await writeFile(path.join(dir, "accesspoints", `part-${String(i).padStart(3, "0")}.ndjson`), part.map((r) => JSON.stringify(r) + "\n").join(""));
  }
  for (let i = 0; i * chunk < Math.max(1, dump.links.length); i++) {
    const part = dump.links.slice(i * chunk, (i + 1) * chunk);
    const name = path.join(dir, "links", `part-${String(i).padStart(3, "0")}.${linksAs}`);
    await writeFile(name, linksAs === "json" ? JSON.stringify(part, null, 1) + "\n" : part.map((r) => JSON.stringify(r) + "\n").join(""));
  }
}

function ipv4(i: number): string {
  return `10.${1 + Math.floor(i / (254 * 256))}.${Math.floor(i / 254) % 256}.${(i % 254) + 1}`;
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
