import { createRequire } from "node:module";
import { WIFI_FIELDS } from "../../core/model/fields.ts";
import { canonicalIp } from "../../core/values/ip.ts";
import { mac, NODE_FIELDS, parseFloatPy, pyStr, truthy, WIFI_COLUMNS } from "./convert.ts";
import { located } from "./error.ts";
import type { Address, Ap, Iface, OpennetModel } from "./opennet-model.ts";

/** The third source, the ondataservice SQLite database: what the nodes report of themselves (device, firmware, interfaces, wifi). */

interface SqlJsDatabase {
  exec(sql: string): { columns: string[]; values: unknown[][] }[];
  close(): void;
}
type InitSqlJs = () => Promise<{ Database: new (data: Uint8Array) => SqlJsDatabase }>;

type Row = Record<string, unknown>;

/** An address of an interface as ifaces.ip_addr gives it, with its prefix length. */
interface IfaceAddress {
  readonly address: string;
  readonly prefix: number;
}

function ifaceAddress(text: string): IfaceAddress | "skip" | undefined {
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

function rowsOf(db: SqlJsDatabase, table: string): Row[] {
  const [result] = db.exec(`SELECT * FROM ${table}`);
  if (result === undefined) return [];
  return result.values.map((v) => Object.fromEntries(result.columns.map((c, i) => [c, v[i]])));
}

/** Makes the error for a problem of the database, named as the file given. */
type Locate = (message: string) => Error;

export async function applyOndataservice(model: OpennetModel, bytes: Uint8Array, file = "ondataservice.db"): Promise<void> {
  const locate: Locate = (message) => located(file, undefined, message);
  const { nodes, ifaces } = await readTables(bytes, locate);
  // the original's order: every node's own fields first, then the interfaces, which look the nodes up
  nodes.forEach((row, i) => applyNode(model, row, `table nodes, row ${i + 1}`, locate));
  ifaces.forEach((row, i) => applyIface(model, row, `table ifaces, row ${i + 1}`, locate));
}

/** The rows of the tables nodes and ifaces; a file that is no SQLite database, or lacks them, is refused with an error that says which. */
async function readTables(bytes: Uint8Array, locate: Locate): Promise<{ nodes: Row[]; ifaces: Row[] }> {
  if (Buffer.from(bytes.subarray(0, 16)).toString("latin1") !== "SQLite format 3\0")
    throw locate("not an SQLite database (it does not start with the SQLite header); give the ondataservice.db file");
  const initSqlJs = createRequire(import.meta.url)("sql.js") as InitSqlJs;
  const SQL = await initSqlJs();
  let db: SqlJsDatabase;
  try {
    db = new SQL.Database(bytes);
  } catch (err) {
    throw locate(`not a readable SQLite database: ${(err as Error).message}`);
  }
  try {
    const nodes = rowsOf(db, "nodes");
    return { nodes, ifaces: rowsOf(db, "ifaces") };
  } catch (err) {
    throw locate(`not an ondataservice database (tables nodes and ifaces): ${(err as Error).message}`);
  } finally {
    db.close();
  }
}

/** A node's report of itself: the fields of the access point of its main address (made when the sources before did not name it). */
function applyNode(model: OpennetModel, row: Row, where: string, locate: Locate): void {
  // Firmware 0.4-5 named the column on_olsr_mainip; the original takes that name first when present.
  const mainIp = "on_olsr_mainip" in row ? row.on_olsr_mainip : row.on_olsrd_mainip;
  if (!truthy(mainIp)) return;
  const ip = canonicalIp(pyStr(mainIp));
  if (ip?.family !== "inet") throw locate(`${where}: on_olsrd_mainip is not an IPv4 address: ${JSON.stringify(mainIp)}`);
  const ap = model.ap(ip.address);
  setNodeFields(ap, row, mainIp, where, ip.address, locate);
  // Newer firmware reports the IPv6 main address; older databases lack the column (the original: empty, stored as null).
  if (truthy(row.on_ipv6_mainip)) ap.fields.main_ipv6 = mainIpv6Of(row.on_ipv6_mainip, `${where} (${ip.address})`, locate);
  if (truthy(row.sys_load)) setLoads(ap, row.sys_load, `${where} (${ip.address})`, locate);
}

/** The columns of NODE_FIELDS, each by its rule; the main address as the row names it, whichever column that was. */
function setNodeFields(ap: Ap, row: Row, mainIp: unknown, where: string, address: string, locate: Locate): void {
  for (const [from, to, rule] of NODE_FIELDS) {
    const value = from === "on_olsrd_mainip" ? mainIp : row[from];
    if (!(from in row) && from !== "on_olsrd_mainip") throw locate(`${where}: no column ${from}`);
    try {
      ap.fields[to] = rule(value);
    } catch (err) {
      throw locate(`${where} (${address}), ${from}: ${(err as Error).message}`);
    }
  }
}

function mainIpv6Of(raw: unknown, where: string, locate: Locate): string {
  const v6 = canonicalIp(pyStr(raw).trim());
  if (v6?.family !== "inet6") throw locate(`${where}, on_ipv6_mainip: not an IPv6 address: ${JSON.stringify(raw)}`);
  return v6.address;
}

/** The loads of 1, 5 and 15 minutes: the first three words of sys_load, commas around each dropped. */
function setLoads(ap: Ap, sysLoad: unknown, where: string, locate: Locate): void {
  pyStr(sysLoad)
    .trim()
    .split(/\s+/)
    .slice(0, 3)
    .forEach((v, k) => {
      const n = parseFloatPy(v.replace(/^,+|,+$/g, ""));
      if (n === undefined) throw locate(`${where}, sys_load: not a load: ${JSON.stringify(v)}`);
      ap.fields[`system_load_${[1, 5, 15][k]}min`] = n;
    });
}

/** An interface's report: its addresses, name, hardware address and wifi, on the interface of a known access point that holds them. */
function applyIface(model: OpennetModel, row: Row, where: string, locate: Locate): void {
  const addresses = ifaceAddresses(row.ip_addr, where, locate);
  if (addresses.length === 0) return;
  const ap = model.aps.get(canonicalIp(pyStr(row.mainip))?.address ?? "");
  if (ap === undefined) return; // the original makes no interfaces for access points it does not know
  const iface = ifaceOf(model, ap, addresses, row.if_name);
  setIfaceAddresses(model, iface, addresses);
  iface.if_name = pyStr(row.if_name);
  iface.if_hwaddress = mac(row.if_hwaddr);
  iface.wifi = truthy(row.wlan_essid) ? wifiOf(iface.wifi, row, where, locate) : null;
}

/** The addresses of ifaces.ip_addr, without link-local, loopback and multicast ones. */
function ifaceAddresses(ipAddr: unknown, where: string, locate: Locate): IfaceAddress[] {
  const addresses: IfaceAddress[] = [];
  for (const text of pyStr(ipAddr ?? "")
    .trim()
    .split(/\s+/)
    .filter((t) => t !== "")) {
    const a = ifaceAddress(text);
    if (a === undefined) throw locate(`${where}, ip_addr: not an address: ${JSON.stringify(text)}`);
    if (a !== "skip") addresses.push(a);
  }
  return addresses;
}

/**
 * The access point's interface the row updates: of those holding one of its addresses, the one of the
 * row's name, else the first by name and id; a new one when none holds any.
 */
function ifaceOf(model: OpennetModel, ap: Ap, addresses: readonly IfaceAddress[], ifName: unknown): Iface {
  const matching = new Set<Iface>();
  for (const a of addresses) {
    const f = model.holding(a.address, ap)[0];
    if (f) matching.add(f);
  }
  if (matching.size === 0) return model.newIface(ap);
  return [...matching].sort((x, y) => {
    const kx = x.if_name !== ifName ? 1 : 0;
    const ky = y.if_name !== ifName ? 1 : 0;
    return kx - ky || (x.if_name ?? "").localeCompare(y.if_name ?? "") || x.id - y.id;
  })[0];
}

/** Addresses already held keep their ids; new ones get ids in their order, after the old ones are kept or dropped. */
function setIfaceAddresses(model: OpennetModel, iface: Iface, addresses: readonly IfaceAddress[]): void {
  const kept: Address[] = [];
  const fresh: IfaceAddress[] = [];
  for (const a of addresses) {
    const existing = iface.addresses.find((x) => x.address === a.address);
    if (existing) {
      if (!kept.includes(existing)) kept.push(existing);
    } else if (!fresh.some((x) => x.address === a.address)) {
      fresh.push(a);
    }
  }
  model.setAddresses(iface, kept, fresh);
}

/** The wifi columns, each by its rule, over the interface's wifi fields (all of them null when it had none). */
function wifiOf(wifi: Record<string, unknown> | null, row: Row, where: string, locate: Locate): Record<string, unknown> {
  const fields: Record<string, unknown> = wifi ?? Object.fromEntries(WIFI_FIELDS.map(([n]) => [n, null]));
  for (const [from, to, rule] of WIFI_COLUMNS) {
    try {
      fields[to] = rule(row[from]);
    } catch (err) {
      throw locate(`${where} (${pyStr(row.mainip)} ${pyStr(row.if_name)}), ${from}: ${(err as Error).message}`);
    }
  }
  return fields;
}
