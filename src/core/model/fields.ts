/**
 * The Accesspoint and WifiAttributes fields in the order the API description lists them, with their
 * value kinds. Validation (schema.ts) and rendering (resources.ts) both read this one table, so the
 * dump format and the JSON output cannot drift apart.
 */
export type FieldKind = "string" | "integer" | "float" | "boolean" | "timestamp" | "date" | "point";

export const ACCESSPOINT_FIELDS = [
  ["post_address", "string"],
  ["antenna", "string"],
  ["position", "point"],
  ["owner", "string"],
  ["device_model", "string"],
  ["lastseen_timestamp", "timestamp"],
  ["device_board", "string"],
  ["device_architecture", "string"],
  ["device_cpu", "string"],
  ["device_memory_available", "integer"],
  ["device_memory_free", "integer"],
  ["system_kernel", "string"],
  ["system_watchdog_enabled", "boolean"],
  ["system_uptime", "integer"],
  ["system_load_1min", "float"],
  ["system_load_5min", "float"],
  ["system_load_15min", "float"],
  ["firmware_type", "string"],
  ["firmware_release_name", "string"],
  ["firmware_release_version", "string"],
  ["firmware_build", "string"],
  ["firmware_install_timestamp", "date"],
  ["mesh_version", "string"],
  ["mesh_install_timestamp", "date"],
  ["mesh_packages", "string"],
  ["mesh_id", "string"],
  ["olsrd_running", "boolean"],
  ["olsrd_main_ip", "string"],
  ["mesh_captive_portal_enabled", "boolean"],
  ["mesh_captive_portal_name", "string"],
  ["mesh_certificate_cn", "string"],
  ["mesh_vpn_internet_enabled", "boolean"],
  ["mesh_vpn_internet_connections", "string"],
  ["mesh_vpn_internet_autosearch", "string"],
  ["mesh_services_sorting", "string"],
  ["mesh_vpn_internet_gateways", "string"],
  ["mesh_vpn_internet_blacklist", "string"],
  ["mesh_service_relay_connected", "boolean"],
  ["mesh_service_relay_enabled", "boolean"],
  ["mesh_vpn_mesh_connected", "boolean"],
  ["mesh_vpn_mesh_connections", "string"],
  ["mesh_vpn_mesh_gateways", "string"],
  ["mesh_vpn_mesh_gateway_names", "string"],
] as const satisfies readonly (readonly [string, FieldKind])[];

/** `main_ip` and `main_ipv6` come first and `site` last; they are typed separately. */

export const WIFI_FIELDS = [
  ["wifi_ssid", "string"],
  ["wifi_bssid", "string"],
  ["wifi_driver", "string"],
  ["wifi_hwmode", "string"],
  ["wifi_mode", "string"],
  ["wifi_channel", "integer"],
  ["wifi_freq", "decimal3"],
  ["wifi_transmit_power", "integer"],
  ["wifi_signal", "integer"],
  ["wifi_noise", "integer"],
  ["wifi_bitrate", "decimal1"],
  ["wifi_crypt", "string"],
  ["wifi_vaps_enabled", "boolean"],
] as const satisfies readonly (readonly [string, FieldKind | "decimal3" | "decimal1"])[];

/** `firmware_type` of a record that does not carry the field (an explicit null stays null). */
export const DEFAULT_FIRMWARE_TYPE = "OpenWrt";
