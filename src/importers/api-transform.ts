import { ACCESSPOINT_FIELDS, WIFI_FIELDS } from "../core/model/fields.ts";
import { statusOf } from "../core/model/model.ts";
import { urlFor } from "../core/routes.ts";
import { NETWORK_FORMAT } from "../core/model/schema.ts";
import { type DefaultStatus, NEUTRAL_PREFIX } from "../core/settings.ts";
import { parseInstant } from "../core/values/timestamp.ts";

/**
 * The pure half of `import api` (importers/api.ts): the original API's lists, as parsed JSON, into
 * the records of a dump in the format `mesh-topology-dump/1`; nothing read or written here.
 */

/** A URL of the route table, relative to the API root (the original answers the same forms). */
const underRoot = (url: string) => url.slice(urlFor("api-root").length);

/** The lists the importer reads, relative to the API's `/api/v1/`. */
export const API_LISTS = {
  accesspoints: underRoot(urlFor("accesspoint-list", { status: "all" })),
  /** what a client gets without `status`: only compared with the full list, for the list default */
  accesspointsByDefault: underRoot(urlFor("accesspoint-list")),
  interfaces: underRoot(urlFor("interface-list")),
  links: underRoot(urlFor("link-list", { status: "all" })),
  sites: underRoot(urlFor("site-list")),
} as const;

export type ApiListName = keyof typeof API_LISTS;

/** The brand-neutral field names with `mesh_` cut off: what follows a brand prefix. */
const BRAND_SUFFIXES = ACCESSPOINT_FIELDS.map(([name]) => name)
  .filter((n) => n.startsWith(NEUTRAL_PREFIX))
  .map((n) => n.slice(NEUTRAL_PREFIX.length));
const AP_FIELDS = new Set<string>(["main_ip", "main_ipv6", "site", ...ACCESSPOINT_FIELDS.map(([name]) => name)]);
const WIFI_NAMES = WIFI_FIELDS.map(([name]) => name);

export interface ApiLists {
  readonly accesspoints: unknown;
  /** the access point list without `status`; without it no list default is recorded */
  readonly accesspointsByDefault?: unknown;
  readonly interfaces: unknown;
  readonly links: unknown;
  readonly sites: unknown;
}

export interface TransformOptions {
  /** the brand prefix of the brand fields (`opennet`); detected from the field names when absent */
  readonly brand?: string;
  /** `taken_at` of the dump: ISO 8601 text */
  readonly takenAt: string;
  readonly name?: string | null;
}

export interface DumpRecords {
  readonly network: {
    format: string;
    name: string | null;
    taken_at: string;
    brand: string | null;
    default_status: DefaultStatus | null;
  };
  readonly accesspoints: Record<string, unknown>[];
  readonly links: Record<string, unknown>[];
  /** the brand prefix that was mapped to `mesh_` (undefined when none was found) */
  readonly brand?: string;
  /** what the server's lists answer without `status` (null when it could not be told) */
  readonly defaultStatus: DefaultStatus | null;
  /** things the dump format cannot hold, left out (unknown fields, extra wifi attributes) */
  readonly notes: string[];
}

/** A problem in one list, located by list and JSON path; importApi adds the URL. */
export class ApiShapeError extends Error {
  constructor(
    readonly list: ApiListName,
    readonly where: string,
    message: string,
  ) {
    super(`${where}: ${message}`);
    this.name = "ApiShapeError";
  }
}

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function objects(list: ApiListName, value: unknown): Obj[] {
  if (!Array.isArray(value)) throw new ApiShapeError(list, "$", `expected a JSON array of ${list}, got ${describe(value)}`);
  value.forEach((item, i) => {
    if (!isObj(item)) throw new ApiShapeError(list, `$[${i}]`, `expected an object, got ${describe(item)}`);
  });
  return value as Obj[];
}

export function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return `an object with the keys ${JSON.stringify(Object.keys(v).slice(0, 6))}`;
  return `${typeof v} ${JSON.stringify(v).slice(0, 60)}`;
}

/**
 * The brand prefix the access point list uses for the brand fields (`opennet_version`, ...): the
 * prefix most fields of the list carry before a known brand suffix. `mesh` when the server already
 * writes the neutral names; undefined when no brand field is present at all.
 */
export function detectBrand(accesspoints: readonly Obj[]): string | undefined {
  const counts = new Map<string, number>();
  for (const ap of accesspoints.slice(0, 50)) {
    for (const key of Object.keys(ap)) {
      if (AP_FIELDS.has(key) && !key.startsWith("mesh_")) continue;
      for (const suffix of BRAND_SUFFIXES) {
        if (key.length > suffix.length + 1 && key.endsWith(`_${suffix}`)) {
          const prefix = key.slice(0, -suffix.length - 1);
          counts.set(prefix, (counts.get(prefix) ?? 0) + 1);
        }
      }
    }
  }
  let best: string | undefined;
  for (const [prefix, n] of counts) if (best === undefined || n > counts.get(best)!) best = prefix;
  return best;
}

/** An interface's id: the list carries it only on its addresses and wifi attributes. */
function interfaceId(iface: Obj): number | undefined {
  for (const key of ["addresses", "wifi_attributes"]) {
    const items = iface[key];
    if (Array.isArray(items)) for (const item of items) if (isObj(item) && typeof item.interface === "number") return item.interface;
  }
  return typeof iface.id === "number" ? iface.id : undefined;
}

/** The lists, each checked to hold what the transform reads before anything is made of them. */
interface CheckedLists {
  readonly aps: readonly Obj[];
  readonly byDefault?: readonly Obj[];
  readonly ifaces: readonly Obj[];
  readonly links: readonly Obj[];
  readonly sites: readonly Obj[];
}

function checkedLists(lists: ApiLists): CheckedLists {
  const checked = {
    aps: objects("accesspoints", lists.accesspoints),
    byDefault: lists.accesspointsByDefault === undefined ? undefined : objects("accesspointsByDefault", lists.accesspointsByDefault),
    ifaces: objects("interfaces", lists.interfaces),
    links: objects("links", lists.links),
    sites: objects("sites", lists.sites),
  };
  for (const [list, aps] of [
    ["accesspoints", checked.aps],
    ["accesspointsByDefault", checked.byDefault ?? []],
  ] as const) {
    aps.forEach((ap, i) => {
      if (typeof ap.main_ip !== "string")
        throw new ApiShapeError(list, `$[${i}].main_ip`, `expected the access point's IPv4 address, got ${describe(ap.main_ip)}`);
    });
  }
  checked.links.forEach((l, i) => {
    if (!Array.isArray(l.endpoints))
      throw new ApiShapeError("links", `$[${i}].endpoints`, `expected an array of endpoints, got ${describe(l.endpoints)}`);
  });
  return checked;
}

/** The site each access point belongs to by the site list, for access points whose own `site` is absent. */
function siteMembership(sites: readonly Obj[]): Map<string, number> {
  const siteOf = new Map<string, number>();
  sites.forEach((s, i) => {
    if (typeof s.id !== "number") throw new ApiShapeError("sites", `$[${i}].id`, `expected the site's id, got ${describe(s.id)}`);
    if (Array.isArray(s.accesspoints)) for (const ip of s.accesspoints) if (typeof ip === "string") siteOf.set(ip, s.id);
  });
  return siteOf;
}

/**
 * The dump's interfaces of each access point. The list names an interface's id only on its addresses
 * and wifi attributes, so one with neither gets an id above every id the list uses.
 */
function interfacesByAccesspoint(ifaces: readonly Obj[], known: ReadonlySet<string>, notes: string[]): Map<string, Obj[]> {
  let nextId = 1 + Math.max(0, ...ifaces.map((f) => interfaceId(f) ?? 0));
  const byAp = new Map<string, Obj[]>();
  ifaces.forEach((f, i) => {
    const owner = f.accesspoint;
    if (typeof owner !== "string")
      throw new ApiShapeError("interfaces", `$[${i}].accesspoint`, `expected the access point's main_ip, got ${describe(owner)}`);
    if (!known.has(owner))
      throw new ApiShapeError(
        "interfaces",
        `$[${i}].accesspoint`,
        `the interface belongs to ${owner}, which the access point list does not hold`,
      );
    const iface = { id: interfaceId(f) ?? nextId++, if_name: f.if_name ?? null, if_hwaddress: f.if_hwaddress ?? null };
    const list = byAp.get(owner) ?? [];
    list.push({ ...iface, addresses: addressesOf(f, i), wifi: wifiOf(f, i, owner, notes) });
    byAp.set(owner, list);
  });
  return byAp;
}

function addressesOf(f: Obj, i: number): Obj[] {
  if (f.addresses !== undefined && !Array.isArray(f.addresses))
    throw new ApiShapeError("interfaces", `$[${i}].addresses`, `expected an array, got ${describe(f.addresses)}`);
  return ((f.addresses as unknown[] | undefined) ?? []).map((a, j) => {
    if (!isObj(a)) throw new ApiShapeError("interfaces", `$[${i}].addresses[${j}]`, `expected an object, got ${describe(a)}`);
    return { id: a.id, address: a.address, netmask_prefixlen: a.netmask_prefixlen };
  });
}

/** The dump holds one wifi attribute set an interface; the API allows several. */
function wifiOf(f: Obj, i: number, owner: string, notes: string[]): Obj | null {
  const sets = Array.isArray(f.wifi_attributes) ? f.wifi_attributes.filter(isObj) : [];
  if (sets.length > 1) notes.push(`interface ${i} of ${owner} has ${sets.length} wifi attribute sets; the dump keeps the first`);
  return sets.length === 0 ? null : Object.fromEntries(WIFI_NAMES.map((n) => [n, sets[0][n] ?? null]));
}

/** A field's name in the dump: a brand field with the neutral prefix, undefined for one the format has no place for. */
function dumpFieldName(key: string, brandPrefix: string | undefined): string | undefined {
  const suffix = brandPrefix !== undefined && key.startsWith(brandPrefix) ? key.slice(brandPrefix.length) : undefined;
  const name = suffix !== undefined && BRAND_SUFFIXES.includes(suffix) ? `${NEUTRAL_PREFIX}${suffix}` : key;
  return AP_FIELDS.has(name) ? name : undefined;
}

function toAccesspoints(
  aps: readonly Obj[],
  brand: string | undefined,
  siteOf: ReadonlyMap<string, number>,
  byAp: ReadonlyMap<string, Obj[]>,
  notes: string[],
): Obj[] {
  // a server that already writes the neutral names has nothing to rename
  const brandPrefix = brand === undefined || brand === "mesh" ? undefined : `${brand}_`;
  const dropped = new Set<string>();
  const accesspoints = aps.map((ap) => {
    // made at once from its entries: an object given its ~45 names one by one becomes a hash table
    // in V8, six times the memory (110 MB at 40,000 access points)
    const entries: [string, unknown][] = [];
    for (const [key, value] of Object.entries(ap)) {
      const name = dumpFieldName(key, brandPrefix);
      if (name !== undefined) entries.push([name, value]);
      else if (key !== "interfaces") dropped.add(key);
    }
    if (!Object.hasOwn(ap, "site") || ap.site === undefined) entries.push(["site", siteOf.get(ap.main_ip as string) ?? null]);
    entries.push(["interfaces", byAp.get(ap.main_ip as string) ?? []]);
    return Object.fromEntries(entries) as Obj;
  });
  if (dropped.size > 0) notes.push(`access point fields the dump format has no place for, left out: ${[...dropped].sort().join(", ")}`);
  return accesspoints;
}

function toLinks(links: readonly Obj[]): Obj[] {
  return links.map((l, i) => ({
    id: l.id,
    timestamp: l.timestamp ?? null,
    endpoints: (l.endpoints as unknown[]).map((e, j) => toEndpoint(e, `$[${i}].endpoints[${j}]`)),
  }));
}

/** An endpoint by its interface's id, else by the interface's first address when the list names no id. */
function toEndpoint(e: unknown, where: string): Obj {
  if (!isObj(e)) throw new ApiShapeError("links", where, `expected an object, got ${describe(e)}`);
  const f = e.interface;
  const id = typeof f === "number" ? f : isObj(f) ? interfaceId(f) : undefined;
  if (id !== undefined) return { interface: id, quality: e.quality };
  const first = isObj(f) && Array.isArray(f.addresses) && isObj(f.addresses[0]) ? f.addresses[0].address : undefined;
  if (typeof first === "string") return { address: first, quality: e.quality };
  throw new ApiShapeError("links", `${where}.interface`, `expected an interface with an address, got ${describe(f)}`);
}

/**
 * What the server's lists answer without `status`, told from its access point list without `status`
 * (`byDefault`) and with `status=all`: the same access points, "all"; fewer, and each of them online
 * at `takenAt` by the rule the build filters by (core/model/model.ts `statusOf`), "online" (the
 * original server's default). Anything else is recorded as unknown (null), with a note that says why.
 */
export function detectDefaultStatus(
  byDefault: readonly Obj[],
  all: readonly Obj[],
  takenAt: string,
): { readonly status: DefaultStatus | null; readonly note?: string } {
  const allIps = new Set(all.map((ap) => ap.main_ip));
  const defaultIps = new Set(byDefault.map((ap) => ap.main_ip));
  const unknown = [...defaultIps].filter((ip) => !allIps.has(ip));
  const unsure = (why: string) => ({ status: null, note: `default_status not recorded: the access point list without status ${why}` });
  if (unknown.length > 0)
    return unsure(`holds ${unknown.length} access points that the list with status=all does not hold (${unknown[0]}, ...)`);
  if (defaultIps.size === allIps.size) return { status: "all" };
  const at = parseInstant(takenAt);
  const instant = (text: unknown) => (typeof text === "string" ? parseInstant(text) : null);
  const notOnline = byDefault.filter((ap) => {
    const seen = instant(ap.lastseen_timestamp);
    return typeof at === "string" || typeof seen === "string" || statusOf(seen, at) !== "online";
  });
  if (notOnline.length > 0)
    return unsure(
      `holds ${defaultIps.size} of ${allIps.size} access points, ${notOnline.length} of them not online at taken_at ${takenAt} (${String(notOnline[0].main_ip)}, ...)`,
    );
  return { status: "online" };
}

/** The API's lists to dump records. Throws ApiShapeError for a list of the wrong shape. */
export function apiToDump(lists: ApiLists, options: TransformOptions): DumpRecords {
  const { aps, byDefault, ifaces, links, sites } = checkedLists(lists);
  const notes: string[] = [];
  const brand = options.brand ?? detectBrand(aps);
  const siteOf = siteMembership(sites);
  const byAp = interfacesByAccesspoint(ifaces, new Set(aps.map((ap) => ap.main_ip as string)), notes);
  const accesspoints = toAccesspoints(aps, brand, siteOf, byAp, notes);
  const listDefault = byDefault === undefined ? { status: null } : detectDefaultStatus(byDefault, aps, options.takenAt);
  if (listDefault.note !== undefined) notes.push(listDefault.note);
  return {
    network: {
      format: NETWORK_FORMAT,
      name: options.name ?? null,
      taken_at: options.takenAt,
      brand: brand ?? null,
      default_status: listDefault.status,
    },
    accesspoints,
    links: toLinks(links),
    brand,
    defaultStatus: listDefault.status,
    notes,
  };
}
