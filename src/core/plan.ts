import type { AccesspointEntry, Model } from "./model.ts";
import { createHash } from "node:crypto";
import { groupBy } from "./collections.ts";
import { STATUSES, statusOf } from "./model.ts";
import { accesspointFeature, featureCollection, linkFeature, siteFeature } from "./geojson.ts";
import { apiRoot, landingPage } from "./pages.ts";
import { docsPage } from "./docs.ts";
import { DEFAULT_MAP_SETTINGS, mapPage, type MapSettings } from "./map.ts";
import { OUTPUTS } from "./outputs/index.ts";
import { openApiDocument } from "./openapi.ts";
import { renderLink, renderSite } from "./resources.ts";
import {
  aliasesBody,
  fileFor,
  keyFor,
  NOT_FOUND_BODY,
  QUERY_PLACEHOLDERS,
  rulesFor,
  type Aliases,
  type FileName,
  type Others,
  type Rule,
} from "./routes.ts";
import { withoutRedundantSiteLinks } from "./sitelinks.ts";
import { boundaryVersions, compareVersionKeys, isAfter, isBefore, versionKeys, type VersionKey } from "./version.ts";
import { compareCodePoints } from "./text.ts";
import type { ResolvedLink } from "./validate.ts";
import type { Body } from "./body.ts";

export interface OutputFile {
  /** path under the output root, starting with "/" */
  readonly path: string;
  readonly body: Body;
}

/**
 * Every response the API can give for this network, as (file, body) pairs at the places the route
 * table's templates name (fileFor). A generator, so the caller writes as it goes instead of holding
 * every body. Host files (rules, error pages) are the hosts' business, not the plan's.
 */
export function* outputFiles(model: Model, settings: { readonly map?: MapSettings } = {}): Generator<OutputFile> {
  const out = (path: string, body: Body): OutputFile => ({ path, body });
  const link = (l: ResolvedLink) => renderLink(l, model);
  const apList = (aps: readonly AccesspointEntry[]) => rendered(aps, (a) => a.json);
  const apGeo = (aps: readonly AccesspointEntry[]) => featureCollection(aps, accesspointFeature);
  const linkList = (links: readonly ResolvedLink[]) => rendered(links, link);
  const linkGeo = (links: readonly ResolvedLink[]) => featureCollection(links, (l) => linkFeature(l, model));
  const apStatus = (a: AccesspointEntry) => statusOf(a.lastseen_timestamp, model.takenAt);
  const linkStatus = (l: ResolvedLink) => statusOf(l.timestamp, model.takenAt);

  yield out(fileFor("notFound"), NOT_FOUND_BODY);
  // The ways in: a landing page every static host serves at "/", and the API root.
  yield out(fileFor("landing"), landingPage(model));
  yield out(fileFor("apiRoot"), apiRoot(model));
  yield out(fileFor("aliases"), aliasesBody(placeholderValues(model), model.settings.defaultStatus));
  // Descriptions and views of the API, beside it: OpenAPI, the output records (outputs/), the map (Leaflet's
  // files are copied by io/map-assets.ts), the reference (Swagger UI's by io/docs-assets.ts).
  yield out(fileFor("openapi"), openApiDocument(model.settings));
  for (const o of OUTPUTS) for (const { file, values, body } of o.bodies(model)) yield out(fileFor(file, values), body);
  yield out(fileFor("map"), mapPage(model, settings.map ?? DEFAULT_MAP_SETTINGS));
  yield out(fileFor("docs"), docsPage());

  // Links: all of them and without redundant site links, each as a list and as GeoJSON, with status
  const linkLists = function* (names: readonly [FileName, FileName, FileName, FileName], links: readonly ResolvedLink[]) {
    const [list, byStatus, geo, geoByStatus] = names;
    yield out(fileFor(list), linkList(links));
    yield out(fileFor(geo), linkGeo(links));
    const groups = groupBy(links, linkStatus);
    for (const status of STATUSES) {
      yield out(fileFor(byStatus, { status }), linkList(groups.get(status) ?? []));
      yield out(fileFor(geoByStatus, { status }), linkGeo(groups.get(status) ?? []));
    }
  };
  yield* linkLists(["linkList", "linkListByStatus", "linkListGeojson", "linkListGeojsonByStatus"], model.links);
  yield* linkLists(
    ["linkListNoRedundant", "linkListNoRedundantByStatus", "linkListNoRedundantGeojson", "linkListNoRedundantGeojsonByStatus"],
    withoutRedundantSiteLinks(model),
  );
  for (const l of model.links) yield out(fileFor("linkDetail", { key: String(l.id) }), link(l));
  for (const [pair, l] of model.linkByPeers) yield out(fileFor("linkDetail", { key: pair }), link(l));

  // Sites
  yield out(
    fileFor("siteList"),
    rendered(model.sites, (s) => Buffer.from(renderSite(s))),
  );
  yield out(fileFor("siteListGeojson"), featureCollection(model.sites, siteFeature));
  for (const s of model.sites) yield out(fileFor("siteDetail", { id: String(s.id) }), renderSite(s));

  // Access points and their filters
  const aps = model.accesspoints;
  yield out(fileFor("accesspointList"), apList(aps));
  yield out(fileFor("accesspointListGeojson"), apGeo(aps));
  const apsByStatus = groupBy(aps, apStatus);
  for (const status of STATUSES) {
    yield out(fileFor("accesspointListByStatus", { status }), apList(apsByStatus.get(status) ?? []));
    yield out(fileFor("accesspointListGeojsonByStatus", { status }), apGeo(apsByStatus.get(status) ?? []));
  }
  const filtered = function* (
    list: FileName,
    byStatus: FileName,
    values: Record<string, string | null>,
    members: readonly AccesspointEntry[],
  ) {
    yield out(fileFor(list, values), apList(members));
    const groups = groupBy(members, apStatus);
    for (const status of STATUSES) yield out(fileFor(byStatus, { ...values, status }), apList(groups.get(status) ?? []));
  };
  for (const [version, members] of groupBy(aps, (a) => a.mesh_version)) {
    if (version === "") continue; // no request can ask for "" (an empty value means null)
    yield* filtered("accesspointListByVersion", "accesspointListByVersionStatus", { version }, members);
  }
  for (const { bound, members } of boundResults(model).before.written) {
    yield* filtered("accesspointListBefore", "accesspointListBeforeStatus", { bound }, members);
  }
  for (const { bound, members } of boundResults(model).after.written) {
    yield* filtered("accesspointListAfter", "accesspointListAfterStatus", { after: bound }, members);
  }
  for (const [ip, a] of model.accesspointByIp) {
    yield out(fileFor("accesspointDetail", { ip }), a.json);
    const links = model.linksByAccesspoint.get(a.main_ip) ?? [];
    yield out(fileFor("accesspointLinks", { ip }), linkList(links));
    // Its default without `status`, when the list default is a status (the route table points there).
    const byDefault = model.settings.defaultStatus;
    if (byDefault !== "all")
      yield out(fileFor("accesspointLinksByStatus", { ip, status: byDefault }), linkList(links.filter((l) => linkStatus(l) === byDefault)));
    yield out(
      fileFor("accesspointInterfaces", { ip }),
      rendered(a.interfaces, (id) => model.interfaceById.get(id)!.json),
    );
  }

  // Interfaces and their filters
  yield out(
    fileFor("interfaceList"),
    rendered(model.interfaces, (e) => e.json),
  );
  for (const [ssid, items] of groupBy(model.interfaces, (e) => e.ssid))
    if (ssid)
      yield out(
        fileFor("interfaceListBySsid", { ssid }),
        items.map((e) => e.json),
      );
  for (const [mac, items] of groupBy(model.interfaces, (e) => e.mac))
    if (mac)
      yield out(
        fileFor("interfaceListByMac", { mac }),
        items.map((e) => e.json),
      );
  const byWifi = groupBy(model.interfaces, (e) => e.wifi);
  for (const wifi of [true, false])
    yield out(
      fileFor("interfaceListByWireless", { wireless: String(wifi) }),
      (byWifi.get(wifi) ?? []).map((e) => e.json),
    );
  for (const [ip, e] of model.interfaceByAddress) {
    yield out(fileFor("interfaceDetail", { ip }), e.json);
    yield out(fileFor("interfaceAccesspoint", { ip }), e.ap.json);
  }
}

/** Items rendered when the list is written, not when it is queued: a link list never exists whole. */
function* rendered<T>(items: readonly T[], render: (item: T) => Buffer): Generator<Buffer> {
  for (const item of items) yield render(item);
}

/**
 * Present values of each data placeholder of the route table, and the values whose answer is the
 * file of another value (an alias: one file, several routes).
 */
export interface PlaceholderValues {
  readonly values: Readonly<Record<string, readonly string[]>>;
  readonly aliases: Aliases;
  /** the keys answering a whole class of values (an unparseable firmware bound) */
  readonly others: Others;
  /** the route table of this build (its list default) */
  readonly rules: readonly Rule[];
}

/** The values present in the data for each data placeholder of the route table, with the aliases among them. */
export function placeholderValues(model: Model): PlaceholderValues {
  const ssids = new Set<string>();
  const macs = new Set<string>();
  for (const e of model.interfaces) {
    if (e.ssid) ssids.add(e.ssid);
    if (e.mac) macs.add(e.mac);
  }
  const bounds = beforeValues(model.accesspoints.map((a) => a.mesh_version));
  const { before, after } = boundResults(model);
  return {
    values: {
      version: [...new Set(model.accesspoints.flatMap((a) => (a.mesh_version ? [a.mesh_version] : [])))].sort(compareCodePoints),
      bound: bounds,
      after: bounds,
      ssid: [...ssids].sort(compareCodePoints),
      mac: [...macs].sort(compareCodePoints),
    },
    aliases: new Map([
      ["bound", before.aliases],
      ["after", after.aliases],
    ]),
    others: new Map(after.other === undefined ? [] : [["after", after.other]]),
    rules: rulesFor(model.settings),
  };
}

/**
 * `firmware_version__before` and `__after` bounds and their members. Many bounds select the same
 * access points ("before 0.5" and "before 0.5.1-unstable-845" often do); only the first bound of each
 * result is written, the others become aliases of its file (FILES.aliases), which hosts turn into rules.
 */
export interface BoundResults {
  readonly written: readonly { readonly bound: string; readonly members: readonly AccesspointEntry[] }[];
  readonly aliases: ReadonlyMap<string, string>;
  /** the key of the file that answers every unparseable bound (QueryPlaceholder.other), when one is written */
  readonly other?: string;
}

const boundCache = new WeakMap<Model, { readonly before: BoundResults; readonly after: BoundResults }>();

/** Once per model: both the files and the hosts' rules need them. */
function boundResults(model: Model): { readonly before: BoundResults; readonly after: BoundResults } {
  let results = boundCache.get(model);
  if (!results) {
    const keyOf = versionKeys();
    results = {
      before: computeBoundResults(model, "bound", isBefore, keyOf),
      after: computeBoundResults(model, "after", isAfter, keyOf),
    };
    boundCache.set(model, results);
  }
  return results;
}

function computeBoundResults(
  model: Model,
  placeholder: string,
  passes: (version: string | null, bound: VersionKey, keyOf: (version: string) => VersionKey) => boolean,
  keyOf: (version: string) => VersionKey,
): BoundResults {
  const written: { bound: string; members: AccesspointEntry[] }[] = [];
  const aliases = new Map<string, string>();
  const bySignature = new Map<string, string>();
  const index = new Map(model.accesspoints.map((a, i) => [a, i]));
  const membersOf = (key: VersionKey) => model.accesspoints.filter((a) => passes(a.mesh_version, key, keyOf));
  const signatureOf = (members: readonly AccesspointEntry[]) =>
    createHash("sha256")
      .update(members.map((a) => index.get(a)).join(","))
      .digest("hex");
  for (const bound of beforeValues(model.accesspoints.map((a) => a.mesh_version))) {
    const members = membersOf(keyOf(bound));
    const signature = signatureOf(members);
    const first = bySignature.get(signature);
    if (first !== undefined) {
      aliases.set(bound, keyFor(placeholder, first));
      continue;
    }
    bySignature.set(signature, bound);
    written.push({ bound, members });
  }
  // Every unparseable bound has the empty key. Its answer is always one of the files written (that of
  // the lowest bound, or of a present unparseable version) when any version is present.
  const other = QUERY_PLACEHOLDERS[placeholder]?.other ? bySignature.get(signatureOf(membersOf([]))) : undefined;
  return { written, aliases, ...(other !== undefined && { other: keyFor(placeholder, other) }) };
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
