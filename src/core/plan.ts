import type { AccesspointEntry, Model, Status } from "./model.ts";
import { STATUSES, statusOf } from "./model.ts";
import { fileKey, NULL_KEY } from "./names.ts";
import { apiRoot, landingPage } from "./pages.ts";
import { renderLink, renderSite } from "./resources.ts";
import { API, fileOf, filterDir, NOT_FOUND_BODY, NOT_FOUND_FILE } from "./routes.ts";
import { createHash } from "node:crypto";
import { dataRules, expressible, NOT_FOUND_PAGE, type DataRules, type PlaceholderValues } from "../hosts/netlify.ts";
import { boundaryVersions, compareVersionKeys, isBefore, versionKeys } from "./version.ts";
import { compareCodePoints } from "./text.ts";
import type { ResolvedLink } from "./validate.ts";

/**
 * A body: text, UTF-8 bytes, or the items of a JSON list as UTF-8 bytes. List items may be rendered
 * lazily (an iterable used once): a list is written in pieces as its items come, never held whole.
 */
export type Body = string | Buffer | Iterable<Buffer>;

export interface OutputFile {
  /** path under the output root, starting with "/" */
  readonly path: string;
  readonly body: Body;
}

/**
 * Every response the API can give for this network, as (file, body) pairs at the places the route
 * table points to. A generator, so the caller writes as it goes instead of holding every body.
 */
export function* outputFiles(model: Model, netlifyRules: DataRules = dataRules(placeholderValues(model))): Generator<OutputFile> {
  const out = (path: string, body: Body): OutputFile => ({ path, body });
  const link = (l: ResolvedLink) => renderLink(l, model);
  const apList = (aps: readonly AccesspointEntry[]) => rendered(aps, (a) => a.json);
  const linkList = (links: readonly ResolvedLink[]) => rendered(links, link);
  const apStatus = (a: AccesspointEntry) => statusOf(a.lastseen_timestamp, model.takenAt);
  const linkStatus = (l: ResolvedLink) => statusOf(l.timestamp, model.takenAt);
  const byStatus = <T>(items: readonly T[], status: (t: T) => Status, s: Status) => items.filter((i) => status(i) === s);

  yield out(NOT_FOUND_FILE, NOT_FOUND_BODY);
  // Netlify answers a rewrite to a missing file (an unknown filter value) with this page.
  yield out("/404.html", NOT_FOUND_PAGE);
  yield out("/_redirects", netlifyRules.text);
  // The ways in: a landing page every static host serves at "/", and the API root.
  yield out("/index.html", landingPage(model));
  yield out(fileOf(`${API}/`), apiRoot(model));

  // Links
  const links = `${API}/link/`;
  yield out(fileOf(links), linkList(model.links));
  for (const s of STATUSES) yield out(fileOf(`${links}_q/status/${s}`), linkList(byStatus(model.links, linkStatus, s)));
  for (const l of model.links) yield out(fileOf(`${links}${l.id}`), link(l));
  for (const [pair, l] of model.linkByPeers) yield out(fileOf(`${links}${pair}`), link(l));

  // Sites
  const site = `${API}/site/`;
  yield out(fileOf(site), rendered(model.sites, (s) => Buffer.from(renderSite(s))));
  for (const s of model.sites) yield out(fileOf(`${site}${s.id}`), renderSite(s));

  // Access points and their filters
  const ap = `${API}/accesspoint/`;
  const aps = model.accesspoints;
  yield out(fileOf(ap), apList(aps));
  for (const s of STATUSES) yield out(fileOf(`${ap}_q/status/${s}`), apList(byStatus(aps, apStatus, s)));
  const filtered = function* (dir: string, members: readonly AccesspointEntry[]) {
    yield out(fileOf(dir), apList(members));
    for (const s of STATUSES) yield out(fileOf(`${dir}status/${s}`), apList(byStatus(members, apStatus, s)));
  };
  const versions = [...new Set(aps.map((a) => a.mesh_version))];
  for (const v of versions) {
    if (v === "") continue; // no request can ask for "" (an empty value means null)
    yield* filtered(filterDir(ap, "firmware_version", v === null ? NULL_KEY : fileKey(v)), aps.filter((a) => a.mesh_version === v));
  }
  for (const { bound, members } of beforeResults(model).written) {
    yield* filtered(filterDir(ap, "firmware_version__before", fileKey(bound)), members);
  }
  for (const [ip, a] of model.accesspointByIp) {
    yield out(fileOf(`${ap}${ip}`), a.json);
    yield out(fileOf(`${ap}${ip}/links/`), linkList(model.linksByAccesspoint.get(a.main_ip) ?? []));
    yield out(fileOf(`${ap}${ip}/interfaces/`), rendered(a.interfaces, (id) => model.interfaceById.get(id)!.json));
  }

  // Interfaces and their filters
  const iface = `${API}/interface/`;
  yield out(fileOf(iface), rendered(model.interfaces, (e) => e.json));
  const bySsid = new Map<string, Buffer[]>();
  const byMac = new Map<string, Buffer[]>();
  for (const e of model.interfaces) {
    if (e.ssid) push(bySsid, e.ssid, e.json);
    if (e.mac) push(byMac, e.mac, e.json);
  }
  for (const [ssid, items] of bySsid) yield out(fileOf(filterDir(iface, "wifi_ssid", fileKey(ssid))), items);
  for (const [mac, items] of byMac) yield out(fileOf(filterDir(iface, "if_hwaddress", fileKey(mac))), items);
  for (const [address, e] of model.interfaceByAddress) {
    yield out(fileOf(`${iface}${address}`), e.json);
    yield out(fileOf(`${iface}${address}/accesspoint/`), e.ap.json);
  }
}

/** Items rendered when the list is written, not when it is queued: a link list never exists whole. */
function* rendered<T>(items: readonly T[], render: (item: T) => Buffer): Generator<Buffer> {
  for (const item of items) yield render(item);
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V) {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** The values present in the data for each data placeholder of the route table, with the aliases among them. */
export function placeholderValues(model: Model): PlaceholderValues {
  const ssids = new Set<string>();
  const macs = new Set<string>();
  for (const e of model.interfaces) {
    if (e.ssid) ssids.add(e.ssid);
    if (e.mac) macs.add(e.mac);
  }
  return {
    values: {
      version: [...new Set(model.accesspoints.flatMap((a) => (a.mesh_version ? [a.mesh_version] : [])))].sort(compareCodePoints),
      bound: beforeValues(model.accesspoints.map((a) => a.mesh_version)),
      ssid: [...ssids].sort(compareCodePoints),
      mac: [...macs].sort(compareCodePoints),
    },
    aliases: { bound: beforeResults(model).aliases },
  };
}

/**
 * `firmware_version__before` bounds and their members. Many bounds select the same access points
 * ("before 0.5" and "before 0.5.1-unstable-845" often do); only the first bound of each result is
 * written, the others become aliases of its file, routed by a literal rule. A bound that a
 * `_redirects` line cannot express keeps a file of its own.
 */
export interface BeforeResults {
  readonly written: readonly { readonly bound: string; readonly members: readonly AccesspointEntry[] }[];
  readonly aliases: ReadonlyMap<string, string>;
}

const beforeCache = new WeakMap<Model, BeforeResults>();

/** Once per model: both the files and the Netlify rules need it. */
export function beforeResults(model: Model): BeforeResults {
  let results = beforeCache.get(model);
  if (!results) beforeCache.set(model, (results = computeBeforeResults(model)));
  return results;
}

function computeBeforeResults(model: Model): BeforeResults {
  const written: { bound: string; members: AccesspointEntry[] }[] = [];
  const aliases = new Map<string, string>();
  const bySignature = new Map<string, string>();
  const index = new Map(model.accesspoints.map((a, i) => [a, i]));
  const keyOf = versionKeys();
  for (const bound of beforeValues(model.accesspoints.map((a) => a.mesh_version))) {
    const key = keyOf(bound);
    const members = model.accesspoints.filter((a) => isBefore(a.mesh_version, key, keyOf));
    const signature = createHash("sha256").update(members.map((a) => index.get(a)).join(",")).digest("hex");
    const first = bySignature.get(signature);
    if (first !== undefined && expressible(bound)) {
      aliases.set(bound, fileKey(first));
      continue;
    }
    if (first === undefined) bySignature.set(signature, bound);
    written.push({ bound, members });
  }
  return { written, aliases };
}

/** Every present non-empty version, and the release-line boundaries derived from them, once each. */
export function beforeValues(versions: readonly (string | null)[]): string[] {
  const values = new Set<string>();
  for (const v of versions) {
    if (!v) continue;
    values.add(v);
    for (const b of boundaryVersions(v)) values.add(b);
  }
  const keyOf = versionKeys();
  return [...values].sort((a, b) => compareVersionKeys(keyOf(a), keyOf(b)) || compareCodePoints(a, b));
}
