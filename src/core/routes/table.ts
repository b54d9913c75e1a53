import { API } from "../base.ts";
import { OUTPUTS, type OutputKind, type OutputRecord } from "../outputs/index.ts";
import { DEFAULT_SETTINGS, type DefaultStatus } from "../settings.ts";
import { FILES, fill } from "./files.ts";
import type { RouteKind } from "./responses.ts";

export interface Rule {
  readonly kind: RouteKind;
  /** canonical request path; `:name` segments are placeholders; a trailing "/" marks a list form */
  readonly from: string;
  /** query conditions: a literal value (possibly "") or a `:placeholder` */
  readonly query: Readonly<Record<string, string>>;
  /** target file under the output root, with placeholders; null for a 404 */
  readonly to: string | null;
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
