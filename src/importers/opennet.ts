import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { Parser } from "htmlparser2";
import { ACCESSPOINT_FIELDS, WIFI_FIELDS } from "../core/fields.ts";
import { canonicalIp } from "../core/ip.ts";
import { NETWORK_FORMAT } from "../core/schema.ts";
import { assertReplaceable } from "../io/ownership.ts";
import { importTime, writeImportedDump } from "../io/write-dump.ts";
import { detectSites } from "./opennet-sites.ts";

/**
 * `import opennet`: a dump from the raw sources the original server (Geronimo,
 * github.com/opennet-initiative/api) was fed with, applied in its order on an empty network:
 *
 * 1. OLSR txtinfo (`MID` and `HNA`: access points and their further addresses; `Topology` and
 *    `Links`: links with the LQ/NLQ of each end, creating access points and interfaces for unknown
 *    addresses with a /16 prefix, as the original does);
 * 2. the wiki's node table (HTML): address, antenna, device, owner and position per node;
 * 3. ondataservice (SQLite, tables `nodes` and `ifaces`): device, firmware and system fields,
 *    interfaces with names, MAC addresses, addresses and wifi attributes.
 *
 * Interface, address and link ids are given in creation order, as the original's database does.
 * Then, with `sites: "detect"`, sites from the positions (opennet-sites.ts). The model is held in memory
 * and written as a dump only after it passes the dump's own checks.
 */

export class ImportOpennetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ImportOpennetError";
  }
}

interface Address {
  readonly id: number;
  readonly address: string;
  readonly prefix: number;
}

interface Iface {
  readonly id: number;
  readonly ap: Ap;
  if_name: string | null;
  if_hwaddress: string | null;
  addresses: Address[];
  wifi: Record<string, unknown> | null;
  deleted: boolean;
}

interface Ap {
  readonly main_ip: string;
  readonly fields: Record<string, unknown>;
  lastseen: boolean;
}

interface Link {
  readonly id: number;
  readonly ends: [Iface, Iface];
  readonly quality: [number, number];
}

/** The network as the original's database holds it while the sources are applied. */
export class OpennetModel {
  readonly aps = new Map<string, Ap>();
  readonly ifaces: Iface[] = [];
  readonly links: Link[] = [];
  private nextIface = 1;
  private nextAddress = 1;
  private nextLink = 1;

  ap(mainIp: string): Ap {
    let ap = this.aps.get(mainIp);
    if (ap === undefined) {
      ap = { main_ip: mainIp, fields: {}, lastseen: false };
      this.aps.set(mainIp, ap);
    }
    return ap;
  }

  newIface(ap: Ap): Iface {
    const iface: Iface = { id: this.nextIface++, ap, if_name: null, if_hwaddress: null, addresses: [], wifi: null, deleted: false };
    this.ifaces.push(iface);
    return iface;
  }

  addAddress(iface: Iface, address: string, prefix: number): Address {
    const a = { id: this.nextAddress++, address, prefix };
    iface.addresses.push(a);
    return a;
  }

  /** Live interfaces holding the address, lowest id first. */
  holding(address: string, ap?: Ap): Iface[] {
    return this.ifaces.filter((f) => !f.deleted && (ap === undefined || f.ap === ap) && f.addresses.some((a) => a.address === address));
  }

  /** The interface holding the address, else a new access point (or the existing one) with a new /16 interface. */
  ifaceFor(address: string): Iface {
    const found = this.holding(address)[0];
    if (found) return found;
    const iface = this.newIface(this.ap(address));
    this.addAddress(iface, address, OLSR_PREFIXLEN);
    return iface;
  }

  link(a: Iface, b: Iface, qa: number, qb: number): void {
    let link = this.links.find((l) => (l.ends[0] === a && l.ends[1] === b) || (l.ends[0] === b && l.ends[1] === a));
    if (link === undefined) {
      link = { id: this.nextLink++, ends: [a, b], quality: [0, 0] };
      this.links.push(link);
    }
    // each end takes its own quality, whichever order the link was made in
    if (link.ends[0] === a) link.quality[0] = qa;
    else link.quality[1] = qa;
    if (link.ends[1] === b) link.quality[1] = qb;
    else link.quality[0] = qb;
  }

  deleteIface(iface: Iface): void {
    iface.deleted = true;
    for (let i = this.links.length - 1; i >= 0; i--) if (this.links[i].ends.includes(iface)) this.links.splice(i, 1);
  }
}

// ---------------------------------------------------------------------------------------------------
// OLSR txtinfo

/** The prefix length the original gives the addresses it learns from OLSR. */
const OLSR_PREFIXLEN = 16;

const OLSR_COLUMNS = { links: 6, topology: 5, mid: 2, hna: 2 } as const;
type OlsrTable = keyof typeof OLSR_COLUMNS;

interface Row {
  readonly line: number;
  readonly cells: string[];
}

function located(file: string, line: number | undefined, message: string): ImportOpennetError {
  return new ImportOpennetError(`${file}${line === undefined ? "" : `:${line}`}: ${message}`);
}

/** The tables of a txtinfo text, each row with its line number; checks the tables the import reads. */
export function parseTxtinfo(text: string, file = "olsr.txt"): Record<OlsrTable, Row[]> {
  const tables: Partial<Record<OlsrTable, Row[]>> = {};
  const names = Object.keys(OLSR_COLUMNS) as OlsrTable[];
  const lines = text.split(/\r?\n/);
  let current: string | undefined;
  let header = false;
  lines.forEach((raw, i) => {
    const line = i + 1;
    if (header) {
      header = false;
      if (raw.trim() === "") throw located(file, line, `the table ${current} has no header line`);
      return;
    }
    if (raw.trim() === "") {
      current = undefined;
      return;
    }
    if (current === undefined) {
      const m = /^Table:\s*(\S.*?)\s*$/.exec(raw);
      if (!m)
        throw located(file, line, `expected a "Table: <name>" line, got ${JSON.stringify(raw.slice(0, 60))}; is this OLSR txtinfo output?`);
      current = m[1];
      const name = names.find((n) => n.toUpperCase() === current!.toUpperCase());
      if (name) tables[name] = [];
      header = true;
      return;
    }
    const name = names.find((n) => n.toUpperCase() === current!.toUpperCase());
    if (name === undefined) return;
    const cells = raw.trim().split(/\s+/);
    if (cells.length !== OLSR_COLUMNS[name])
      throw located(
        file,
        line,
        `a row of the table ${current} has ${cells.length} columns, expected ${OLSR_COLUMNS[name]}; is the file cut short?`,
      );
    tables[name]!.push({ line, cells });
  });
  for (const name of ["topology", "links"] as const) {
    if (tables[name] === undefined)
      throw located(file, undefined, `no table ${name === "links" ? "Links" : "Topology"}; is this OLSR txtinfo output (/all)?`);
  }
  return { links: tables.links!, topology: tables.topology!, mid: tables.mid ?? [], hna: tables.hna ?? [] };
}

function ipv4(file: string, row: Row, text: string): string {
  const ip = canonicalIp(text);
  if (ip?.family !== "inet") throw located(file, row.line, `not an IPv4 address: ${JSON.stringify(text)}`);
  return ip.address;
}

function quality(file: string, row: Row, text: string): number {
  const q = Number(text.replace("INFINITE", "Infinity"));
  if (!Number.isFinite(q) || q < 0 || q > 1) throw located(file, row.line, `not a link quality between 0 and 1: ${JSON.stringify(text)}`);
  return q;
}

/** Applies the txtinfo tables as the original does: MID and HNA first, then Topology and Links. */
export function applyOlsr(model: OpennetModel, text: string, file = "olsr.txt"): void {
  const t = parseTxtinfo(text, file);
  // HNA entries for single hosts in the mesh's private ranges count as further addresses of the gateway
  const mid: { row: Row; main: string; aliases: string[] }[] = t.mid.map((row) => ({
    row,
    main: ipv4(file, row, row.cells[0]),
    aliases: row.cells[1].split(";").map((a) => ipv4(file, row, a)),
  }));
  for (const row of t.hna) {
    const [hna, source] = row.cells;
    if (hna.endsWith("/32") && (hna.startsWith("192.168.") || hna.startsWith("10."))) {
      mid.push({ row, main: ipv4(file, row, source), aliases: [ipv4(file, row, hna.slice(0, -3))] });
    }
  }
  for (const { main, aliases } of mid) {
    let found: Iface | undefined;
    for (const iface of model.holding(main)) {
      if (iface.ap.main_ip !== main) model.deleteIface(iface);
      else found = iface;
    }
    let ap: Ap;
    if (found === undefined) {
      ap = model.ap(main);
      model.addAddress(model.newIface(ap), main, OLSR_PREFIXLEN);
    } else {
      ap = found.ap;
    }
    for (const alias of aliases) {
      if (model.holding(alias, ap).length === 0) model.addAddress(model.newIface(ap), alias, OLSR_PREFIXLEN);
    }
  }
  // Topology rows: destination, last hop, LQ, NLQ, cost; Links rows: local, remote, hysteresis, LQ, NLQ, cost
  const rows = [
    ...t.topology.map((row) => ({ row, dest: row.cells[0], hop: row.cells[1], lq: row.cells[2], nlq: row.cells[3] })),
    ...t.links.map((row) => ({ row, dest: row.cells[0], hop: row.cells[1], lq: row.cells[3], nlq: row.cells[4] })),
  ];
  for (const { row, dest, hop, lq, nlq } of rows) {
    const qualities = [quality(file, row, lq), quality(file, row, nlq)] as const;
    const hopIface = model.ifaceFor(ipv4(file, row, hop));
    const destIface = model.ifaceFor(ipv4(file, row, dest));
    model.link(hopIface, destIface, qualities[0], qualities[1]);
    hopIface.ap.lastseen = true;
    destIface.ap.lastseen = true;
  }
}

// ---------------------------------------------------------------------------------------------------
// The wiki's node table

const NODE_COLUMNS = ["main_ip", "lastseen", "post_address", "antenna", "device", "owner", "notes", "latlon"] as const;

export interface WikiNode {
  readonly main_ip: string;
  readonly post_address: string | null;
  readonly antenna: string | null;
  readonly device: string | null;
  readonly owner: string | null;
  readonly notes: string | null;
  readonly latlon: string | null;
}

/** The rows of every table of the page, each a list of cell texts (the text pieces of a cell, trimmed, joined by spaces). */
function tableRows(html: string): string[][] {
  const rows: string[][] = [];
  let row: string[] | undefined;
  let cell: string[] | undefined;
  let text = "";
  const flush = () => {
    const piece = text.trim();
    if (cell !== undefined && piece !== "") cell.push(piece);
    text = "";
  };
  const parser = new Parser(
    {
      onopentag(name) {
        flush();
        if (name === "tr") row = [];
        else if (name === "td") cell = [];
      },
      ontext(data) {
        text += data;
      },
      onclosetag(name) {
        flush();
        if (name === "td" && row !== undefined && cell !== undefined) {
          const joined = cell.join(" ").trim().replace(/\n+$/, "");
          row.push(joined.replaceAll(" , ", ", ").replaceAll("( ", "(").replaceAll(" )", ")"));
          cell = undefined;
        } else if (name === "tr" && row !== undefined) {
          rows.push(row);
          row = undefined;
        }
      },
    },
    { decodeEntities: true },
  );
  parser.write(html);
  parser.end();
  return rows;
}

/**
 * The node rows of the wiki page: rows of 8 cells (the access point table), without free slots and rows
 * with nothing but a name. The server table (7 cells) is not read: the original's sample import reads only
 * the access point table.
 */
export function parseWikiNodes(html: string, file = "wiki_nodes.html"): WikiNode[] {
  const rows = tableRows(html);
  const nodes: WikiNode[] = [];
  for (const cells of rows) {
    if (cells.length !== NODE_COLUMNS.length) continue;
    const c = Object.fromEntries(NODE_COLUMNS.map((k, i) => [k, cells[i]])) as Record<(typeof NODE_COLUMNS)[number], string>;
    if (c.post_address.toLowerCase() === "frei") continue;
    if (!NODE_COLUMNS.slice(2).some((k) => c[k].trim() !== "")) continue;
    nodes.push({
      main_ip: c.main_ip,
      post_address: c.post_address,
      antenna: c.antenna,
      device: c.device,
      owner: c.owner,
      notes: c.notes,
      latlon: c.latlon,
    });
  }
  if (nodes.length === 0)
    throw located(
      file,
      undefined,
      "no node table (a table of 8 columns: Nr., zuletzt gesehen, Standort, Antenne, Typ, Eigentümer, Kommentar, Position) on the page; is this the wiki's Opennet_Nodes page?",
    );
  return nodes;
}

/** A wiki node name (`AP1.89`, `AP89`, `AP2-5`) or address as an IPv4 address. */
export function parseNodeIp(text: string): string | undefined {
  if (text.toUpperCase().startsWith("AP")) {
    const parts = text.slice(2).replace(/[-_.]/g, " ").trim().split(/\s+/);
    if (!parts.every((p) => /^[+-]?\d+$/.test(p))) return undefined;
    const octets = parts.map(Number);
    if (octets.length === 1) octets.unshift(1);
    if (octets.length !== 2) return undefined;
    return canonicalIp(`192.168.${octets[0]}.${octets[1]}`)?.address;
  }
  const single = /^(.*)\/32$/.exec(text);
  const ip = canonicalIp(single ? single[1] : text);
  return ip?.family === "inet" ? ip.address : undefined;
}

function parseFloatPy(text: string): number | undefined {
  if (!/^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(text)) return undefined;
  return Number(text);
}

export function applyWiki(model: OpennetModel, html: string, file = "wiki_nodes.html"): string[] {
  const notes: string[] = [];
  for (const node of parseWikiNodes(html, file)) {
    const candidates = node.main_ip.split(/\s+/).filter((c) => c !== "");
    const ips = candidates.map((c) => {
      const ip = parseNodeIp(c);
      if (ip === undefined) throw located(file, undefined, `the node ${JSON.stringify(node.main_ip)} is neither an address nor an AP name`);
      return ip;
    });
    if (ips.length === 0) throw located(file, undefined, `a node row without a node name (${JSON.stringify(node.post_address)})`);
    const ap = model.ap(ips.find((ip) => model.aps.has(ip)) ?? ips[0]);
    ap.fields.post_address = node.post_address;
    ap.fields.antenna = node.antenna;
    ap.fields.device_model = node.device;
    ap.fields.owner = node.owner;
    if (node.latlon) {
      const parts = node.latlon.trim().split(/\s+/);
      const lat = parts.length === 2 ? parseFloatPy(parts[0].replaceAll("N", "+").replaceAll("S", "-")) : undefined;
      const lon = parts.length === 2 ? parseFloatPy(parts[1].replaceAll("E", "+").replaceAll("W", "-")) : undefined;
      if (lat === undefined || lon === undefined)
        notes.push(`${file}: the position of ${ap.main_ip} is not understood: ${JSON.stringify(node.latlon)}`);
      else if (lat && lon) ap.fields.position = { type: "Point", coordinates: [lon, lat] };
    }
  }
  return notes;
}

// ---------------------------------------------------------------------------------------------------
// ondataservice

interface SqlJsDatabase {
  exec(sql: string): { columns: string[]; values: unknown[][] }[];
  close(): void;
}
type InitSqlJs = () => Promise<{ Database: new (data: Uint8Array) => SqlJsDatabase }>;

const NODE_FIELDS: readonly [string, string][] = [
  ["sys_board", "device_board"],
  ["sys_os_arc", "device_architecture"],
  ["sys_cpu", "device_cpu"],
  ["sys_mem", "device_memory_available"],
  ["sys_free", "device_memory_free"],
  ["sys_ver", "system_kernel"],
  ["sys_watchdog", "system_watchdog_enabled"],
  ["sys_uptime", "system_uptime"],
  ["sys_os_type", "firmware_type"],
  ["sys_os_name", "firmware_release_name"],
  ["sys_os_rel", "firmware_release_version"],
  ["sys_os_ver", "firmware_build"],
  ["sys_os_insttime", "firmware_install_timestamp"],
  ["on_core_ver", "mesh_version"],
  ["on_core_insttime", "mesh_install_timestamp"],
  ["on_packages", "mesh_packages"],
  ["on_id", "mesh_id"],
  ["on_olsrd_status", "olsrd_running"],
  ["on_olsrd_mainip", "olsrd_main_ip"],
  ["on_wifidog_status", "mesh_captive_portal_enabled"],
  ["on_wifidog_id", "mesh_captive_portal_name"],
  ["on_vpn_cn", "mesh_certificate_cn"],
  ["on_vpn_status", "mesh_vpn_internet_enabled"],
  ["on_vpn_gw", "mesh_vpn_internet_connections"],
  ["on_vpn_autosearch", "mesh_vpn_internet_autosearch"],
  ["on_vpn_sort", "mesh_services_sorting"],
  ["on_vpn_gws", "mesh_vpn_internet_gateways"],
  ["on_vpn_blist", "mesh_vpn_internet_blacklist"],
  ["on_ugw_status", "mesh_service_relay_connected"],
  ["on_ugw_enabled", "mesh_service_relay_enabled"],
  ["on_ugw_tunnel", "mesh_vpn_mesh_connected"],
  ["on_ugw_connected", "mesh_vpn_mesh_connections"],
  ["on_ugw_presetips", "mesh_vpn_mesh_gateways"],
  ["on_ugw_presetnames", "mesh_vpn_mesh_gateway_names"],
];

const WIFI_COLUMNS: readonly [string, string][] = [
  ["wlan_essid", "wifi_ssid"],
  ["wlan_apmac", "wifi_bssid"],
  ["wlan_type", "wifi_driver"],
  ["wlan_channel", "wifi_channel"],
  ["wlan_crypt", "wifi_crypt"],
  ["wlan_freq", "wifi_freq"],
  ["wlan_hwmode", "wifi_hwmode"],
  ["wlan_mode", "wifi_mode"],
  ["wlan_txpower", "wifi_transmit_power"],
  ["wlan_signal", "wifi_signal"],
  ["wlan_noise", "wifi_noise"],
  ["wlan_bitrate", "wifi_bitrate"],
  ["wlan_vaps", "wifi_vaps_enabled"],
];

const INTEGER_FIELDS = new Set([
  "device_memory_available",
  "device_memory_free",
  "system_uptime",
  "wifi_channel",
  "wifi_transmit_power",
  "wifi_signal",
  "wifi_noise",
]);
const WIFI_MODES: Record<string, string> = {
  Master: "master",
  Managed: "client",
  Client: "client",
  "Ad-Hoc": "adhoc",
  AdHoc: "adhoc",
  Monitor: "monitor",
};
const WIFI_CRYPTS: Record<string, string> = {
  "WEP Open System (NONE)": "WEP",
  "WPA2 PSK (CCMP)": "WPA2-PSK",
  "mixed WPA/WPA2 PSK (TKIP)": "WPA2-PSK",
  "WPA PSK (CCMP)": "WPA-PSK",
  unknown: "Plain",
  open: "Plain",
  none: "Plain",
  None: "Plain",
  "": "Plain",
};

/** Python's str() of an SQLite value. */
const pyStr = (v: unknown): string =>
  v === null || v === undefined ? "None" : typeof v === "number" && Number.isInteger(v) ? String(v) : String(v);
const truthy = (v: unknown) => v !== null && v !== undefined && v !== "" && v !== 0;

/**
 * A MAC address as the original's importer (the version the recording shows) stores it: lower case, and
 * null when empty. Unlike the original, surrounding white space is dropped too (the sample has none).
 */
function mac(raw: unknown): string | null {
  if (raw === null || raw === undefined) return null;
  const s = String(raw).trim();
  return s === "" ? null : s.toLowerCase();
}

/** One ondataservice value for a field, by the original's rules; throws a message for a value it cannot take. */
function convert(field: string, raw: unknown): unknown {
  const s = pyStr(raw);
  if ((field === "wifi_bitrate" || field === "wifi_signal" || field === "wifi_noise") && raw === "unknown") return 0;
  if (
    ["wifi_signal", "wifi_noise", "wifi_freq", "wifi_channel", "device_memory_available", "device_memory_free"].includes(field) &&
    raw === ""
  )
    return 0;
  if ((field === "wifi_freq" || field === "wifi_channel") && s.includes("unknown")) return 0;
  if (field.endsWith("_timestamp")) {
    if (!truthy(raw)) return null;
    const seconds = Number(s);
    if (!Number.isInteger(seconds)) throw new Error(`not a Unix time: ${JSON.stringify(s)}`);
    return new Date(seconds * 1000).toISOString().slice(0, 10);
  }
  if (field === "system_uptime") {
    const m = /^(?:([0-9]+) days?,)? *([0-9]{1,2}):([0-9]{2})$/.exec(s);
    if (m) return 60 * (Number(m[3]) + 60 * (Number(m[2]) + 24 * Number(m[1] ?? 0)));
    if (!truthy(raw)) return null;
    const n = parseFloatPy(s);
    if (n === undefined) throw new Error(`not an uptime: ${JSON.stringify(s)}`);
    return Math.trunc(n);
  }
  // the original's importer (the version the recording shows) stores an empty release version as NULL,
  // unlike every other text field: the sample's two AirOS devices send sys_os_rel "" and show null
  if (field === "firmware_release_version") return truthy(raw) ? s : null;
  if (field === "mesh_services_sorting") return raw === "metric" ? "hop" : s;
  if (field === "wifi_mode") {
    const v = WIFI_MODES[s];
    if (v === undefined) throw new Error(`not a wifi mode: ${JSON.stringify(s)}`);
    return v;
  }
  if (field === "wifi_crypt") {
    const v = WIFI_CRYPTS[s.trim()];
    if (v === undefined) throw new Error(`not a wifi encryption: ${JSON.stringify(s)}`);
    return v;
  }
  if (field === "wifi_hwmode" && s.startsWith("802.11")) return "802.11" + [...s.slice(6)].sort().join("");
  if (field === "wifi_bssid") return mac(raw);
  if (field.endsWith("_enabled") || field.endsWith("_connected") || field.endsWith("_running")) return raw === "1" || raw === 1;
  if (INTEGER_FIELDS.has(field)) {
    const n = parseFloatPy(s);
    if (n === undefined || !Number.isInteger(n)) throw new Error(`not a whole number: ${JSON.stringify(s)}`);
    return n;
  }
  if (field === "wifi_freq" || field === "wifi_bitrate") {
    const n = parseFloatPy(s);
    if (n === undefined) throw new Error(`not a number: ${JSON.stringify(s)}`);
    // the original's decimal fields keep 3 (frequency, GHz) and 1 (bit rate, Mbit/s) fraction digits
    return n.toFixed(field === "wifi_freq" ? 3 : 1);
  }
  return s;
}

/** An `ip_addr` entry: address and prefix length, or undefined for link-local, loopback and multicast addresses. */
function ifaceAddress(text: string): { address: string; prefix: number } | "skip" | undefined {
  const [addr, prefixText, ...rest] = text.split("/");
  const ip = canonicalIp(addr);
  if (ip === undefined || rest.length > 0) return undefined;
  const max = ip.family === "inet" ? 32 : 128;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (!/^\d+$/.test(prefixText ?? "0") || prefix > max) return undefined;
  const a = ip.address;
  if (ip.family === "inet") {
    const [o1, o2] = a.split(".").map(Number);
    if ((o1 === 169 && o2 === 254) || o1 === 127 || (o1 >= 224 && o1 <= 239)) return "skip";
  } else if (/^fe[89ab]/i.test(a) || a === "::1" || /^ff/i.test(a)) {
    return "skip";
  }
  return { address: a, prefix };
}

function rowsOf(db: SqlJsDatabase, table: string): Record<string, unknown>[] {
  const [result] = db.exec(`SELECT * FROM ${table}`);
  if (result === undefined) return [];
  return result.values.map((v) => Object.fromEntries(result.columns.map((c, i) => [c, v[i]])));
}

export async function applyOndataservice(model: OpennetModel, bytes: Uint8Array, file = "ondataservice.db"): Promise<void> {
  if (Buffer.from(bytes.subarray(0, 16)).toString("latin1") !== "SQLite format 3\0")
    throw located(file, undefined, "not an SQLite database (it does not start with the SQLite header); give the ondataservice.db file");
  const initSqlJs = createRequire(import.meta.url)("sql.js") as InitSqlJs;
  const SQL = await initSqlJs();
  let db: SqlJsDatabase;
  let nodes: Record<string, unknown>[];
  let ifaces: Record<string, unknown>[];
  try {
    db = new SQL.Database(bytes);
  } catch (err) {
    throw located(file, undefined, `not a readable SQLite database: ${(err as Error).message}`);
  }
  try {
    nodes = rowsOf(db, "nodes");
    ifaces = rowsOf(db, "ifaces");
  } catch (err) {
    throw located(file, undefined, `not an ondataservice database (tables nodes and ifaces): ${(err as Error).message}`);
  } finally {
    db.close();
  }
  nodes.forEach((row, i) => {
    const where = `table nodes, row ${i + 1}`;
    // Firmware 0.4-5 named the column on_olsr_mainip; the original takes that name first when present.
    const mainIp = "on_olsr_mainip" in row ? row.on_olsr_mainip : row.on_olsrd_mainip;
    if (!truthy(mainIp)) return;
    const ip = canonicalIp(pyStr(mainIp));
    if (ip?.family !== "inet")
      throw located(file, undefined, `${where}: on_olsrd_mainip is not an IPv4 address: ${JSON.stringify(mainIp)}`);
    const ap = model.ap(ip.address);
    for (const [from, to] of NODE_FIELDS) {
      const value = from === "on_olsrd_mainip" ? mainIp : row[from];
      if (!(from in row) && from !== "on_olsrd_mainip") throw located(file, undefined, `${where}: no column ${from}`);
      try {
        ap.fields[to] = convert(to, value);
      } catch (err) {
        throw located(file, undefined, `${where} (${ip.address}), ${from}: ${(err as Error).message}`);
      }
    }
    // Newer firmware reports the IPv6 main address; older databases lack the column (the original: empty, stored as null).
    if (truthy(row.on_ipv6_mainip)) {
      const v6 = canonicalIp(pyStr(row.on_ipv6_mainip).trim());
      if (v6?.family !== "inet6")
        throw located(
          file,
          undefined,
          `${where} (${ip.address}), on_ipv6_mainip: not an IPv6 address: ${JSON.stringify(row.on_ipv6_mainip)}`,
        );
      ap.fields.main_ipv6 = v6.address;
    }
    if (truthy(row.sys_load)) {
      pyStr(row.sys_load)
        .trim()
        .split(/\s+/)
        .slice(0, 3)
        .forEach((v, k) => {
          const n = parseFloatPy(v.replace(/^,+|,+$/g, ""));
          if (n === undefined) throw located(file, undefined, `${where} (${ip.address}), sys_load: not a load: ${JSON.stringify(v)}`);
          ap.fields[`system_load_${[1, 5, 15][k]}min`] = n;
        });
    }
  });
  ifaces.forEach((row, i) => {
    const where = `table ifaces, row ${i + 1}`;
    const addresses: { address: string; prefix: number }[] = [];
    for (const text of pyStr(row.ip_addr ?? "")
      .trim()
      .split(/\s+/)
      .filter((t) => t !== "")) {
      const a = ifaceAddress(text);
      if (a === undefined) throw located(file, undefined, `${where}, ip_addr: not an address: ${JSON.stringify(text)}`);
      if (a !== "skip") addresses.push(a);
    }
    if (addresses.length === 0) return;
    const ap = model.aps.get(canonicalIp(pyStr(row.mainip))?.address ?? "");
    if (ap === undefined) return; // the original makes no interfaces for access points it does not know
    const matching = new Set<Iface>();
    for (const a of addresses) {
      const f = model.holding(a.address, ap)[0];
      if (f) matching.add(f);
    }
    let iface: Iface;
    if (matching.size === 0) iface = model.newIface(ap);
    else
      iface = [...matching].sort((x, y) => {
        const kx = x.if_name !== row.if_name ? 1 : 0;
        const ky = y.if_name !== row.if_name ? 1 : 0;
        return kx - ky || (x.if_name ?? "").localeCompare(y.if_name ?? "") || x.id - y.id;
      })[0];
    const kept: Address[] = [];
    for (const a of addresses) {
      const existing = iface.addresses.find((x) => x.address === a.address) ?? kept.find((x) => x.address === a.address);
      if (existing) {
        if (!kept.includes(existing)) kept.push(existing);
      } else {
        kept.push({ id: 0, ...a });
      }
    }
    // new addresses get their ids in order, after the old ones are kept or dropped
    iface.addresses = kept.map((a) => (a.id === 0 ? { ...a, id: 0 } : a));
    const fresh = iface.addresses.filter((a) => a.id === 0);
    iface.addresses = iface.addresses.filter((a) => a.id !== 0);
    for (const a of fresh) model.addAddress(iface, a.address, a.prefix);
    iface.if_name = pyStr(row.if_name);
    iface.if_hwaddress = mac(row.if_hwaddr);
    if (truthy(row.wlan_essid)) {
      const wifi: Record<string, unknown> = iface.wifi ?? Object.fromEntries(WIFI_FIELDS.map(([n]) => [n, null]));
      for (const [from, to] of WIFI_COLUMNS) {
        try {
          wifi[to] = convert(to, row[from]);
        } catch (err) {
          throw located(file, undefined, `${where} (${pyStr(row.mainip)} ${pyStr(row.if_name)}), ${from}: ${(err as Error).message}`);
        }
      }
      iface.wifi = wifi;
    } else {
      iface.wifi = null;
    }
  });
}

// ---------------------------------------------------------------------------------------------------
// The dump

export interface OpennetSources {
  readonly olsr: string;
  readonly wiki?: string;
  readonly ondataservice?: string;
}

export interface OpennetRecords {
  readonly network: { format: string; name: string | null; taken_at: string };
  readonly accesspoints: Record<string, unknown>[];
  readonly links: Record<string, unknown>[];
  readonly notes: string[];
}

const AP_FIELD_NAMES = ACCESSPOINT_FIELDS.map(([name]) => name);

/** Dump records from the model; lastseen and link timestamps are the import's instant. */
export function modelToDump(
  model: OpennetModel,
  takenAt: string,
  notes: string[] = [],
  sites?: ReadonlyMap<string, number>,
): OpennetRecords {
  const accesspoints = [...model.aps.values()].map((ap) => {
    const out: Record<string, unknown> = { main_ip: ap.main_ip, main_ipv6: ap.fields.main_ipv6 ?? null };
    for (const name of AP_FIELD_NAMES) out[name] = ap.fields[name] ?? null;
    if (ap.fields.firmware_type === undefined) out.firmware_type = "OpenWrt";
    if (ap.fields.mesh_services_sorting === undefined) out.mesh_services_sorting = "manual";
    out.lastseen_timestamp = ap.lastseen ? takenAt : null;
    out.site = sites?.get(ap.main_ip) ?? null;
    out.interfaces = model.ifaces
      .filter((f) => f.ap === ap && !f.deleted)
      .map((f) => ({
        id: f.id,
        if_name: f.if_name,
        if_hwaddress: f.if_hwaddress,
        addresses: f.addresses.map((a) => ({ id: a.id, address: a.address, netmask_prefixlen: a.prefix })),
        wifi: f.wifi,
      }));
    return out;
  });
  const links = model.links.map((l) => ({
    id: l.id,
    timestamp: takenAt,
    endpoints: [
      { interface: l.ends[0].id, quality: l.quality[0] },
      { interface: l.ends[1].id, quality: l.quality[1] },
    ],
  }));
  return { network: { format: NETWORK_FORMAT, name: null, taken_at: takenAt }, accesspoints, links, notes };
}

export interface ImportOpennetOptions {
  readonly olsr: string;
  readonly wiki?: string;
  readonly ondataservice?: string;
  /** `detect`: sites by the original's rules (opennet-sites.ts); `none` (default): every `site` null */
  readonly sites?: "none" | "detect";
  /** `taken_at`, `lastseen_timestamp` and link `timestamp`; the time of the import when absent */
  readonly at?: string;
  readonly warn?: (line: string) => void;
  readonly cwd?: string;
  readonly home?: string;
}

export interface ImportOpennetResult {
  readonly accesspoints: number;
  readonly interfaces: number;
  readonly links: number;
  readonly takenAt: string;
  /** how many sites were detected (0 without --sites detect) */
  readonly sites: number;
}

async function read(file: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (err) {
    throw new ImportOpennetError(`${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

/** Reads the sources, applies them in the original's order, checks the records and writes the dump. */
export async function importOpennet(out: string, options: ImportOpennetOptions): Promise<ImportOpennetResult> {
  const takenAt = importTime(options.at, (message) => new ImportOpennetError(message));
  await assertReplaceable({ out, option: "--out", kind: "dump", cwd: options.cwd, home: options.home });
  const model = new OpennetModel();
  const notes: string[] = [];
  applyOlsr(model, (await read(options.olsr)).toString("utf8"), options.olsr);
  if (options.wiki !== undefined) notes.push(...applyWiki(model, (await read(options.wiki)).toString("utf8"), options.wiki));
  if (options.ondataservice !== undefined) await applyOndataservice(model, await read(options.ondataservice), options.ondataservice);
  const sites =
    options.sites === "detect"
      ? detectSites(
          [...model.aps.values()].map((ap) => ({
            main_ip: ap.main_ip,
            coordinates: (ap.fields.position as { coordinates: [number, number] } | undefined)?.coordinates ?? null,
          })),
        )
      : undefined;
  const records = modelToDump(model, takenAt, notes, sites);
  const counts = await writeImportedDump(out, records, {
    sources: { accesspoints: "accesspoints", links: "links" },
    verdict: "the sources do not make a valid dump",
    error: (message) => new ImportOpennetError(message),
    warn: options.warn,
  });
  return {
    ...counts,
    takenAt,
    sites: new Set(sites?.values()).size,
  };
}
