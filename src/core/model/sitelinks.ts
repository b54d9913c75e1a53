import { statusOf, type Model } from "./model.ts";
import type { ResolvedLink } from "./validator.ts";

/**
 * `with_redundant_site_links=0` on the link list, as the original decides it: two different sites
 * are redundantly joined when more than one *online* link (status against taken_at) runs between
 * their access points; every link between two such sites is left out, whatever its own status.
 * A requested `status` filters the remaining links (the original filtered by status first, then took
 * these out). A link with an endpoint outside every site, or within one site, always stays.
 */
export function withoutRedundantSiteLinks(model: Model): ResolvedLink[] {
  const pairOf = (link: ResolvedLink): string | undefined => {
    const sites = link.endpoints.map((e) => model.interfaceById.get(e.interfaceId)!.ap.site);
    if (sites.length !== 2 || sites[0] === null || sites[1] === null || sites[0] === sites[1]) return undefined;
    return sites[0] < sites[1] ? `${sites[0]} ${sites[1]}` : `${sites[1]} ${sites[0]}`;
  };
  const online = new Map<string, number>();
  for (const link of model.links) {
    const pair = pairOf(link);
    if (pair !== undefined && statusOf(link.timestamp, model.takenAt) === "online") online.set(pair, (online.get(pair) ?? 0) + 1);
  }
  return model.links.filter((link) => {
    const pair = pairOf(link);
    return pair === undefined || (online.get(pair) ?? 0) <= 1;
  });
}
