import { API } from "../base.ts";
import { rendered, type Body } from "../body.ts";
import { isOwnKey } from "../values/names.ts";
import { groupBy } from "../model/collections.ts";
import { accesspointFeature, featureCollection, linkFeature, siteFeature } from "../model/geojson.ts";
import {
  STATUS_RULE_TEXT,
  statusOf,
  type AccesspointEntry,
  type InterfaceEntry,
  type Model,
  type SiteEntry,
  type Status,
} from "../model/model.ts";
import { renderLink, renderSite } from "../model/resources.ts";
import type { RouteKind } from "../routes/responses.ts";
import { brandField, type SiteSettings } from "../settings.ts";
import { withoutRedundantSiteLinks } from "../model/sitelinks.ts";
import { compareCodePoints } from "../values/text.ts";
import type { ResolvedLink } from "../model/validator.ts";
import { isParseableVersion, versionKey } from "../values/version.ts";
import { beforeValues, boundResults } from "./bounds.ts";

/**
 * The API's lists and their filters as records (docs/development.md, "Adding a filter"): the route
 * table's list rules and files (filters/derive.ts), the plan's list files, the filter values hosts
 * need rules for, and the OpenAPI text are derived from them.
 */

export type ResourceName = "link" | "site" | "accesspoint" | "interface";
export type Docs = Pick<SiteSettings, "brand" | "defaultStatus">;

/** One value a fixed filter selects: the spellings a request may use (matched as they are) and its value in the file name. */
export interface Choice {
  readonly value: string;
  readonly spellings: readonly string[];
}

/** A closed set of spellings (`data_format=geojson`, `is_wireless=tRuE`). */
export interface FixedValues {
  readonly kind: "fixed";
  readonly choices: readonly Choice[];
  /** any other non-empty value: the answer without the filter (`ignored`), or 404 (`refused`) */
  readonly others: "ignored" | "refused";
  /** the file name's placeholder the choices share (`:wireless`); without it each choice is written literally */
  readonly slot?: string;
}

/** Values from the data: one file per present value, through a query placeholder (routes/placeholders.ts QUERY_PLACEHOLDERS is made of these). */
export interface DataValues {
  readonly kind: "data";
  readonly placeholder: string;
  /** values are compared case-insensitively (the preview folds them; hosts need a rule per case) */
  readonly fold?: "lower";
  /**
   * Values that all get one answer, whatever they say (an unparseable `__after` bound keeps every
   * non-null version): `otherKey` names that answer's file, and a host that can test a value against
   * the class serves it for any such value; one that cannot answers 404.
   */
  readonly other?: (value: string) => boolean;
  /** the present values a host may need literal rules for */
  present(model: Model): readonly string[];
  /** values answered by another value's file */
  aliases?(model: Model): ReadonlyMap<string, string>;
  /** the key of the file answering the placeholder's class of values with one answer, when one is written */
  otherKey?(model: Model): string | undefined;
  /**
   * Values a sort key orders (firmware bounds; undefined for a value it cannot order). The answer only
   * changes at present values, so any value it orders answers as the first present value that sorts at
   * or after it, and past them all as the last: `ordered` lists the present values in their order
   * with the key of the file each is answered by.
   */
  readonly sortKey?: (value: string) => readonly number[] | undefined;
  ordered?(model: Model): readonly (readonly [string, string])[];
}

/** A filter of one list. */
export interface FilterRecord {
  readonly resource: ResourceName;
  readonly param: string;
  /** a representation (it chooses the list's renderer, not its members): its file segment goes after every filter's */
  readonly format?: true;
  readonly values: FixedValues | DataValues;
  /** an empty value: as if the parameter were absent, or the null value (a file of its own; data filters only) */
  readonly empty: "none" | "null";
  /** filters it is never given with: the pair answers 404 whatever the values, empty ones too */
  readonly exclusiveWith?: readonly string[];
  /** filters whose combination with it is not precomputed: 404, but an empty value that means none still counts as absent */
  readonly notWith?: readonly string[];
  /**
   * The members each file value selects among the list's `items` (a format has none): every choice of
   * a fixed filter (empty lists too), the present values of a data filter, null for the `empty: "null"` file.
   */
  group?(model: Model, items: readonly unknown[]): Iterable<readonly [string | null, readonly unknown[]]>;
  /** the parameter's meaning on this list (OpenAPI); which values it takes comes from the rules */
  doc(settings: Docs): string;
  /** its part of the name of a list file it selects (routes/files.ts FILES: `accesspointListByVersion`) */
  readonly fileName: string;
  /** a value to show on the landing page (pages.ts), when the network has one */
  example?(model: Model): string | undefined;
}

/** A list of the API: its path, items and renderers, and whether it has a file per status. */
export interface ListRecord {
  readonly resource: ResourceName;
  readonly kind: RouteKind;
  /** the list's path; its files are under it (`index.json`, `_q/<param>/<value>/…/index.json`) */
  readonly path: string;
  items(model: Model): readonly unknown[];
  /** the body per format value (`""`: no format filter) */
  readonly render: Readonly<Record<string, (model: Model, items: readonly unknown[]) => Body>>;
  /** an item's status: the list has a file per status and follows the list default; without it, `status` is ignored */
  status?(model: Model, item: unknown): Status;
}

/** `status`: every list with a status per item takes it; not a FilterRecord (it multiplies every file, and its empty value is the list default). */
export const STATUS = {
  param: "status",
  placeholder: "status",
  fileName: "ByStatus",
  example: "online",
  doc: ({ defaultStatus }: Docs) =>
    (defaultStatus === "all"
      ? "`all` or empty: no filter. "
      : `\`all\`: no filter; absent or empty: \`${defaultStatus}\` on the access point and link lists and an access point's links (this site's default). `) +
    `Where a status filter is precomputed (lists, NetJSON), the status against the data's \`taken_at\`: ${STATUS_RULE_TEXT}.`,
} as const;

/** The placeholders of a refusing rule's query, in the order it names them. */
export const REFUSAL_PLACEHOLDERS = ["a", "b"] as const;

/** Every spelling of a word in any letter case ("true", "True", "tRuE", ...): a rule matches query values as they are. */
export function letterCases(word: string): string[] {
  let out = [""];
  for (const c of word) out = out.flatMap((prefix) => [...new Set([c.toLowerCase(), c.toUpperCase()])].map((x) => prefix + x));
  return out;
}

const sorted = (values: Iterable<string>) => [...new Set(values)].sort(compareCodePoints);
/** A data filter's groups: its present values (null and "" select nothing a request can name). */
const byValue = <T>(items: readonly T[], valueOf: (item: T) => string | null) =>
  [...groupBy(items, valueOf)].filter(([v]) => v !== null && v !== "");

const geojson = (resource: ResourceName): FilterRecord => ({
  resource,
  param: "data_format",
  format: true,
  // Exactly this lower-case value selects GeoJSON (the original compares it so); any other value is ignored.
  values: { kind: "fixed", choices: [{ value: "geojson", spellings: ["geojson"] }], others: "ignored" },
  empty: "none",
  doc: () => "`geojson` (exactly, lower case): the list as a GeoJSON FeatureCollection (RFC 7946).",
  fileName: "Geojson",
});

const links = (items: readonly unknown[]) => items as readonly ResolvedLink[];
const aps = (items: readonly unknown[]) => items as readonly AccesspointEntry[];
const interfaces = (items: readonly unknown[]) => items as readonly InterfaceEntry[];

/** The lists, in the route table's order. */
export const LISTS: readonly ListRecord[] = [
  {
    resource: "link",
    kind: "link-list",
    path: `${API}/link/`,
    items: (model) => model.links,
    render: {
      "": (model, items) => rendered(links(items), (l) => renderLink(l, model)),
      geojson: (model, items) => featureCollection(links(items), (l) => linkFeature(l, model)),
    },
    status: (model, item) => statusOf((item as ResolvedLink).timestamp, model.takenAt),
  },
  {
    resource: "site",
    kind: "site-list",
    path: `${API}/site/`,
    items: (model) => model.sites,
    render: {
      "": (_, items) => rendered(items as readonly SiteEntry[], renderSite),
      geojson: (_, items) => featureCollection(items as readonly SiteEntry[], siteFeature),
    },
  },
  {
    resource: "accesspoint",
    kind: "accesspoint-list",
    path: `${API}/accesspoint/`,
    items: (model) => model.accesspoints,
    render: {
      "": (_, items) => rendered(aps(items), (a) => a.json),
      geojson: (_, items) => featureCollection(aps(items), accesspointFeature),
    },
    status: (model, item) => statusOf((item as AccesspointEntry).lastseen_timestamp, model.takenAt),
  },
  {
    resource: "interface",
    kind: "interface-list",
    path: `${API}/interface/`,
    items: (model) => model.interfaces,
    render: { "": (_, items) => rendered(interfaces(items), (e) => e.json) },
  },
];

/** A firmware bound's sort key; undefined for a bound it cannot order (version.ts). */
const boundKey = (value: string): readonly number[] | undefined => {
  const key = versionKey(value);
  return key.length > 0 ? key : undefined;
};

/** The values of `__before` and `__after` alike: the same bounds, each side's files (bounds.ts). */
function boundValues(placeholder: string, side: "before" | "after"): DataValues {
  return {
    kind: "data",
    placeholder,
    present: (model) => beforeValues(model.accesspoints.map((a) => a.mesh_version)),
    aliases: (model) => boundResults(model)[side].aliases,
    sortKey: boundKey,
    ordered: (model) => boundResults(model)[side].ordered,
  };
}

/**
 * The filters. Within a list the declaration order decides the file names' segments (a format's
 * last), the order of the refused pairs, and with fixed filters before data ones the rules' order.
 */
export const FILTERS: readonly FilterRecord[] = [
  geojson("link"),
  {
    resource: "link",
    param: "with_redundant_site_links",
    fileName: "NoRedundant",
    // Any value other than "0" changes nothing.
    values: { kind: "fixed", choices: [{ value: "0", spellings: ["0"] }], others: "ignored" },
    empty: "none",
    group: (model, items) => {
      const kept = new Set(withoutRedundantSiteLinks(model));
      return [["0", links(items).filter((l) => kept.has(l))]];
    },
    doc: () =>
      "`0`: without the links between two sites that more than one online link joins (every such link, whatever its own status); `status` then filters what remains.",
  },
  geojson("site"),
  // Two firmware filters, and GeoJSON with a firmware filter, are not precomputed.
  { ...geojson("accesspoint"), notWith: ["firmware_version", "firmware_version__before", "firmware_version__after"] },
  {
    resource: "accesspoint",
    param: "firmware_version",
    fileName: "ByVersion",
    values: {
      kind: "data",
      placeholder: "version",
      present: (model) => sorted(model.accesspoints.flatMap((a) => (a.mesh_version ? [a.mesh_version] : []))),
    },
    // `firmware_version=` asks for the access points without a version: a file of its own.
    empty: "null",
    // No request can ask for "" (an empty value means null).
    group: (_, items) => [...groupBy(aps(items), (a) => a.mesh_version)].filter(([v]) => v !== ""),
    doc: ({ brand }) => {
      const field = brandField("mesh_version", brand);
      return `Access points whose \`${field}\` equals the value; empty: those whose \`${field}\` is null.`;
    },
  },
  {
    resource: "accesspoint",
    param: "firmware_version__before",
    fileName: "Before",
    exclusiveWith: ["firmware_version"],
    values: boundValues("bound", "before"),
    empty: "none",
    group: (model) => boundResults(model).before.written.map(({ bound, members }) => [bound, members] as const),
    doc: ({ brand }) =>
      `Access points whose non-empty \`${brandField("mesh_version", brand)}\` sorts before the value (docs/rules.md); empty: no filter.`,
  },
  {
    resource: "accesspoint",
    param: "firmware_version__after",
    fileName: "After",
    exclusiveWith: ["firmware_version", "firmware_version__before"],
    values: {
      ...boundValues("after", "after"),
      other: (value) => !isParseableVersion(value),
      otherKey: (model) => boundResults(model).after.other,
    },
    empty: "none",
    group: (model) => boundResults(model).after.written.map(({ bound, members }) => [bound, members] as const),
    doc: ({ brand }) =>
      `Access points whose non-null \`${brandField("mesh_version", brand)}\` does not sort before the value; empty: no filter.`,
  },
  // Interfaces: one of wifi_ssid, if_hwaddress or is_wireless; status is ignored.
  {
    resource: "interface",
    param: "wifi_ssid",
    fileName: "BySsid",
    values: { kind: "data", placeholder: "ssid", present: (model) => sorted(model.interfaces.flatMap((e) => (e.ssid ? [e.ssid] : []))) },
    empty: "none",
    group: (_, items) => byValue(interfaces(items), (e) => e.ssid),
    doc: () => "Interfaces whose wifi attributes carry exactly this SSID; empty: no filter.",
    // Preferably an SSID that is its own file-name key: every host that routes queries reaches it alike.
    example: (model) =>
      model.interfaces.find((e) => e.ssid && isOwnKey(e.ssid))?.ssid ?? model.interfaces.find((e) => e.ssid)?.ssid ?? undefined,
  },
  {
    resource: "interface",
    param: "if_hwaddress",
    fileName: "ByMac",
    exclusiveWith: ["wifi_ssid"],
    values: {
      kind: "data",
      placeholder: "mac",
      fold: "lower",
      present: (model) => sorted(model.interfaces.flatMap((e) => (e.mac ? [e.mac] : []))),
    },
    empty: "none",
    group: (_, items) => byValue(interfaces(items), (e) => e.mac),
    doc: () => "Interfaces with this hardware address, in any letter case; empty: no filter.",
  },
  {
    resource: "interface",
    param: "is_wireless",
    fileName: "ByWireless",
    exclusiveWith: ["wifi_ssid", "if_hwaddress"],
    // "true"/"false" in any letter case, "1", "0", as the original: a rule per spelling (hosts match values as they are).
    values: {
      kind: "fixed",
      slot: "wireless",
      choices: [
        { value: "true", spellings: [...letterCases("true"), "1"] },
        { value: "false", spellings: [...letterCases("false"), "0"] },
      ],
      others: "refused",
    },
    empty: "none",
    // Both files are written, empty or not.
    group: (_, items) => [
      ["true", interfaces(items).filter((e) => e.wifi)],
      ["false", interfaces(items).filter((e) => !e.wifi)],
    ],
    doc: () => "`true` or `1`: interfaces with wifi attributes; `false` or `0`: those without (letter case is free); empty: no filter.",
  },
];
