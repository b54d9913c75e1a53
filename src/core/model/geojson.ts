import type { AccesspointEntry, Model, SiteEntry } from "./model.ts";
import { rendered } from "../body.ts";
import { accesspointGeoParts, instant, list, str } from "./render-json.ts";
import { linkFacts, siteMembers, sitePosition } from "./resources.ts";
import type { ResolvedLink } from "./validator.ts";

/**
 * `data_format=geojson` on the access point, link and site lists: a GeoJSON FeatureCollection (RFC
 * 7946) with one Feature per item, shaped as the original server's GeoJSON serializer wrote it:
 * `{"type":"Feature","geometry":…,"properties":{…}}` (no feature id), keys in its order, compact,
 * floats as Python writes them. A feature without a position has the geometry `null`.
 */

/** A JSON list written inside a fixed text (plan.ts Body): the features of a FeatureCollection. */
export interface FeatureCollection {
  readonly head: string;
  readonly items: Iterable<Buffer>;
  readonly tail: string;
}

/** Features rendered as the collection is written, never held together. */
export function featureCollection<T>(items: readonly T[], feature: (item: T) => Buffer): FeatureCollection {
  return { head: '{"type":"FeatureCollection","features":', items: rendered(items, feature), tail: "}" };
}

const FEATURE = Buffer.from('{"type":"Feature","geometry":');
const PROPERTIES = Buffer.from(',"properties":');
const END = Buffer.from("}");

/** Geometry: the access point's position. Properties: every other field of the access point, `site` included. */
export function accesspointFeature(ap: AccesspointEntry): Buffer {
  const { geometry, properties } = accesspointGeoParts(ap.json);
  return Buffer.concat([FEATURE, geometry, PROPERTIES, ...properties, END]);
}

/**
 * Geometry: a LineString through the positions of the endpoint access points, in endpoint order
 * (`null` when fewer than two have one). Properties: the endpoints' main_ips, id, timestamp, quality,
 * is_wireless and wifi_ssid, as in the link list.
 */
export function linkFeature(link: ResolvedLink, model: Model): Buffer {
  const { entries, quality, wireless, ssid } = linkFacts(link, model);
  const points = entries.flatMap(({ ap }) => (ap.positionText ? [`[${ap.positionText[0]},${ap.positionText[1]}]`] : []));
  const geometry = points.length < 2 ? "null" : `{"type":"LineString","coordinates":${list(points)}}`;
  return Buffer.from(
    `{"type":"Feature","geometry":${geometry},"properties":{"endpoints":${list(entries.map(({ ap }) => `"${ap.main_ip}"`))},` +
      `"id":${link.id},"timestamp":${instant(link.timestamp)},"quality":${quality},"is_wireless":${wireless},"wifi_ssid":${str(ssid)}}}`,
  );
}

/** Geometry: the site's position (the mean of its members'). Properties: the member main_ips and the id. */
export function siteFeature(site: SiteEntry): Buffer {
  return Buffer.from(
    `{"type":"Feature","geometry":${sitePosition(site)},"properties":{"accesspoints":${siteMembers(site)},"id":${site.id}}}`,
  );
}
