import { API } from "../base.ts";
import type { OutputKind, OutputRecord } from "../outputs/index.ts";
import { OUTPUT_RECORDS, OUTPUT_ROUTES } from "../outputs/derived.ts";
import { DEFAULT_SETTINGS, type DefaultStatus } from "../settings.ts";
import { FILES, fill } from "./files.ts";
import type { RouteKind } from "./responses.ts";
import { listRules, rule, withStatus, type Rule } from "../filters/derive.ts";
import { FILTERS, LISTS, type ResourceName } from "../filters/records.ts";

export type { Rule };
export { letterCases } from "../filters/records.ts";

const r = rule;

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

/** The accepted values of `is_wireless` (the original: "true"/"false" in any case, "1", "0"), by the file they select. */
export const IS_WIRELESS_VALUES: Readonly<Record<"true" | "false", readonly string[]>> = (() => {
  const values = FILTERS.find((f) => f.param === "is_wireless")!.values;
  if (values.kind !== "fixed") throw new Error("is_wireless takes fixed values");
  const spellings = (value: string) => values.choices.find((c) => c.value === value)!.spellings;
  return { true: spellings("true"), false: spellings("false") };
})();

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

/** The paths beside a list, after it in the table: details and sub-resources take no filters. */
const BESIDE: Readonly<Record<ResourceName, (list: string, byDefault: DefaultStatus) => Rule[]>> = {
  // A link by id or by peers: one path form on hosts (placeholders cannot split a segment).
  link: (list) => unfiltered("link-detail", `${list}:key`, FILES.linkDetail),
  // Sites ignore every parameter but the list's data_format, status too, as the original does.
  site: (list) => [r("site-detail", `${list}:id`, {}, FILES.siteDetail)],
  accesspoint: (list, byDefault) => [
    ...unfiltered("accesspoint-detail", `${list}:ip`, FILES.accesspointDetail),
    ...accesspointLinks(`${list}:ip/links/`, byDefault),
    ...unfiltered("accesspoint-interfaces", `${list}:ip/interfaces/`, FILES.accesspointInterfaces),
    // the outputs' routes beside an access point's detail (the history's changes)
    ...OUTPUT_ROUTES.filter((o) => o.beside === "accesspoint").flatMap((o) => unfiltered(o.kind, `${list}:ip/${o.path}`, o.template)),
  ],
  interface: (list) => [
    ...unfiltered("interface-detail", `${list}:ip`, FILES.interfaceDetail),
    ...unfiltered("interface-accesspoint", `${list}:ip/accesspoint/`, FILES.interfaceAccesspoint),
  ],
};

function buildRules(byDefault: DefaultStatus): Rule[] {
  return [
    // The API root: the endpoints and their filters (pages.ts). Not in the recorded original, which answered 404.
    r("api-root", `${API}/`, {}, FILES.apiRoot),
    // Files of their own, not resources of the original: their paths are file names, without a slash.
    r("openapi", FILES.openapi, {}, FILES.openapi),
    // The outputs' routes under the API (the history's: what changed, the topology by day), then each record's file.
    ...OUTPUT_ROUTES.filter((o) => o.beside === undefined).flatMap((o) => unfiltered(o.kind, `${API}/${o.path}`, o.template)),
    ...OUTPUT_RECORDS.flatMap(outputRules),
    // Each list's rules from its filter records (filters/), then the paths beside it.
    ...LISTS.flatMap((list) => [...listRules(list, byDefault).rules, ...BESIDE[list.resource](list.path, byDefault)]),
    r("not-found", "/api/*", {}, null),
  ];
}

/**
 * An output record's routes: its path is its file's; with a file per status, `status` selects it
 * (the whole output without one, whatever the list default: it is no list of the original's).
 */
function outputRules(o: OutputRecord<string, string, string, string>): Rule[] {
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
