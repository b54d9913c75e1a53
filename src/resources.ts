import { ACCESSPOINT_FIELDS, WIFI_FIELDS } from "./fields.ts";
import type { InterfaceEntry, Model, SiteEntry } from "./model.ts";
import { pyFloat } from "./pyfloat.ts";
import type { AccesspointRecord, PointRecord } from "./schema.ts";
import { compareCodePoints } from "./text.ts";
import type { Instant } from "./timestamp.ts";
import type { ResolvedLink } from "./validate.ts";

/**
 * Stage 4: each API resource as compact JSON text, keys in the API description's order, floats the
 * way Python writes them. Rendered pieces are cached per model, because every link embeds two full
 * interfaces and every list repeats its members.
 */

const str = (v: string | null) => (v === null ? "null" : JSON.stringify(v));
const float = (v: number | null) => (v === null ? "null" : pyFloat(v));
const scalar = (v: number | boolean | null) => (v === null ? "null" : String(v));
const point = (p: PointRecord | null) =>
  p === null ? "null" : `{"type":"Point","coordinates":[${pyFloat(p.coordinates[0])},${pyFloat(p.coordinates[1])}]}`;
const instant = (t: Instant | null) => (t === null ? "null" : `"${t.text}"`);

export function list(items: readonly string[]): string {
  return `[${items.join(",")}]`;
}

export class Renderer {
  readonly #interfaces = new Map<number, string>();
  readonly #accesspoints = new Map<string, string>();
  readonly #links = new Map<number, string>();

  constructor(readonly model: Model) {}

  interface(entry: InterfaceEntry): string {
    let json = this.#interfaces.get(entry.iface.id);
    if (json === undefined) {
      json = renderInterface(entry);
      this.#interfaces.set(entry.iface.id, json);
    }
    return json;
  }

  accesspoint(ap: AccesspointRecord): string {
    let json = this.#accesspoints.get(ap.main_ip);
    if (json === undefined) {
      json = renderAccesspoint(ap);
      this.#accesspoints.set(ap.main_ip, json);
    }
    return json;
  }

  link(link: ResolvedLink): string {
    let json = this.#links.get(link.id);
    if (json === undefined) {
      json = renderLink(link, this.model, (e) => this.interface(e));
      this.#links.set(link.id, json);
    }
    return json;
  }

  site(site: SiteEntry): string {
    return renderSite(site);
  }
}

export function isWireless(entry: InterfaceEntry): boolean {
  const name = entry.iface.if_name?.toLowerCase() ?? "";
  return entry.iface.wifi !== null || name.startsWith("wlan") || name.startsWith("ath");
}

export function renderInterface({ iface, ap }: InterfaceEntry): string {
  const addresses = iface.addresses.map(
    (a) => `{"id":${a.id},"address":"${a.address}","family":"${a.family}","netmask_prefixlen":${a.netmask_prefixlen},"interface":${iface.id}}`,
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
    `"is_wireless":${isWireless({ iface, ap })},"wifi_attributes":${wifi},"accesspoint":"${ap.main_ip}"}`
  );
}

export function renderAccesspoint(ap: AccesspointRecord): string {
  const record = ap as unknown as Record<string, unknown>;
  const parts = [`"main_ip":"${ap.main_ip}"`, `"main_ipv6":${str(ap.main_ipv6)}`];
  for (const [name, kind] of ACCESSPOINT_FIELDS) {
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
    parts.push(`"${name}":${json}`);
  }
  parts.push(`"site":${scalar(ap.site)}`);
  return `{${parts.join(",")}}`;
}

/** Quality multiplies the endpoint qualities in dump order, without rounding, as the original does. */
export function renderLink(link: ResolvedLink, model: Model, iface: (e: InterfaceEntry) => string): string {
  const entries = link.endpoints.map((e) => model.interfaceById.get(e.interfaceId)!);
  const endpoints = link.endpoints.map((e, i) => `{"quality":${pyFloat(e.quality)},"interface":${iface(entries[i])}}`);
  const quality = link.endpoints.reduce((q, e) => q * e.quality, 1);
  const wireless = entries.some(isWireless);
  const ssid = entries.map((e) => e.iface.wifi?.wifi_ssid).find((s) => typeof s === "string" && s !== "") ?? null;
  return (
    `{"endpoints":${list(endpoints)},"id":${link.id},"is_wireless":${wireless},"position":${linkPosition(entries)},` +
    `"quality":${pyFloat(quality)},"timestamp":${instant(link.timestamp)},"wifi_ssid":${str(ssid)}}`
  );
}

/** Longitude text -> latitude, in endpoint order; a repeated longitude keeps its first place, like a Python dict. */
function linkPosition(entries: readonly InterfaceEntry[]): string {
  const map = new Map<string, number>();
  let positioned = 0;
  for (const { ap } of entries) {
    if (ap.position === null) continue;
    positioned++;
    map.set(pyFloat(ap.position.coordinates[0]), ap.position.coordinates[1]);
  }
  if (positioned < 2) return "null";
  return `{${[...map].map(([lon, lat]) => `${JSON.stringify(lon)}:${pyFloat(lat)}`).join(",")}}`;
}

export function renderSite(site: SiteEntry): string {
  const positioned = site.members.filter((m) => m.position !== null);
  let position = "null";
  if (positioned.length > 0) {
    const lon = orderFreeMean(positioned.map((m) => m.position!.coordinates[0]));
    const lat = orderFreeMean(positioned.map((m) => m.position!.coordinates[1]));
    position = `{"type":"Point","coordinates":[${pyFloat(lon)},${pyFloat(lat)}]}`;
  }
  const n = site.members.length;
  const radius = n <= 4 ? "20" : pyFloat(20 * Math.sqrt(n / 4));
  return (
    `{"accesspoints":${list(site.members.map((m) => `"${m.main_ip}"`))},"id":${site.id},"position":${position},` +
    `"post_address":${JSON.stringify(sitePostAddress(site))},"radius":${radius}}`
  );
}

/**
 * Float sums depend on their order in the last digit. The original summed in database order, which a
 * dump does not carry; summing the values in ascending order makes the result a function of the set.
 */
function orderFreeMean(values: number[]): number {
  return values.sort((a, b) => a - b).reduce((s, v) => s + v, 0) / values.length;
}

/** The most frequent non-empty member post_address; ties go to the greatest string; "" when none. */
export function sitePostAddress(site: SiteEntry): string {
  const counts = new Map<string, number>();
  for (const m of site.members) if (m.post_address) counts.set(m.post_address, (counts.get(m.post_address) ?? 0) + 1);
  let best = "";
  let bestCount = 0;
  for (const [address, count] of counts) {
    if (count > bestCount || (count === bestCount && compareCodePoints(address, best) > 0)) [best, bestCount] = [address, count];
  }
  return best;
}
