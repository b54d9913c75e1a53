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

/** Metres a degree of latitude spans at least (the sphere's is about 111,195): boxes err on the large side. */
const METRES_PER_DEGREE = 111_000;
const CELL_DEGREES = 0.002;

/**
 * The points in cells of CELL_DEGREES, so that "every point within r metres of c" looks at the cells
 * of a box around c instead of at every point (quadratic on a network of 40,000). The box is a bound
 * only; the distance decides. Points come back in the order they were given, so sums over them (the
 * centres) are the same as over a filter of the whole list.
 */
class Grid<T extends { readonly coordinates: readonly [number, number] }> {
  private readonly cells = new Map<string, number[]>();
  constructor(private readonly points: readonly T[]) {
    points.forEach((p, i) => {
      const key = `${Math.floor(p.coordinates[0] / CELL_DEGREES)} ${Math.floor(p.coordinates[1] / CELL_DEGREES)}`;
      const cell = this.cells.get(key);
      if (cell === undefined) this.cells.set(key, [i]);
      else cell.push(i);
    });
  }

  /** Points nearer than `limit` metres to `centre` that `keep` accepts, in the given order. */
  near(centre: readonly [number, number], limit: number, keep: (p: T) => boolean): T[] {
    const dLat = limit / METRES_PER_DEGREE;
    const farLat = Math.min(90, Math.abs(centre[1]) + dLat);
    const cos = Math.cos((farLat * Math.PI) / 180);
    const dLon = cos < 1e-6 ? 360 : dLat / cos;
    const cells = ((2 * dLon) / CELL_DEGREES + 2) * ((2 * dLat) / CELL_DEGREES + 2);
    let indexes: number[] = [];
    if (cells > this.cells.size) {
      indexes = this.points.map((_, i) => i);
    } else {
      for (let x = Math.floor((centre[0] - dLon) / CELL_DEGREES); x <= Math.floor((centre[0] + dLon) / CELL_DEGREES); x++)
        for (let y = Math.floor((centre[1] - dLat) / CELL_DEGREES); y <= Math.floor((centre[1] + dLat) / CELL_DEGREES); y++)
          indexes.push(...(this.cells.get(`${x} ${y}`) ?? []));
      indexes.sort((a, b) => a - b);
    }
    const out: T[] = [];
    for (const i of indexes) {
      const p = this.points[i];
      if (keep(p) && distanceM(p.coordinates, centre) < limit) out.push(p);
    }
    return out;
  }
}

/** The site of each access point (by main_ip); access points in no site are left out. */
export function detectSites(aps: readonly Placed[]): Map<string, number> {
  const site = new Map<string, number>();
  const placed = aps
    .filter((ap): ap is Placed & { coordinates: readonly [number, number] } => ap.coordinates !== null)
    .sort((a, b) => (ipKey(a.main_ip) < ipKey(b.main_ip) ? -1 : ipKey(a.main_ip) > ipKey(b.main_ip) ? 1 : 0));
  const grid = new Grid(placed);
  let next = 1;
  for (const start of placed) {
    if (site.has(start.main_ip)) continue;
    let centre: readonly [number, number] = start.coordinates;
    let population = MINIMUM_SITE_POPULATION;
    let candidates: typeof placed = [];
    for (const tolerance of TOLERANCES) {
      const limit = tolerance * siteRadius(population);
      candidates = grid.near(centre, limit, (ap) => !site.has(ap.main_ip));
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

export interface Sited extends Placed {
  /** the site it belongs to before the update, or null */
  readonly site: number | null;
}

export interface SiteUpdate {
  /** the site of each access point after the update (access points in no site are left out) */
  readonly site: Map<string, number>;
  /** the highest site id given so far: a dissolved site's id is not given again */
  readonly lastId: number;
}

const centreOf = (points: readonly (readonly [number, number])[]): readonly [number, number] => [
  points.reduce((s, p) => s + p[0], 0) / points.length,
  points.reduce((s, p) => s + p[1], 0) / points.length,
];

/**
 * The original's periodic site update (`SiteUpdater.update_sites`) on the sites there are, each step
 * over the sites in ascending id order (the original's loops take them in its database's order, and
 * its sets of sites yield small ids in ascending order too):
 *
 * 1. members without a position leave their site; then members farther than 1.25 x radius(population)
 *    from their site's centre leave it (centre and population taken before any of them leaves);
 * 2. sites with fewer than MINIMUM_SITE_POPULATION members are dissolved;
 * 3. of two sites where one has a member within radius(MINIMUM_SITE_POPULATION) of the other's centre,
 *    the one with fewer members is dissolved (the one being looked at, on a tie);
 * 4. access points without a site join the first site whose centre is nearer than radius(population);
 * 5. the rest make new sites as `detectSites` does, numbered on from `lastId`.
 *
 * A site keeps its id while it exists. With no sites yet this is `detectSites`.
 */
export function updateSites(aps: readonly Sited[], lastId: number): SiteUpdate {
  const byIp = new Map(aps.map((ap) => [ap.main_ip, ap]));
  const site = new Map<string, number>();
  const members = new Map<number, Set<string>>();
  const assign = (ip: string, id: number | null) => {
    const before = site.get(ip);
    if (before !== undefined) members.get(before)?.delete(ip);
    if (id === null) {
      site.delete(ip);
      return;
    }
    site.set(ip, id);
    let set = members.get(id);
    if (set === undefined) members.set(id, (set = new Set()));
    set.add(ip);
  };
  for (const ap of aps) if (ap.site !== null) assign(ap.main_ip, ap.site);
  const ids = () => [...members.keys()].sort((a, b) => a - b);
  const dissolve = (id: number) => {
    for (const ip of [...(members.get(id) ?? [])]) assign(ip, null);
    members.delete(id);
  };
  const coordinatesOf = (ip: string) => byIp.get(ip)!.coordinates;
  const centre = (id: number) => {
    const points = [...members.get(id)!].map(coordinatesOf).filter((c): c is readonly [number, number] => c !== null);
    return points.length === 0 ? null : centreOf(points);
  };

  for (const id of ids()) for (const ip of [...members.get(id)!]) if (coordinatesOf(ip) === null) assign(ip, null);
  for (const id of ids()) {
    const c = centre(id);
    if (c === null) continue;
    const limit = 1.25 * siteRadius(members.get(id)!.size);
    const away = [...members.get(id)!].filter((ip) => distanceM(coordinatesOf(ip)!, c) > limit);
    for (const ip of away) assign(ip, null);
  }
  for (const id of ids()) if (members.get(id)!.size < MINIMUM_SITE_POPULATION) dissolve(id);

  const positioned = aps.filter((ap): ap is Sited & { coordinates: readonly [number, number] } => ap.coordinates !== null);
  const grid = new Grid(positioned);
  const unprocessed = ids();
  while (unprocessed.length > 0) {
    const id = unprocessed.shift()!;
    const c = centre(id);
    if (c === null) continue;
    const others = new Set<number>();
    for (const ap of grid.near(c, siteRadius(MINIMUM_SITE_POPULATION), (p) => site.has(p.main_ip) && site.get(p.main_ip) !== id))
      others.add(site.get(ap.main_ip)!);
    for (const other of [...others].sort((a, b) => a - b)) {
      if (members.get(id)!.size > members.get(other)!.size) {
        dissolve(other);
        const at = unprocessed.indexOf(other);
        if (at >= 0) unprocessed.splice(at, 1);
      } else {
        dissolve(id);
        break;
      }
    }
  }

  for (const id of ids()) {
    const c = centre(id);
    if (c === null) continue;
    for (const ap of grid.near(c, siteRadius(members.get(id)!.size), (p) => !site.has(p.main_ip))) assign(ap.main_ip, id);
  }

  let next = lastId;
  const fresh = detectSites(aps.filter((ap) => !site.has(ap.main_ip)));
  const renumbered = new Map<number, number>();
  for (const [ip, n] of [...fresh].sort(([, a], [, b]) => a - b)) {
    if (!renumbered.has(n)) renumbered.set(n, ++next);
    assign(ip, renumbered.get(n)!);
  }
  return { site, lastId: next };
}
