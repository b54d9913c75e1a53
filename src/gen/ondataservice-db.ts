import { createRequire } from "node:module";
import { STEP_SECONDS, assertStep, unit } from "./raw.ts";
import type { SynthDump } from "./synth.ts";

/**
 * The ondataservice database of a synthetic network (synth.ts): the SQLite file the routers' data
 * service fills, with the tables `nodes` and `ifaces` the Opennet importer reads
 * (importers/opennet/ondataservice.ts). Its columns are the firmware's (those of the original's
 * sample database, and `on_ipv6_mainip` of newer firmware); values are written as the firmware
 * sends them, so that the importer's rules turn them back into the dump's fields: wifi modes in the
 * firmware's words, frequencies in GHz, switches as 1 and 0, times as Unix seconds.
 *
 * Only the access points that report (those of the dump with device fields, about 60%) are in it, as
 * only routers that run the service are. Uptimes and the service's own clocks move on with `step`,
 * so a cycle that imports the database when it changed sees a new one at each step.
 */

type Value = string | number;
type Column = readonly [name: string, type: "text" | "int" | "bool"];

const text = (names: string) => names.split(" ").map((n): Column => [n, "text"]);
const int = (names: string) => names.split(" ").map((n): Column => [n, "int"]);
const bool = (names: string) => names.split(" ").map((n): Column => [n, "bool"]);

const NODE_COLUMNS: readonly Column[] = [
  ...text("originator mainip sys_ver sys_board sys_cpu"),
  ...int("sys_mem"),
  ...text("sys_uptime sys_load"),
  ...int("sys_free"),
  ...bool("sys_watchdog"),
  ...text("sys_os_type sys_os_name sys_os_rel sys_os_ver sys_os_arc"),
  ...int("sys_os_insttime"),
  ...text("on_core_ver"),
  ...int("on_core_insttime"),
  ...text("on_packages on_id on_olsrd_status on_olsrd_mainip"),
  ...bool("on_wifidog_status"),
  ...text("on_wifidog_id on_vpn_cn"),
  ...bool("on_vpn_status"),
  ...text("on_vpn_gw"),
  ...bool("on_vpn_autosearch"),
  ...text("on_vpn_sort on_vpn_gws on_vpn_blist"),
  ...bool("on_ugw_status on_ugw_enabled on_ugw_possible on_ugw_tunnel"),
  ...text("on_ugw_connected on_ugw_presetips on_ugw_presetnames on_old_autoadapttxpwr on_old_remoteconf on_ipv6_mainip db_time"),
  ...int("db_epoch"),
  ...text("db_ver"),
  ...int("db_update"),
];

const IFACE_COLUMNS: readonly Column[] = [
  ...text("originator mainip if_name if_type_bridge"),
  ...bool("if_type_bridgedif"),
  ...text("if_hwaddr ip_label ip_addr ip_broadcast on_networks on_zones"),
  ...bool("on_olsr"),
  ...text("dhcp_start dhcp_limit dhcp_leasetime dhcp_fwd"),
  ...int(
    "ifstat_collisions ifstat_rx_compressed ifstat_rx_errors ifstat_rx_length_errors ifstat_rx_packets " +
      "ifstat_tx_carrier_errors ifstat_tx_errors ifstat_tx_packets ifstat_multicast ifstat_rx_crc_errors " +
      "ifstat_rx_fifo_errors ifstat_rx_missed_errors ifstat_tx_aborted_errors ifstat_tx_compressed " +
      "ifstat_tx_fifo_errors ifstat_tx_window_errors ifstat_rx_bytes ifstat_rx_dropped ifstat_rx_frame_errors " +
      "ifstat_rx_over_errors ifstat_tx_bytes ifstat_tx_dropped ifstat_tx_heartbeat_errors",
  ),
  ...text("wlan_essid wlan_apmac wlan_type wlan_hwmode wlan_mode wlan_channel wlan_freq wlan_txpower"),
  ...text("wlan_signal wlan_noise wlan_bitrate wlan_crypt wlan_vaps db_ver"),
  ...int("db_update"),
];

/** The firmware's words for the dump's wifi modes (the importer's table read backwards). */
const FIRMWARE_MODES: Record<string, string> = { master: "Master", client: "Client", adhoc: "Ad-Hoc", monitor: "Monitor" };

interface SqlStatement {
  run(values: Value[]): void;
  free(): void;
}
interface SqlDatabase {
  run(sql: string): void;
  prepare(sql: string): SqlStatement;
  export(): Uint8Array;
  close(): void;
}
type InitSqlJs = () => Promise<{ Database: new () => SqlDatabase }>;

interface SynthIface {
  readonly id: number;
  readonly if_name: string;
  readonly if_hwaddress: string | null;
  readonly addresses: { address: string; netmask_prefixlen: number }[];
  readonly wifi: Record<string, unknown> | null;
}

const seconds = (date: unknown) => (typeof date === "string" ? Math.floor(Date.parse(`${date}T00:00:00Z`) / 1000) + 41_000 : "");
const flag = (v: unknown) => (v === true ? 1 : 0);
const str = (v: unknown) => (v === null || v === undefined ? "" : String(v));

/** The dump gives frequencies in MHz or GHz, as numbers or text; the firmware sends GHz. */
function ghz(v: unknown): string {
  const n = Number(v);
  if (!Number.isFinite(n) || n === 0) return "";
  return String(n > 100 ? n / 1000 : n);
}

function table(db: SqlDatabase, name: string, columns: readonly Column[], key: string, rows: readonly Record<string, Value>[]): void {
  db.run(`CREATE TABLE ${name} (${columns.map(([c, t]) => `${c} ${t}`).join(", ")}, CONSTRAINT key_${name} PRIMARY KEY (${key}))`);
  const insert = db.prepare(`INSERT INTO ${name} VALUES (${columns.map(() => "?").join(", ")})`);
  try {
    for (const row of rows) insert.run(columns.map(([c, t]) => row[c] ?? (t === "text" ? "" : 0)));
  } finally {
    insert.free();
  }
}

/** The database's bytes: the same for the same network, seed and step (sql.js's SQLite writes its pages in a fixed way). */
/** Where a row stands: the step, the seed and the instant of its database update. */
interface RowAt {
  readonly step: number;
  readonly seed: number;
  readonly update: number;
}

/** An access point's row of the nodes table, as the firmware reports it. */
function nodeRow(ap: SynthDump["accesspoints"][number], i: number, { step, seed, update }: RowAt): Record<string, Value> {
  const main = String(ap.main_ip);
  const loads = [ap.system_load_1min, ap.system_load_5min, ap.system_load_15min].map((l) => Number(l).toFixed(2));
  return {
    originator: main,
    mainip: main,
    sys_ver: str(ap.system_kernel),
    sys_board: str(ap.device_board),
    sys_cpu: str(ap.device_cpu),
    sys_mem: Number(ap.device_memory_available),
    sys_uptime: `${Number(ap.system_uptime) + step * STEP_SECONDS}.${String(Math.floor(unit(seed, i, 22) * 100)).padStart(2, "0")}`,
    sys_load: loads.join(" "),
    sys_free: Number(ap.device_memory_free),
    sys_watchdog: flag(ap.system_watchdog_enabled),
    sys_os_type: "OpenWrt",
    sys_os_name: str(ap.firmware_release_name),
    sys_os_rel: "23.05.3",
    sys_os_ver: "r23809-234f1a2efa",
    sys_os_arc: ap.device_board === "ramips" ? "mipsel_24kc" : "mips_24kc",
    sys_os_insttime: seconds(ap.firmware_install_timestamp),
    // a version the dump lacks is sent empty, which the importer keeps as ""
    on_core_ver: str(ap.mesh_version),
    on_core_insttime: seconds(ap.firmware_install_timestamp),
    on_packages: "on-openvpn on-monitoring",
    on_id: str(ap.mesh_id),
    on_olsrd_status: ap.olsrd_running === true ? "1" : "0",
    on_olsrd_mainip: main,
    on_vpn_cn: `${str(ap.mesh_id)}.aps.on`,
    on_vpn_status: unit(seed, i, 23) < 0.5 ? 1 : 0,
    on_vpn_autosearch: 1,
    on_vpn_sort: "etx",
    on_ipv6_mainip: str(ap.main_ipv6),
    db_time: new Date(update * 1000).toUTCString(),
    db_epoch: update,
    db_ver: "0.2",
    db_update: update,
  };
}

/** An interface's row of the ifaces table. */
function ifaceRow(main: string, f: SynthIface, { step, seed, update }: RowAt): Record<string, Value> {
  const wifi = f.wifi;
  const bytes = (k: number) => Math.floor(unit(seed, f.id, k) * 2 ** 31) + step * 1_000_000;
  return {
    originator: main,
    mainip: main,
    if_name: f.if_name,
    if_hwaddr: str(f.if_hwaddress),
    ip_label: f.if_name,
    ip_addr: f.addresses.map((a) => `${a.address}/${a.netmask_prefixlen}`).join(" "),
    on_networks: f.addresses.some((a) => a.address === main) ? `on_${f.if_name}` : "lan",
    on_zones: f.addresses.some((a) => a.address === main) ? "opennet" : "lan",
    on_olsr: f.addresses.some((a) => a.address === main) ? 1 : 0,
    ifstat_rx_bytes: bytes(24),
    ifstat_tx_bytes: bytes(25),
    ...(wifi === null
      ? {}
      : {
          wlan_essid: str(wifi.wifi_ssid),
          wlan_apmac: str(wifi.wifi_bssid),
          wlan_type: str(wifi.wifi_driver),
          wlan_hwmode: str(wifi.wifi_hwmode),
          wlan_mode: FIRMWARE_MODES[str(wifi.wifi_mode)] ?? "Master",
          wlan_channel: str(wifi.wifi_channel),
          wlan_freq: ghz(wifi.wifi_freq),
          wlan_txpower: str(wifi.wifi_transmit_power),
          wlan_signal: str(wifi.wifi_signal),
          wlan_noise: str(wifi.wifi_noise),
          wlan_bitrate: String(Number(wifi.wifi_bitrate)),
          wlan_crypt: "none",
          wlan_vaps: wifi.wifi_vaps_enabled === true ? "1" : "0",
        }),
    db_ver: "0.2",
    db_update: update,
  };
}

export async function ondataserviceDb(dump: SynthDump, step: number, seed = 1): Promise<Uint8Array> {
  assertStep(step);
  const takenAt = Math.floor(Date.parse(String(dump.network.taken_at)) / 1000) + step * STEP_SECONDS;
  const nodes: Record<string, Value>[] = [];
  const ifaces: Record<string, Value>[] = [];
  dump.accesspoints.forEach((ap, i) => {
    // the dump's access points with device fields are those that report
    if (ap.device_board === undefined) return;
    const update = takenAt - Math.floor(unit(seed, i, 21) * 300);
    nodes.push(nodeRow(ap, i, { step, seed, update }));
    for (const f of ap.interfaces as SynthIface[]) ifaces.push(ifaceRow(String(ap.main_ip), f, { step, seed, update }));
  });
  const initSqlJs = createRequire(import.meta.url)("sql.js") as InitSqlJs;
  const SQL = await initSqlJs();
  const db = new SQL.Database();
  try {
    db.run("BEGIN");
    table(db, "nodes", NODE_COLUMNS, "mainip", nodes);
    table(db, "ifaces", IFACE_COLUMNS, "mainip, if_name", ifaces);
    db.run("COMMIT");
    return db.export();
  } finally {
    db.close();
  }
}
