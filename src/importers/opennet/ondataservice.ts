import { createRequire } from "node:module";
import { WIFI_FIELDS } from "../../core/fields.ts";
import { canonicalIp } from "../../core/ip.ts";
import { mac, NODE_FIELDS, parseFloatPy, pyStr, truthy, WIFI_COLUMNS } from "./convert.ts";
import { located } from "./error.ts";
import type { Address, Iface, OpennetModel } from "./model.ts";

/** The third source, the ondataservice SQLite database: what the nodes report of themselves (device, firmware, interfaces, wifi). */

interface SqlJsDatabase {
  exec(sql: string): { columns: string[]; values: unknown[][] }[];
  close(): void;
}
type InitSqlJs = () => Promise<{ Database: new (data: Uint8Array) => SqlJsDatabase }>;

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
    for (const [from, to, rule] of NODE_FIELDS) {
      const value = from === "on_olsrd_mainip" ? mainIp : row[from];
      if (!(from in row) && from !== "on_olsrd_mainip") throw located(file, undefined, `${where}: no column ${from}`);
      try {
        ap.fields[to] = rule(value);
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
    // addresses already held keep their ids; new ones get ids in their order, after the old ones are kept or dropped
    const kept: Address[] = [];
    const fresh: { address: string; prefix: number }[] = [];
    for (const a of addresses) {
      const existing = iface.addresses.find((x) => x.address === a.address);
      if (existing) {
        if (!kept.includes(existing)) kept.push(existing);
      } else if (!fresh.some((x) => x.address === a.address)) {
        fresh.push(a);
      }
    }
    model.setAddresses(iface, kept, fresh);
    iface.if_name = pyStr(row.if_name);
    iface.if_hwaddress = mac(row.if_hwaddr);
    if (truthy(row.wlan_essid)) {
      const wifi: Record<string, unknown> = iface.wifi ?? Object.fromEntries(WIFI_FIELDS.map(([n]) => [n, null]));
      for (const [from, to, rule] of WIFI_COLUMNS) {
        try {
          wifi[to] = rule(row[from]);
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
