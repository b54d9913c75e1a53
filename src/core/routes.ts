import { API, API_DIR } from "./base.ts";
import { fileKey, NULL_KEY, unkey } from "./names.ts";
import { OUTPUTS, type OutputFiles, type OutputKind, type OutputRecord } from "./outputs/index.ts";
import { DEFAULT_SETTINGS, DEFAULT_STATUSES, type DefaultStatus } from "./settings.ts";
import { isParseableVersion } from "./version.ts";

/**
 * The route table: every URL form of the API and where its answer lives under the build output.
 * It is the single source of truth for the preview server's routing (serve/preview.ts), every
 * host's rules (hosts/), the API root (pages.ts) and the list of requests the tests make. What a rule
 * means, for the preview and every host alike: the first matching rule wins; a query condition is a
 * literal value (compared with the decoded request value, case-sensitively) or a `:placeholder`;
 * parameters a rule does not name are ignored; placeholders stand for whole path segments only.
 */

export { API, API_DIR } from "./base.ts";

/** Headers of every API response (preview and hosts). */
export const API_HEADERS: Readonly<Record<string, string>> = {
  "Content-Type": "application/json",
  Allow: "GET, HEAD, OPTIONS",
  Vary: "Accept",
  "Access-Control-Allow-Origin": "*",
};
export const NOT_FOUND_BODY = '{"detail":"Not found."}';

/** The preview's other error answers (a static host has its own), worded as Django REST framework words them. */
export const ERROR_DETAILS = {
  malformed: "Malformed request.",
  uriTooLong: "Request URI too long.",
  headerTooLarge: "Request header fields too large.",
  internal: "Internal error.",
} as const;
export const methodNotAllowed = (method: string): string => `Method "${method}" not allowed.`;
export const errorBody = (detail: string): string => JSON.stringify({ detail });

export type RouteKind =
  | "api-root"
  | "link-list"
  | "link-detail"
  | "site-list"
  | "site-detail"
  | "accesspoint-list"
  | "accesspoint-detail"
  | "accesspoint-links"
  | "accesspoint-interfaces"
  | "interface-list"
  | "interface-detail"
  | "interface-accesspoint"
  | "openapi"
  | OutputKind
  | "not-found";

/** The name of each route in its answer to OPTIONS (Django REST framework's view names, as the original gave them). */
export const ROUTE_NAMES: Readonly<Record<RouteKind, string>> = {
  "api-root": "Api Root",
  "link-list": "Link List",
  "link-detail": "Link Detail",
  "site-list": "Site List",
  "site-detail": "Site Detail",
  "accesspoint-list": "Accesspoint List",
  "accesspoint-detail": "Accesspoint Detail",
  "accesspoint-links": "Accesspoint Link List",
  "accesspoint-interfaces": "Accesspoint Interface List",
  "interface-list": "Interface List",
  "interface-detail": "Interface Detail",
  "interface-accesspoint": "Interface Accesspoint Detail",
  openapi: "OpenAPI Document",
  ...(Object.fromEntries(OUTPUTS.map((o) => [o.kind, o.name])) as Record<OutputKind, string>),
  "not-found": "Not Found",
};

/** The answer to OPTIONS on a route whose file exists, as Django REST framework's metadata gives it. */
export function optionsBody(kind: RouteKind): string {
  return JSON.stringify({ name: ROUTE_NAMES[kind], description: "", renders: [API_HEADERS["Content-Type"]], parses: [] });
}

export interface Rule {
  readonly kind: RouteKind;
  /** canonical request path; `:name` segments are placeholders; a trailing "/" marks a list form */
  readonly from: string;
  /** query conditions: a literal value (possibly "") or a `:placeholder` */
  readonly query: Readonly<Record<string, string>>;
  /** target file under the output root, with placeholders; null for a 404 */
  readonly to: string | null;
}

/** How a query placeholder's value becomes part of a file name. */
export interface QueryPlaceholder {
  /** values are compared case-insensitively (the preview folds them; hosts need a rule per case) */
  readonly fold?: "lower";
  /** whether the values come from the data (and so may need explicit per-value rules on a host) */
  readonly data: boolean;
  /**
   * Values that all get one answer, whatever they say (an unparseable `__after` bound keeps every
   * non-null version): the build names that answer's key (Routing.others), and a host that can test
   * a value against the class serves it for any such value; one that cannot answers 404.
   */
  readonly other?: (value: string) => boolean;
}

export const QUERY_PLACEHOLDERS: Readonly<Record<string, QueryPlaceholder>> = {
  status: { data: false },
  version: { data: true },
  bound: { data: true },
  after: { data: true, other: (value) => !isParseableVersion(value) },
  ssid: { data: true },
  mac: { data: true, fold: "lower" },
  a: { data: false },
  b: { data: false },
};

/** The start of the build's hidden names (no host serves them); a host names its own internal paths after it. */
export const HIDDEN = "/.mesh-api";

/** The file a static host serves for a folder's URL (`/`, `/snapshots/`, `/map/`). */
export const FOLDER_INDEX = "index.html";
/** The map's folder: its page is the folder's index. */
export const MAP_FOLDER = "/map/";
/**
 * The API reference's folder (docs.ts): a page and its static files inside the API's path, yet no
 * part of the API. The preview and every host serve it as the site's other files (the folder's
 * index, each file with the type of its name, a 301 to the slash), not through the route table.
 */
export const DOCS_FOLDER = `${API}/docs/`;

/** The API's files (the record outputs' and the site's follow in FILES). */
const API_FILES = {
  notFound: "/api/404.json",
  apiRoot: `${API}/index.json`,
  linkList: `${API}/link/index.json`,
  linkListByStatus: `${API}/link/_q/status/:status/index.json`,
  linkListGeojson: `${API}/link/_q/data_format/geojson/index.json`,
  linkListGeojsonByStatus: `${API}/link/_q/data_format/geojson/status/:status/index.json`,
  linkListNoRedundant: `${API}/link/_q/with_redundant_site_links/0/index.json`,
  linkListNoRedundantByStatus: `${API}/link/_q/with_redundant_site_links/0/status/:status/index.json`,
  linkListNoRedundantGeojson: `${API}/link/_q/with_redundant_site_links/0/data_format/geojson/index.json`,
  linkListNoRedundantGeojsonByStatus: `${API}/link/_q/with_redundant_site_links/0/data_format/geojson/status/:status/index.json`,
  linkDetail: `${API}/link/:key/index.json`,
  siteList: `${API}/site/index.json`,
  siteListGeojson: `${API}/site/_q/data_format/geojson/index.json`,
  siteDetail: `${API}/site/:id/index.json`,
  accesspointList: `${API}/accesspoint/index.json`,
  accesspointListByStatus: `${API}/accesspoint/_q/status/:status/index.json`,
  accesspointListGeojson: `${API}/accesspoint/_q/data_format/geojson/index.json`,
  accesspointListGeojsonByStatus: `${API}/accesspoint/_q/data_format/geojson/status/:status/index.json`,
  accesspointListByVersion: `${API}/accesspoint/_q/firmware_version/:version/index.json`,
  accesspointListByVersionStatus: `${API}/accesspoint/_q/firmware_version/:version/status/:status/index.json`,
  accesspointListBefore: `${API}/accesspoint/_q/firmware_version__before/:bound/index.json`,
  accesspointListBeforeStatus: `${API}/accesspoint/_q/firmware_version__before/:bound/status/:status/index.json`,
  accesspointListAfter: `${API}/accesspoint/_q/firmware_version__after/:after/index.json`,
  accesspointListAfterStatus: `${API}/accesspoint/_q/firmware_version__after/:after/status/:status/index.json`,
  accesspointDetail: `${API}/accesspoint/:ip/index.json`,
  accesspointLinks: `${API}/accesspoint/:ip/links/index.json`,
  /** written only when the list default is a status (`--default-status online`): the default of `/links/` */
  accesspointLinksByStatus: `${API}/accesspoint/:ip/links/_q/status/:status/index.json`,
  accesspointInterfaces: `${API}/accesspoint/:ip/interfaces/index.json`,
  interfaceList: `${API}/interface/index.json`,
  interfaceListBySsid: `${API}/interface/_q/wifi_ssid/:ssid/index.json`,
  interfaceListByMac: `${API}/interface/_q/if_hwaddress/:mac/index.json`,
  /** `:wireless` is "true" or "false": the literal rules of every accepted spelling point here */
  interfaceListByWireless: `${API}/interface/_q/is_wireless/:wireless/index.json`,
  interfaceDetail: `${API}/interface/:ip/index.json`,
  interfaceAccesspoint: `${API}/interface/:ip/accesspoint/index.json`,
  /** the OpenAPI 3.1 description of the API (openapi.ts) */
  openapi: `${API}/openapi.json`,
} as const;

const SITE_FILES = {
  /** the map (map.ts): its page and script, and the Leaflet files copied beside them (io/map-assets.ts) */
  map: `${MAP_FOLDER}${FOLDER_INDEX}`,
  mapScript: "/map/map.js",
  leaflet: "/map/leaflet/:asset",
  leafletImage: "/map/leaflet/images/:image",
  /** the API reference (docs.ts): its page and script, and Swagger UI's files copied beside them (io/docs-assets.ts) */
  docs: `${DOCS_FOLDER}${FOLDER_INDEX}`,
  docsScript: `${DOCS_FOLDER}docs.js`,
  swaggerUi: `${DOCS_FOLDER}:asset`,
  /** the landing page every static host serves at "/" */
  landing: `/${FOLDER_INDEX}`,
  /** the mark of a folder this tool wrote (io/ownership.ts); hidden: hosts and the preview do not serve it */
  marker: `${HIDDEN}-output`,
  /** what a build records about itself: its dump and its files (io/build-record.ts); hidden like the marker */
  buildRecord: `${HIDDEN}-build.json`,
  /** the digest of every file a recyclable build wrote (io/emit.ts): the next build into that tree rewrites only what changed; hidden like the marker */
  fileDigests: `${HIDDEN}-files.json`,
  /** filter values whose answer is the file of another value (one file, several routes), for every host */
  aliases: `${HIDDEN}-aliases.json`,
  /** host files: the page a host serves for a missing file, and the literal rules of a host that reads them from the build */
  notFoundPage: "/404.html",
  redirectRules: "/_redirects",
} as const;

/**
 * Every file the build writes, as a template: `:name` is filled by fileFor(). Rules point at these,
 * the plan fills them, and check and the tests map files back to them. No other code spells an
 * output path; the output records (outputs/) bring their own. Filter results live under `_q/`,
 * which no IP address or id can be.
 */
export const FILES = {
  ...API_FILES,
  ...(Object.assign({}, ...OUTPUTS.map((o) => o.files)) as OutputFiles),
  ...SITE_FILES,
} as const;

export type FileName = keyof typeof FILES;

/**
 * The files answered as the API answers (its headers, JSON): every file under the API's folder but
 * the reference's (`except`), and the output records' files outside it (fixed names: `/freifunk/…`),
 * which the route table routes too. Every host sends these with API_HEADERS, `check` compares them,
 * the API snapshot holds them.
 */
export const API_SERVED: { readonly folder: string; readonly except: string; readonly files: readonly string[] } = {
  folder: `/${API_DIR}/`,
  except: DOCS_FOLDER,
  files: OUTPUTS.flatMap((o) => Object.values<string>(o.files)).filter((f) => !f.startsWith(`/${API_DIR}/`)),
};
for (const file of API_SERVED.files) if (file.includes(":")) throw new Error(`${file}: an output outside the API has a fixed name`);

/** API_SERVED as fast-glob patterns relative to the output root. */
export const API_SERVED_GLOBS: readonly string[] = [
  `${API_SERVED.folder.slice(1)}**`,
  `!${API_SERVED.except.slice(1)}**`,
  ...API_SERVED.files.map((f) => f.slice(1)),
];

/** Whether a decoded request path is the reference's folder, with or without its slash, or under it. */
export function isDocsPath(requestPath: string): boolean {
  return requestPath === DOCS_FOLDER.slice(0, -1) || requestPath.startsWith(DOCS_FOLDER);
}

/** The snapshots folder (publish/snapshot.ts writes it after the API) and its files, relative to it. */
export const SNAPSHOT_DIR = "snapshots";
export const SNAPSHOT_FILES = {
  index: "index.json",
  listing: FOLDER_INDEX,
  sums: "SHA256SUMS",
  /** one archive of the dump and one of the API per UTC day */
  archive: /^mesh-(topology|api-v1)-\d{4}-\d{2}-\d{2}\.tar\.gz$/,
} as const;

/** An archive of a snapshot: its top folder inside the archive, and its file name in the snapshots folder. */
export function snapshotArchive(kind: "dump" | "api", date: string): { readonly folder: string; readonly file: string } {
  const folder = `mesh-${kind === "dump" ? "topology" : "api-v1"}-${date}`;
  return { folder, file: `${folder}.tar.gz` };
}

/**
 * The one place a placeholder's value becomes part of a file name. Path placeholders (`key`, `id`,
 * `ip`) hold validated values (the plan) or safe segments (matchPath) and are used as they are;
 * every query value becomes a key (names.ts), a MAC in lower case, the null version
 * (`firmware_version=`) NULL_KEY.
 */
export function keyFor(placeholder: string, value: string | null): string {
  if (value === null) return NULL_KEY;
  const spec = QUERY_PLACEHOLDERS[placeholder];
  if (!spec) return value;
  return fileKey(spec.fold === "lower" ? value.toLowerCase() : value);
}

/** The file of a template filled with raw values; placeholders not given stay (a rule's target). */
export function fileFor(name: FileName, values: Readonly<Record<string, string | null>> = {}): string {
  return fill(FILES[name], values);
}

function fill(template: string, values: Readonly<Record<string, string | null>>): string {
  return template.replace(/:([a-z]+)/g, (whole, name: string) => (name in values ? keyFor(name, values[name]) : whole));
}

const r = (kind: RouteKind, from: string, query: Record<string, string>, to: string | null): Rule => ({ kind, from, query, to });

/**
 * A list with a status filter. `status=all` means no filter; `status=` (empty) means the parameter was
 * not given, as an empty value does for every filter, and so answers the list's default like a
 * request without `status`: the whole list, or with `--default-status online` the online file.
 */
function withStatus(
  kind: RouteKind,
  from: string,
  query: Record<string, string>,
  file: string,
  statusFile: string,
  byDefault: DefaultStatus = "all",
): Rule[] {
  const fallback = byDefault === "all" ? file : fill(statusFile, { status: byDefault });
  return [
    r(kind, from, { ...query, status: "all" }, file),
    r(kind, from, { ...query, status: "" }, fallback),
    r(kind, from, { ...query, status: ":status" }, statusFile),
    r(kind, from, query, fallback),
  ];
}

/** Detail and sub-resource paths take no filters; `status=all` (or empty) is accepted, any other status is not precomputed. */
function unfiltered(kind: RouteKind, from: string, file: string): Rule[] {
  return [
    r(kind, from, { status: "all" }, file),
    r(kind, from, { status: "" }, file),
    r(kind, from, { status: ":status" }, null),
    r(kind, from, {}, file),
  ];
}

/**
 * An access point's links follow the list default: with `online`, a request without `status` (or
 * with `status=online`) answers its online links, which the build then writes; other statuses are
 * not precomputed for it.
 */
function accesspointLinks(from: string, byDefault: DefaultStatus): Rule[] {
  if (byDefault === "all") return unfiltered("accesspoint-links", from, FILES.accesspointLinks);
  const online = fill(FILES.accesspointLinksByStatus, { status: byDefault });
  return [
    r("accesspoint-links", from, { status: "all" }, FILES.accesspointLinks),
    r("accesspoint-links", from, { status: "" }, online),
    r("accesspoint-links", from, { status: byDefault }, online),
    r("accesspoint-links", from, { status: ":status" }, null),
    r("accesspoint-links", from, {}, online),
  ];
}

/** Every spelling of a word in any letter case ("true", "True", "tRuE", ...): a rule matches query values literally. */
export function letterCases(word: string): string[] {
  let out = [""];
  for (const c of word) out = out.flatMap((prefix) => [...new Set([c.toLowerCase(), c.toUpperCase()])].map((x) => prefix + x));
  return out;
}

/** The accepted values of `is_wireless` (the original: "true"/"false" in any case, "1", "0"), by the file they select. */
export const IS_WIRELESS_VALUES: Readonly<Record<"true" | "false", readonly string[]>> = {
  true: [...letterCases("true"), "1"],
  false: [...letterCases("false"), "0"],
};

/**
 * Query parameters no rule names, so every host ignores them: the answer is that of the same request
 * without them. `in_bbox` is the box the original's map (OpenLayers' bbox strategy) sends with every
 * list request; a static host cannot cut arbitrary boxes, so it gets the whole list, a superset of
 * the box, which the map draws correctly.
 */
export const IGNORED_PARAMETERS = {
  format: {
    on: "every endpoint",
    values: ["api", "json"],
    why: "`format=api` answers the same JSON (the original rendered an HTML page).",
  },
  in_bbox: {
    on: "lists",
    values: ["12.0,54.0,12.2,54.2"],
    why: "A static copy cannot cut arbitrary boxes: any value (malformed too) answers the whole list, a superset of the box's items.",
  },
} as const;

function buildRules(byDefault: DefaultStatus): Rule[] {
  const ap = `${API}/accesspoint/`;
  const link = `${API}/link/`;
  const iface = `${API}/interface/`;
  const site = `${API}/site/`;
  const fv = "firmware_version";
  const fvb = "firmware_version__before";
  const fva = "firmware_version__after";
  const redundant = "with_redundant_site_links";
  // Exactly this lower-case value selects GeoJSON (the original compares it so); any other value is ignored.
  const geojson = { data_format: "geojson" };
  const F = FILES;
  // The lists whose answer without `status` is the site's default.
  const list = (kind: RouteKind, from: string, query: Record<string, string>, file: string, statusFile: string) =>
    withStatus(kind, from, query, file, statusFile, byDefault);
  return [
    // The API root: the endpoints and their filters (pages.ts). Not in the recorded original, which answered 404.
    r("api-root", `${API}/`, {}, F.apiRoot),
    // Files of their own, not resources of the original: their paths are file names, without a slash.
    r("openapi", F.openapi, {}, F.openapi),
    ...OUTPUTS.flatMap(outputRules),
    // Link list (GeoJSON, without redundant site links, status) and link by id or by peers (one path
    // form on hosts: placeholders cannot split a segment). with_redundant_site_links other than "0" changes nothing.
    ...list("link-list", link, { ...geojson, [redundant]: "0" }, F.linkListNoRedundantGeojson, F.linkListNoRedundantGeojsonByStatus),
    ...list("link-list", link, geojson, F.linkListGeojson, F.linkListGeojsonByStatus),
    ...list("link-list", link, { [redundant]: "0" }, F.linkListNoRedundant, F.linkListNoRedundantByStatus),
    ...list("link-list", link, {}, F.linkList, F.linkListByStatus),
    ...unfiltered("link-detail", `${link}:key`, F.linkDetail),
    // Sites ignore every other parameter, status too, as the original does.
    r("site-list", site, geojson, F.siteListGeojson),
    r("site-list", site, {}, F.siteList),
    r("site-detail", `${site}:id`, {}, F.siteDetail),
    // Access point list: one firmware filter, optionally with status; GeoJSON alone or with status.
    // Two firmware filters, and GeoJSON with a firmware filter, are not precomputed.
    r("accesspoint-list", ap, { [fv]: ":a", [fvb]: ":b" }, null),
    r("accesspoint-list", ap, { [fv]: ":a", [fva]: ":b" }, null),
    r("accesspoint-list", ap, { [fvb]: ":a", [fva]: ":b" }, null),
    r("accesspoint-list", ap, { ...geojson, [fv]: ":a" }, null),
    ...list("accesspoint-list", ap, { ...geojson, [fvb]: "" }, F.accesspointListGeojson, F.accesspointListGeojsonByStatus),
    r("accesspoint-list", ap, { ...geojson, [fvb]: ":a" }, null),
    ...list("accesspoint-list", ap, { ...geojson, [fva]: "" }, F.accesspointListGeojson, F.accesspointListGeojsonByStatus),
    r("accesspoint-list", ap, { ...geojson, [fva]: ":a" }, null),
    ...list("accesspoint-list", ap, geojson, F.accesspointListGeojson, F.accesspointListGeojsonByStatus),
    ...list(
      "accesspoint-list",
      ap,
      { [fv]: "" },
      fill(F.accesspointListByVersion, { version: null }),
      fill(F.accesspointListByVersionStatus, { version: null }),
    ),
    ...list("accesspoint-list", ap, { [fv]: ":version" }, F.accesspointListByVersion, F.accesspointListByVersionStatus),
    ...list("accesspoint-list", ap, { [fvb]: "" }, F.accesspointList, F.accesspointListByStatus),
    ...list("accesspoint-list", ap, { [fvb]: ":bound" }, F.accesspointListBefore, F.accesspointListBeforeStatus),
    ...list("accesspoint-list", ap, { [fva]: "" }, F.accesspointList, F.accesspointListByStatus),
    ...list("accesspoint-list", ap, { [fva]: ":after" }, F.accesspointListAfter, F.accesspointListAfterStatus),
    ...list("accesspoint-list", ap, {}, F.accesspointList, F.accesspointListByStatus),
    ...unfiltered("accesspoint-detail", `${ap}:ip`, F.accesspointDetail),
    ...accesspointLinks(`${ap}:ip/links/`, byDefault),
    ...unfiltered("accesspoint-interfaces", `${ap}:ip/interfaces/`, F.accesspointInterfaces),
    // Interface list: one of wifi_ssid, if_hwaddress or is_wireless; an empty value means no filter.
    // is_wireless has a literal rule per accepted spelling (hosts match query values case-sensitively);
    // any other value is refused. Status is ignored.
    r("interface-list", iface, { wifi_ssid: ":a", if_hwaddress: ":b" }, null),
    r("interface-list", iface, { is_wireless: ":a", wifi_ssid: ":b" }, null),
    r("interface-list", iface, { is_wireless: ":a", if_hwaddress: ":b" }, null),
    ...(["true", "false"] as const).flatMap((wireless) =>
      IS_WIRELESS_VALUES[wireless].map((value) =>
        r("interface-list", iface, { is_wireless: value }, fill(F.interfaceListByWireless, { wireless })),
      ),
    ),
    r("interface-list", iface, { is_wireless: "" }, F.interfaceList),
    r("interface-list", iface, { is_wireless: ":a" }, null),
    r("interface-list", iface, { wifi_ssid: "" }, F.interfaceList),
    r("interface-list", iface, { wifi_ssid: ":ssid" }, F.interfaceListBySsid),
    r("interface-list", iface, { if_hwaddress: "" }, F.interfaceList),
    r("interface-list", iface, { if_hwaddress: ":mac" }, F.interfaceListByMac),
    r("interface-list", iface, {}, F.interfaceList),
    ...unfiltered("interface-detail", `${iface}:ip`, F.interfaceDetail),
    ...unfiltered("interface-accesspoint", `${iface}:ip/accesspoint/`, F.interfaceAccesspoint),
    r("not-found", "/api/*", {}, null),
  ];
}

/**
 * An output record's routes: its path is its file's; with a file per status, `status` selects it
 * (the whole output without one, whatever the list default: it is no list of the original's).
 */
function outputRules(o: OutputRecord): Rule[] {
  const kind = o.kind as OutputKind;
  const file = o.files[o.file];
  return o.byStatus === undefined ? [r(kind, file, {}, file)] : withStatus(kind, file, {}, file, o.files[o.byStatus]);
}

const rulesByDefault = new Map<DefaultStatus, readonly Rule[]>();

/** The route table of a build: the list default decides what a list without `status` answers. */
export function rulesFor(settings: { readonly defaultStatus: DefaultStatus }): readonly Rule[] {
  let rules = rulesByDefault.get(settings.defaultStatus);
  if (!rules) rulesByDefault.set(settings.defaultStatus, (rules = buildRules(settings.defaultStatus)));
  return rules;
}

/** The route table with the API description's defaults. */
export const RULES: readonly Rule[] = rulesFor(DEFAULT_SETTINGS);

export interface Request {
  /** decoded path */
  readonly path: string;
  /** decoded query parameters; for a repeated name the last value counts (as on the hosts) */
  readonly params: ReadonlyMap<string, string>;
}

export type Resolution =
  | { readonly type: "file"; readonly rule: Rule; readonly file: string }
  | { readonly type: "redirect"; readonly rule: Rule; readonly location: string }
  | { readonly type: "not-found"; readonly rule?: Rule };

/**
 * Filter values answered by the file of another value (`firmware_version__before` bounds with the
 * same result): placeholder -> value -> key. The plan decides them; the build writes them to
 * FILES.aliases for the preview and check, and hosts turn them into rules of their own.
 */
export type Aliases = ReadonlyMap<string, ReadonlyMap<string, string>>;

/** The key answering every value of a placeholder's `other` class (QueryPlaceholder.other): placeholder -> key. */
export type Others = ReadonlyMap<string, string>;

/**
 * Resolves a request the way the preview serves it: the rules' matching (above), plus the original API's
 * path-form rules that static hosts cannot express (a list path without its slash redirects; a
 * detail path with a trailing slash is not found). Placeholder values become file-name keys.
 */
export function resolve(
  req: Request,
  aliases: Aliases = new Map(),
  rules: readonly Rule[] = RULES,
  others: Others = new Map(),
): Resolution {
  for (const rule of rules) {
    const m = matchPath(rule.from, req.path);
    if (!m) continue;
    const values = matchQuery(rule.query, req.params, aliases, others);
    if (!values) continue;
    // A placeholder with an empty value names no file (on a static host too: the target is missing).
    if (rule.kind === "not-found" || rule.to === null || Object.values(values).includes("")) return { type: "not-found", rule };
    if (rule.from.endsWith("/") && !m.slash) return { type: "redirect", rule, location: `${req.path}/` };
    if (!rule.from.endsWith("/") && m.slash) continue;
    return { type: "file", rule, file: substitute(rule.to, { ...m.values, ...values }) };
  }
  return { type: "not-found" };
}

function matchPath(pattern: string, path: string): { values: Record<string, string>; slash: boolean } | undefined {
  if (pattern.endsWith("/*"))
    return path === pattern.slice(0, -2) || path.startsWith(pattern.slice(0, -1)) ? { values: {}, slash: false } : undefined;
  const slash = path.endsWith("/") && path.length > 1;
  const want = patternSegments(pattern);
  const got = (slash ? path.slice(0, -1) : path).split("/");
  if (want.length !== got.length) return undefined;
  const values: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i].startsWith(":")) {
      if (!isSafeSegment(got[i])) return undefined;
      values[want[i].slice(1)] = got[i];
    } else if (want[i] !== got[i]) return undefined;
  }
  return { values, slash };
}

/** Patterns are few, requests many: each pattern is split once. */
const splitPatterns = new Map<string, readonly string[]>();
function patternSegments(pattern: string): readonly string[] {
  let segments = splitPatterns.get(pattern);
  if (!segments) splitPatterns.set(pattern, (segments = pattern.replace(/\/$/, "").split("/")));
  return segments;
}

/** A path placeholder is used verbatim in a file name: refuse anything that could leave its folder. */
function isSafeSegment(segment: string): boolean {
  return segment !== "" && segment !== "." && segment !== ".." && !/[\\\0\u0001-\u001f\u007f]/.test(segment);
}

function matchQuery(
  query: Readonly<Record<string, string>>,
  params: ReadonlyMap<string, string>,
  aliases: Aliases,
  others: Others,
): Record<string, string> | undefined {
  const values: Record<string, string> = {};
  for (const [name, want] of Object.entries(query)) {
    const got = params.get(name);
    if (got === undefined) return undefined;
    if (want.startsWith(":")) {
      const placeholder = want.slice(1);
      // An empty value stays empty: it names no file.
      values[placeholder] =
        got === "" ? "" : (aliases.get(placeholder)?.get(got) ?? otherKey(placeholder, got, others) ?? keyFor(placeholder, got));
    } else if (want !== got) return undefined;
  }
  return values;
}

function otherKey(placeholder: string, value: string, others: Others): string | undefined {
  const key = others.get(placeholder);
  return key !== undefined && QUERY_PLACEHOLDERS[placeholder]?.other?.(value) ? key : undefined;
}

function substitute(pattern: string, values: Record<string, string>): string {
  return pattern.replace(/:([a-z]+)/g, (_, name: string) => values[name] ?? `:${name}`);
}

/**
 * What a host needs from a build to route it beyond the route table's templates: the filter aliases,
 * and the list default that picks the table. The build writes it to FILES.aliases.
 */
export interface Routing {
  readonly aliases: Aliases;
  readonly others: Others;
  readonly rules: readonly Rule[];
}

/**
 * The routing file as the build writes it (FILES.aliases): sorted, so the file is deterministic; the
 * list default only when it is not the API description's, so such builds keep their bytes.
 */
export function aliasesBody(
  routing: { readonly aliases: Aliases; readonly others: Others },
  defaultStatus: DefaultStatus = DEFAULT_SETTINGS.defaultStatus,
): string {
  const sorted = (map: ReadonlyMap<string, string>) => Object.fromEntries([...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const entries = [...routing.aliases].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const body = Object.fromEntries(entries.map(([placeholder, map]) => [placeholder, sorted(map)]));
  const others = routing.others.size > 0 ? { others: sorted(routing.others) } : {};
  const settings = defaultStatus === DEFAULT_SETTINGS.defaultStatus ? {} : { default_status: defaultStatus };
  return JSON.stringify({ format: "mesh-api-aliases/1", aliases: body, ...others, ...settings }) + "\n";
}

/**
 * The URL of a route: the first rule of `kind` with a file whose query names exactly the parameters
 * given (besides its path placeholders) and whose literal values are the ones given. Path values are
 * used as segments as they are (percent-encoded but for ":", which addresses keep); query values
 * percent-encoded, in the rule's order. The only way code outside this table names a URL.
 */
export function urlFor(kind: RouteKind, values: Readonly<Record<string, string>> = {}, rules: readonly Rule[] = RULES): string {
  for (const rule of rules) {
    if (rule.kind !== kind || rule.to === null) continue;
    const path = [...rule.from.matchAll(/:([a-z]+)/g)].map((m) => m[1]);
    if (!path.every((name) => name in values)) continue;
    const query = Object.keys(values).filter((name) => !path.includes(name));
    const want = Object.entries(rule.query);
    if (want.length !== query.length) continue;
    if (!want.every(([name, v]) => name in values && (v.startsWith(":") ? values[name] !== "" : v === values[name]))) continue;
    const filled = rule.from.replace(/:([a-z]+)/g, (_, name: string) => encodeURIComponent(values[name]).replace(/%3A/gi, ":"));
    const q = want.map(([name]) => `${name}=${encodeURIComponent(values[name])}`).join("&");
    return q ? `${filled}?${q}` : filled;
  }
  throw new Error(`no route of ${kind} takes ${JSON.stringify(Object.keys(values))}`);
}

/**
 * The path forms of a kind (`rule.from`, in the table's order) as `/api/v1/accesspoint/:ip`: for
 * pages that show a form with its placeholders.
 */
export function pathFormsOf(kind: RouteKind, rules: readonly Rule[] = RULES): string[] {
  return [...new Set(rules.filter((r) => r.kind === kind && r.to !== null).map((r) => r.from))];
}

/** Reads FILES.aliases back; an absent or foreign file means no aliases and the default table. */
export function parseRouting(text: string | undefined): Routing {
  const none: Routing = { aliases: new Map(), others: new Map(), rules: RULES };
  if (!text) return none;
  try {
    const parsed = JSON.parse(text) as {
      format?: string;
      aliases?: Record<string, Record<string, string>>;
      others?: Record<string, unknown>;
      default_status?: unknown;
    };
    if (parsed.format !== "mesh-api-aliases/1" || typeof parsed.aliases !== "object" || parsed.aliases === null) return none;
    const defaultStatus = DEFAULT_STATUSES.find((s) => s === parsed.default_status) ?? DEFAULT_SETTINGS.defaultStatus;
    const strings = (map: Record<string, unknown>) =>
      new Map(Object.entries(map).filter((e): e is [string, string] => typeof e[1] === "string"));
    return {
      aliases: new Map(Object.entries(parsed.aliases).map(([placeholder, map]) => [placeholder, strings(map)])),
      others: strings(typeof parsed.others === "object" && parsed.others !== null ? parsed.others : {}),
      rules: rulesFor({ defaultStatus }),
    };
  } catch {
    return none;
  }
}

/** The aliases of FILES.aliases alone. */
export function parseAliases(text: string | undefined): Aliases {
  return parseRouting(text).aliases;
}

/** Templates as patterns, compiled once: file -> template and the keys it holds. */
const compiled = new Map<string, { regex: RegExp; names: string[] }>();
function compile(template: string): { regex: RegExp; names: string[] } {
  let c = compiled.get(template);
  if (!c) {
    const names: string[] = [];
    const source = template
      .split(/(:[a-z]+)/)
      .map((part) => (part.startsWith(":") ? (names.push(part.slice(1)), "([^/]+)") : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
      .join("");
    compiled.set(template, (c = { regex: new RegExp(`^${source}$`), names }));
  }
  return c;
}

function match(template: string, file: string): Record<string, string> | undefined {
  const { regex, names } = compile(template);
  const m = regex.exec(file);
  return m ? Object.fromEntries(names.map((n, i) => [n, m[i + 1]])) : undefined;
}

/** The template a file of the build was made from; undefined for a file the route table does not know. */
export function templateOf(file: string): FileName | undefined {
  return (Object.keys(FILES) as FileName[]).find((name) => match(FILES[name], file) !== undefined);
}

/**
 * Requests the route table answers with a file, recovered from the file: one per rule whose target
 * it matches and whose keys can be turned back into values (hashed keys cannot).
 */
export function requestsForFile(file: string, rules: readonly Rule[] = RULES): { rule: Rule; target: string }[] {
  const out: { rule: Rule; target: string }[] = [];
  for (const rule of rules) {
    if (rule.to === null) continue;
    const keys = match(rule.to, file);
    if (!keys) continue;
    const target = requestFor(rule, keys);
    if (target !== undefined) out.push({ rule, target });
  }
  return out;
}

function requestFor(rule: Rule, keys: Record<string, string>): string | undefined {
  const pathPart = rule.from.replace(/:([a-z]+)/g, (_, n: string) => keys[n] ?? `:${n}`);
  const query: string[] = [];
  for (const [name, want] of Object.entries(rule.query)) {
    const value = want.startsWith(":") ? unkey(keys[want.slice(1)] ?? "") : want;
    if (value === undefined) return undefined;
    query.push(`${name}=${encodeURIComponent(value)}`);
  }
  return query.length ? `${pathPart}?${query.join("&")}` : pathPart;
}

/** Parses a raw request target (path and query as sent) like a host does; undefined for bad encoding. */
export function parseRequest(target: string): Request | undefined {
  const q = target.indexOf("?");
  const rawPath = q < 0 ? target : target.slice(0, q);
  const rawQuery = q < 0 ? "" : target.slice(q + 1);
  let path: string;
  try {
    path = decodeURIComponent(rawPath);
  } catch {
    return undefined;
  }
  const params = new Map<string, string>();
  for (const part of rawQuery.split("&")) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    const rawName = eq < 0 ? part : part.slice(0, eq);
    const rawValue = eq < 0 ? "" : part.slice(eq + 1);
    try {
      params.set(formDecode(rawName), formDecode(rawValue));
    } catch {
      return undefined;
    }
  }
  return { path: path.replace(/\/{2,}/g, "/"), params };
}

function formDecode(text: string): string {
  return decodeURIComponent(text.replace(/\+/g, " "));
}
