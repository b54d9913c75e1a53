/**
 * ondataservice's values as the original's importer stores them: its columns, the fields they fill, and
 * Python's readings of text and numbers that the original relies on.
 */

/** The firmware's wifi modes as the original's. */
const WIFI_MODES: Record<string, string> = {
  Master: "master",
  Managed: "client",
  Client: "client",
  "Ad-Hoc": "adhoc",
  AdHoc: "adhoc",
  Monitor: "monitor",
};
/** The firmware's encryption descriptions as the original's. */
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

/**
 * Python's str() of an SQLite value. sql.js hands a REAL 5.0 over as the number 5, so Python's "5.0"
 * cannot be told from an INTEGER's "5"; the columns read through this hold addresses and text.
 */
export const pyStr = (v: unknown): string => (v === null || v === undefined ? "None" : String(v));
export const truthy = (v: unknown) => v !== null && v !== undefined && v !== "" && v !== 0;

/**
 * A MAC address as the original's importer (the version the recording shows) stores it: lower case, and
 * null when empty. Unlike the original, surrounding white space is dropped too (the sample has none).
 */
export function mac(raw: unknown): string | null {
  if (raw === null || raw === undefined) return null;
  const s = String(raw).trim();
  return s === "" ? null : s.toLowerCase();
}

/** How the original stores one column's value; throws a message for a value it cannot take. */
export type Rule = (raw: unknown) => unknown;

const text: Rule = (raw) => pyStr(raw);

/** The firmware reports switches as "1" and "0" (or the numbers). */
const flag: Rule = (raw) => raw === "1" || raw === 1;

/** A Unix time as its UTC date: the original keeps the day of an installation, not the instant. */
const date: Rule = (raw) => {
  if (!truthy(raw)) return null;
  const s = pyStr(raw);
  const seconds = Number(s);
  if (!Number.isInteger(seconds)) throw new Error(`not a Unix time: ${JSON.stringify(s)}`);
  return new Date(seconds * 1000).toISOString().slice(0, 10);
};

/** `uptime`'s own words ("3 days, 4:05") in seconds, else a number of seconds. */
const uptime: Rule = (raw) => {
  const s = pyStr(raw);
  const m = /^(?:([0-9]+) days?,)? *([0-9]{1,2}):([0-9]{2})$/.exec(s);
  if (m) return 60 * (Number(m[3]) + 60 * (Number(m[2]) + 24 * Number(m[1] ?? 0)));
  if (!truthy(raw)) return null;
  const n = parseFloatPy(s);
  if (n === undefined) throw new Error(`not an uptime: ${JSON.stringify(s)}`);
  return Math.trunc(n);
};

const whole: Rule = (raw) => {
  const s = pyStr(raw);
  const n = parseFloatPy(s);
  if (n === undefined || !Number.isInteger(n)) throw new Error(`not a whole number: ${JSON.stringify(s)}`);
  return n;
};

/** The original's decimal fields keep a fixed number of fraction digits. */
const decimal =
  (digits: number): Rule =>
  (raw) => {
    const s = pyStr(raw);
    const n = parseFloatPy(s);
    if (n === undefined) throw new Error(`not a number: ${JSON.stringify(s)}`);
    return n.toFixed(digits);
  };

/** A value the firmware names in its own words, as the original's name for it. */
const named =
  (names: Readonly<Record<string, string>>, what: string, key: (s: string) => string = (s) => s): Rule =>
  (raw) => {
    const s = pyStr(raw);
    const v = names[key(s)];
    if (v === undefined) throw new Error(`not ${what}: ${JSON.stringify(s)}`);
    return v;
  };

/** Firmware that cannot measure a value reports "" or "unknown"; the original stores 0 for it. */
const zeroWhen =
  (unmeasured: (raw: unknown) => boolean, rule: Rule): Rule =>
  (raw) =>
    unmeasured(raw) ? 0 : rule(raw);
const empty = (raw: unknown) => raw === "";
const emptyOrUnknown = (raw: unknown) => raw === "" || raw === "unknown";
const emptyOrMentionsUnknown = (raw: unknown) => raw === "" || pyStr(raw).includes("unknown");

/**
 * The original's importer (the version the recording shows) stores an empty release version as NULL,
 * unlike every other text field: the sample's two AirOS devices send sys_os_rel "" and show null.
 */
const textOrNull: Rule = (raw) => (truthy(raw) ? pyStr(raw) : null);

/** Older firmware calls sorting by hop count "metric". */
const sorting: Rule = (raw) => (raw === "metric" ? "hop" : pyStr(raw));

/** The letters of a mode such as 802.11ngab in order, so every way of listing the same modes is one value. */
const hwmode: Rule = (raw) => {
  const s = pyStr(raw);
  return s.startsWith("802.11") ? "802.11" + [...s.slice(6)].sort().join("") : s;
};

/** ondataservice's `nodes` columns: the access point field each fills, and how. */
export const NODE_FIELDS: readonly (readonly [column: string, field: string, rule: Rule])[] = [
  ["sys_board", "device_board", text],
  ["sys_os_arc", "device_architecture", text],
  ["sys_cpu", "device_cpu", text],
  ["sys_mem", "device_memory_available", zeroWhen(empty, whole)],
  ["sys_free", "device_memory_free", zeroWhen(empty, whole)],
  ["sys_ver", "system_kernel", text],
  ["sys_watchdog", "system_watchdog_enabled", flag],
  ["sys_uptime", "system_uptime", uptime],
  ["sys_os_type", "firmware_type", text],
  ["sys_os_name", "firmware_release_name", text],
  ["sys_os_rel", "firmware_release_version", textOrNull],
  ["sys_os_ver", "firmware_build", text],
  ["sys_os_insttime", "firmware_install_timestamp", date],
  ["on_core_ver", "mesh_version", text],
  ["on_core_insttime", "mesh_install_timestamp", date],
  ["on_packages", "mesh_packages", text],
  ["on_id", "mesh_id", text],
  ["on_olsrd_status", "olsrd_running", flag],
  ["on_olsrd_mainip", "olsrd_main_ip", text],
  ["on_wifidog_status", "mesh_captive_portal_enabled", flag],
  ["on_wifidog_id", "mesh_captive_portal_name", text],
  ["on_vpn_cn", "mesh_certificate_cn", text],
  ["on_vpn_status", "mesh_vpn_internet_enabled", flag],
  ["on_vpn_gw", "mesh_vpn_internet_connections", text],
  ["on_vpn_autosearch", "mesh_vpn_internet_autosearch", text],
  ["on_vpn_sort", "mesh_services_sorting", sorting],
  ["on_vpn_gws", "mesh_vpn_internet_gateways", text],
  ["on_vpn_blist", "mesh_vpn_internet_blacklist", text],
  ["on_ugw_status", "mesh_service_relay_connected", flag],
  ["on_ugw_enabled", "mesh_service_relay_enabled", flag],
  ["on_ugw_tunnel", "mesh_vpn_mesh_connected", flag],
  ["on_ugw_connected", "mesh_vpn_mesh_connections", text],
  ["on_ugw_presetips", "mesh_vpn_mesh_gateways", text],
  ["on_ugw_presetnames", "mesh_vpn_mesh_gateway_names", text],
];

/** ondataservice's `ifaces` columns: the wifi attribute each fills, and how. */
export const WIFI_COLUMNS: readonly (readonly [column: string, field: string, rule: Rule])[] = [
  ["wlan_essid", "wifi_ssid", text],
  ["wlan_apmac", "wifi_bssid", mac],
  ["wlan_type", "wifi_driver", text],
  ["wlan_channel", "wifi_channel", zeroWhen(emptyOrMentionsUnknown, whole)],
  ["wlan_crypt", "wifi_crypt", named(WIFI_CRYPTS, "a wifi encryption", (s) => s.trim())],
  // GHz
  ["wlan_freq", "wifi_freq", zeroWhen(emptyOrMentionsUnknown, decimal(3))],
  ["wlan_hwmode", "wifi_hwmode", hwmode],
  ["wlan_mode", "wifi_mode", named(WIFI_MODES, "a wifi mode")],
  ["wlan_txpower", "wifi_transmit_power", whole],
  ["wlan_signal", "wifi_signal", zeroWhen(emptyOrUnknown, whole)],
  ["wlan_noise", "wifi_noise", zeroWhen(emptyOrUnknown, whole)],
  // Mbit/s
  ["wlan_bitrate", "wifi_bitrate", zeroWhen((raw) => raw === "unknown", decimal(1))],
  ["wlan_vaps", "wifi_vaps_enabled", flag],
];

/** Python's float() of text, for what it accepts that Number() would read differently (undefined otherwise). */
export function parseFloatPy(text: string): number | undefined {
  if (!/^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(text)) return undefined;
  return Number(text);
}
