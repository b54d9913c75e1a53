import { ACCESSPOINT_FIELDS, WIFI_FIELDS } from "./fields.ts";
import { pyFloat } from "../values/pyfloat.ts";
import { brandField, DEFAULT_SETTINGS } from "../settings.ts";
import type { AccesspointRecord, InterfaceRecord, PointRecord } from "./schema.ts";
import type { Instant } from "../values/timestamp.ts";

/**
 * The API JSON of one access point or one interface, rendered once from its validated record when
 * the model is built (the model keeps the bytes and a few fields, not the record). Keys in the API
 * description's order, floats the way Python writes them.
 */

export const str = (v: string | null) => (v === null ? "null" : JSON.stringify(v));
const float = (v: number | null) => (v === null ? "null" : pyFloat(v));
const scalar = (v: number | boolean | null) => (v === null ? "null" : String(v));
const point = (p: PointRecord | null) =>
  p === null ? "null" : `{"type":"Point","coordinates":[${pyFloat(p.coordinates[0])},${pyFloat(p.coordinates[1])}]}`;
export const instant = (t: Instant | null) => (t === null ? "null" : `"${t.text}"`);

export function list(items: readonly string[]): string {
  return `[${items.join(",")}]`;
}

export function isWireless(iface: InterfaceRecord): boolean {
  const name = iface.if_name?.toLowerCase() ?? "";
  return iface.wifi !== null || name.startsWith("wlan") || name.startsWith("ath");
}

export function renderInterface(iface: InterfaceRecord, mainIp: string): string {
  const addresses = iface.addresses.map(
    (a) =>
      `{"id":${a.id},"address":"${a.address}","family":"${a.family}","netmask_prefixlen":${a.netmask_prefixlen},"interface":${iface.id}}`,
  );
  let wifi = "[]";
  if (iface.wifi !== null) {
    const w = iface.wifi as Record<string, string | number | boolean | null>;
    const fields = WIFI_FIELDS.map(([name, kind]) => {
      const v = w[name];
      return `"${name}":${kind === "string" || kind === "decimal3" || kind === "decimal1" ? str(v as string | null) : scalar(v as number | boolean | null)}`;
    });
    wifi = `[{"interface":${iface.id},${fields.join(",")}}]`;
  }
  return (
    `{"addresses":${list(addresses)},"if_name":${str(iface.if_name)},"if_hwaddress":${str(iface.if_hwaddress)},` +
    `"is_wireless":${isWireless(iface)},"wifi_attributes":${wifi},"accesspoint":"${mainIp}"}`
  );
}

const brandedNames = new Map<string, readonly string[]>();

/** The access point fields' names as a brand writes them, in ACCESSPOINT_FIELDS order. */
export function accesspointFieldNames(brand: string): readonly string[] {
  let names = brandedNames.get(brand);
  if (!names) brandedNames.set(brand, (names = ACCESSPOINT_FIELDS.map(([name]) => brandField(name, brand))));
  return names;
}

export function renderAccesspoint(ap: AccesspointRecord, brand: string = DEFAULT_SETTINGS.brand): string {
  const record = ap as unknown as Record<string, unknown>;
  const parts = [`"main_ip":"${ap.main_ip}"`, `"main_ipv6":${str(ap.main_ipv6)}`];
  const names = accesspointFieldNames(brand);
  for (const [i, [name, kind]] of ACCESSPOINT_FIELDS.entries()) {
    const v = record[name];
    let json: string;
    switch (kind) {
      case "string":
      case "date":
        json = str(v as string | null);
        break;
      case "float":
        json = float(v as number | null);
        break;
      case "point":
        json = point(v as PointRecord | null);
        break;
      case "timestamp":
        json = instant(v as Instant | null);
        break;
      default:
        json = scalar(v as number | boolean | null);
    }
    parts.push(`"${names[i]}":${json}`);
  }
  parts.push(`"site":${scalar(ap.site)}`);
  return `{${parts.join(",")}}`;
}

const FIELD_NAMES: readonly string[] = ACCESSPOINT_FIELDS.map(([name]) => name);
const marker = (name: string) => Buffer.from(`,"${name}":`);
const POSITION = marker("position");
/** the members that follow `position` and `lastseen_timestamp` in the API order */
const AFTER_POSITION = marker(FIELD_NAMES[FIELD_NAMES.indexOf("position") + 1]);
const AFTER_SEEN = marker(FIELD_NAMES[FIELD_NAMES.indexOf("lastseen_timestamp") + 1]);
const SITE = marker("site");
const CLOSE = Buffer.from("}");

/**
 * An access point's JSON (as renderAccesspoint wrote it) taken apart for its GeoJSON feature, without
 * a second rendering: the `position` value is the geometry; the properties are the other members in
 * the original model's field order, which puts `site` right after `lastseen_timestamp`. Members are
 * found by their keys: in JSON text `,"` never occurs inside a string (a quote there is escaped), so
 * `,"<key>":` marks a member of the object itself, and none of these keys occurs in a nested value.
 * The properties come as pieces to join, which share the bytes of `json`.
 */
export function accesspointGeoParts(json: Buffer): { readonly geometry: Buffer; readonly properties: readonly Buffer[] } {
  const position = json.indexOf(POSITION);
  const owner = json.indexOf(AFTER_POSITION, position);
  const board = json.indexOf(AFTER_SEEN, owner);
  const site = json.lastIndexOf(SITE);
  if (position < 0 || owner < 0 || board < 0 || site < board) throw new Error("not the JSON of an access point");
  return {
    geometry: json.subarray(position + POSITION.length, owner),
    // {main_ip … antenna, owner … lastseen_timestamp, site, device_board … mesh_vpn_mesh_gateway_names}
    properties: [
      json.subarray(0, position),
      json.subarray(owner, board),
      json.subarray(site, json.length - 1),
      json.subarray(board, site),
      CLOSE,
    ],
  };
}
