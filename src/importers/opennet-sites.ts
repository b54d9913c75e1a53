/**
 * Site detection after the original server's rules (`oni_model/sites.py`, `utils.py` of
 * github.com/opennet-initiative/api), for a network without sites yet, made deterministic:
 *
 * - a site needs at least MINIMUM_SITE_POPULATION (4) access points;
 * - its radius is BASE_SITE_RADIUS (20 m) times max(1, sqrt(population / 4)), so the density stays the same;
 * - from each access point with a position and no site yet, taken in ascending order of `main_ip`
 *   (the original takes them in the arbitrary order of a Python set), the candidates are the access
 *   points without site within tolerance x radius(population) of the current centre, for the
 *   tolerances 2.5, 2.0, 1.6, 1.3 and 1.0; after each round the population is the candidates' count
 *   and the centre their mean longitude and latitude; when the last round leaves 4 or more, they
 *   become a new site, numbered from 1 in the order the sites are made.
 *
 * Distances are great-circle distances on a sphere of PostGIS's ST_DistanceSphere radius.
 */

export const MINIMUM_SITE_POPULATION = 4;
export const BASE_SITE_RADIUS_M = 20;
const EARTH_RADIUS_M = 6370986;
const TOLERANCES = [2.5, 2.0, 1.6, 1.3, 1.0];

export interface Placed {
  readonly main_ip: string;
  /** [longitude, latitude], or null without a position */
  readonly coordinates: readonly [number, number] | null;
}

export function siteRadius(population: number): number {
  return BASE_SITE_RADIUS_M * Math.max(1, Math.sqrt(population / MINIMUM_SITE_POPULATION));
}

/** Great-circle distance in metres (haversine). */
export function distanceM(a: readonly [number, number], b: readonly [number, number]): number {
  const rad = Math.PI / 180;
  const dLat = (b[1] - a[1]) * rad;
  const dLon = (b[0] - a[0]) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a[1] * rad) * Math.cos(b[1] * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

const ipKey = (ip: string) =>
  ip
    .split(".")
    .map((o) => o.padStart(3, "0"))
    .join(".");

/** The site of each access point (by main_ip); access points in no site are left out. */
export function detectSites(aps: readonly Placed[]): Map<string, number> {
  const site = new Map<string, number>();
  const placed = aps
    .filter((ap): ap is Placed & { coordinates: readonly [number, number] } => ap.coordinates !== null)
    .sort((a, b) => (ipKey(a.main_ip) < ipKey(b.main_ip) ? -1 : ipKey(a.main_ip) > ipKey(b.main_ip) ? 1 : 0));
  let next = 1;
  for (const start of placed) {
    if (site.has(start.main_ip)) continue;
    let centre: readonly [number, number] = start.coordinates;
    let population = MINIMUM_SITE_POPULATION;
    let candidates: typeof placed = [];
    for (const tolerance of TOLERANCES) {
      const limit = tolerance * siteRadius(population);
      candidates = placed.filter((ap) => !site.has(ap.main_ip) && distanceM(ap.coordinates, centre) < limit);
      population = candidates.length;
      if (population === 0) break;
      centre = [
        candidates.reduce((s, ap) => s + ap.coordinates[0], 0) / population,
        candidates.reduce((s, ap) => s + ap.coordinates[1], 0) / population,
      ];
    }
    if (candidates.length >= MINIMUM_SITE_POPULATION) {
      for (const ap of candidates) site.set(ap.main_ip, next);
      next++;
    }
  }
  return site;
}
