/**
 * ondataservice's values as the original's importer stores them: its columns, the fields they fill, and
 * Python's readings of text and numbers that the original relies on.
 */

export const NODE_FIELDS: readonly [string, string][] = [
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

export const WIFI_COLUMNS: readonly [string, string][] = [
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
export const pyStr = (v: unknown): string =>
  v === null || v === undefined ? "None" : typeof v === "number" && Number.isInteger(v) ? String(v) : String(v);
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

/** One ondataservice value for a field, by the original's rules; throws a message for a value it cannot take. */
export function convert(field: string, raw: unknown): unknown {
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

/** Python's float() of text, for what it accepts that Number() would read differently (undefined otherwise). */
export function parseFloatPy(text: string): number | undefined {
  if (!/^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(text)) return undefined;
  return Number(text);
}
