import type { InterfaceEntry, Model, SiteEntry } from "./model.ts";
import { pyFloat } from "../values/pyfloat.ts";
import { instant, list, str } from "./render-json.ts";
import { compareCodePoints } from "../values/text.ts";
import type { ResolvedLink } from "./validator.ts";

/**
 * Stage 4: the resources made of several records, as compact JSON in the API description's order.
 * Access points and interfaces are rendered once into the model (src/records.ts). Links are not
 * kept: a link is a few pieces around two kept interfaces, cheap to join again and big to hold.
 */

/**
 * UTF-8 bytes, around the embedded interfaces' bytes. Quality multiplies the endpoint qualities in
 * dump order, without rounding, as the original does.
 */
export function renderLink(link: ResolvedLink, model: Model): Buffer {
  const { entries, quality, wireless, ssid } = linkFacts(link, model);
  const pieces: (string | Buffer)[] = ['{"endpoints":['];
  link.endpoints.forEach((e, i) => pieces.push(`${i ? "," : ""}{"quality":${pyFloat(e.quality)},"interface":`, entries[i].json, "}"));
  pieces.push(
    `],"id":${link.id},"is_wireless":${wireless},"position":${linkPosition(entries)},` +
      `"quality":${quality},"timestamp":${instant(link.timestamp)},"wifi_ssid":${str(ssid)}}`,
  );
  return joined(pieces);
}

/** The pieces' UTF-8 bytes in one buffer, the texts written straight into it (no buffer of each made and dropped). */
function joined(pieces: readonly (string | Buffer)[]): Buffer {
  let length = 0;
  for (const p of pieces) length += typeof p === "string" ? Buffer.byteLength(p) : p.length;
  const out = Buffer.allocUnsafe(length);
  let at = 0;
  for (const p of pieces) at += typeof p === "string" ? out.write(p, at) : p.copy(out, at);
  return out;
}

/** What a link says besides its endpoints, as JSON text where it is a value (the list and GeoJSON share it). */
export interface LinkFacts {
  /** the endpoint interfaces, in dump order */
  readonly entries: readonly InterfaceEntry[];
  readonly quality: string;
  readonly wireless: boolean;
  readonly ssid: string | null;
}

export function linkFacts(link: ResolvedLink, model: Model): LinkFacts {
  const entries = link.endpoints.map((e) => model.interfaceById.get(e.interfaceId)!);
  return {
    entries,
    quality: pyFloat(link.endpoints.reduce((q, e) => q * e.quality, 1)),
    wireless: entries.some((e) => e.wireless),
    ssid: entries.map((e) => e.ssid).find((s) => s !== null && s !== "") ?? null,
  };
}

/** Longitude text -> latitude, in endpoint order; a repeated longitude keeps its first place, like a Python dict. */
function linkPosition(entries: readonly InterfaceEntry[]): string {
  const map = new Map<string, string>();
  let positioned = 0;
  for (const { ap } of entries) {
    if (ap.positionText === null) continue;
    positioned++;
    map.set(ap.positionText[0], ap.positionText[1]);
  }
  if (positioned < 2) return "null";
  return `{${[...map].map(([lon, lat]) => `${JSON.stringify(lon)}:${lat}`).join(",")}}`;
}

export function renderSite(site: SiteEntry): string {
  const n = site.members.length;
  const radius = n <= 4 ? "20" : pyFloat(20 * Math.sqrt(n / 4));
  return (
    `{"accesspoints":${siteMembers(site)},"id":${site.id},"position":${sitePosition(site)},` +
    `"post_address":${JSON.stringify(sitePostAddress(site))},"radius":${radius}}`
  );
}

/** The member main_ips as a JSON list. */
export function siteMembers(site: SiteEntry): string {
  return list(site.members.map((m) => `"${m.main_ip}"`));
}

/** The mean of the members' positions as a GeoJSON Point, or `null` when none has a position. */
export function sitePosition(site: SiteEntry): string {
  const positioned = site.members.filter((m) => m.position !== null);
  if (positioned.length === 0) return "null";
  const lon = orderFreeMean(positioned.map((m) => m.position!.coordinates[0]));
  const lat = orderFreeMean(positioned.map((m) => m.position!.coordinates[1]));
  return `{"type":"Point","coordinates":[${pyFloat(lon)},${pyFloat(lat)}]}`;
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
