import { brandField, DEFAULT_SETTINGS, type SiteSettings } from "../settings.ts";
import { STATUSES, type Model, type Status } from "../model/model.ts";
import { html, page } from "./pages.ts";
import { fileFor, FILES, FOLDER_INDEX, rulesFor, urlFor } from "../routes.ts";

/** Where the map's background tiles come from (`build --tiles`, `--tiles-attribution`). */
export interface MapSettings {
  /** a Leaflet tile URL template, e.g. https://tile.openstreetmap.org/{z}/{x}/{y}.png */
  readonly tiles: string;
  /** HTML shown in the map's corner; the tile server's terms usually require it */
  readonly attribution: string;
}

export const DEFAULT_MAP_SETTINGS: MapSettings = {
  tiles: "https://tile.openstreetmap.org/{z}/{x}/{y}.png",
  attribution: '&copy; <a href="https://www.openstreetmap.org/copyright">OpenStreetMap</a> contributors',
};

/**
 * A list the page loads: the API's URL first, then the file behind it. A host that serves files but
 * cannot route query strings (docs/hosting.md names them) answers the first with the unfiltered list or
 * a 404, but serves the file itself; the page takes whichever is a FeatureCollection.
 */
export type Source = readonly [api: string, file: string];

/** What the page's script (assets/map/map.js) reads from the page: kept here so routes and colours have one home. */
export interface MapConfig {
  readonly tiles: string;
  readonly attribution: string;
  /** drawn in this order, the last on top */
  readonly statuses: readonly { readonly status: Status; readonly color: string; readonly source: Source }[];
  readonly links: Source;
  /** the first band whose `min` the quality reaches gives the colour */
  readonly quality: readonly { readonly min: number; readonly label: string; readonly color: string }[];
  /** an item's API detail is this prefix and its main_ip or id (details take no trailing slash) */
  readonly accesspointDetail: string;
  readonly linkDetail: string;
  /** the property holding the mesh firmware version, when the brand renames it (absent: `mesh_version`) */
  readonly versionField?: string;
}

const STATUS_COLORS: Readonly<Record<Status, string>> = { online: "#2f9e44", flapping: "#f08c00", offline: "#868e96" };

/** Good links draw green, poor ones red: the usual reading of mesh maps (quality is between 0 and 1). */
const QUALITY_BANDS: MapConfig["quality"] = [
  { min: 0.9, label: "0.9 – 1", color: "#1a9850" },
  { min: 0.7, label: "0.7 – 0.9", color: "#91cf60" },
  { min: 0.4, label: "0.4 – 0.7", color: "#fc8d59" },
  { min: 0, label: "below 0.4", color: "#d73027" },
];

/** Offline first, online last: the access points that answer now are never hidden under the others. */
const DRAW_ORDER: readonly Status[] = ["offline", "flapping", "online"];

const GEOJSON = { data_format: "geojson" };

export function mapConfig(settings: MapSettings, site: SiteSettings = DEFAULT_SETTINGS): MapConfig {
  const versionField = brandField(NEUTRAL_VERSION, site.brand);
  // The map draws every link: where a list without status answers the default status, it asks for all.
  const rules = rulesFor(site);
  const allLinks: Record<string, string> = site.defaultStatus === "all" ? {} : { status: "all" };
  return {
    tiles: settings.tiles,
    attribution: settings.attribution,
    statuses: [...STATUSES]
      .sort((a, b) => DRAW_ORDER.indexOf(a) - DRAW_ORDER.indexOf(b))
      .map((status) => ({
        status,
        color: STATUS_COLORS[status],
        source: [urlFor("accesspoint-list", { ...GEOJSON, status }, rules), fileFor("accesspointListGeojsonByStatus", { status })],
      })),
    links: [urlFor("link-list", { ...GEOJSON, ...allLinks }, rules), fileFor("linkListGeojson")],
    quality: QUALITY_BANDS,
    accesspointDetail: urlFor("accesspoint-detail", { ip: "" }, rules),
    linkDetail: urlFor("link-detail", { key: "" }, rules),
    // Written only when it differs, so a build with the API description's names keeps its page byte for byte.
    ...(versionField === NEUTRAL_VERSION ? {} : { versionField }),
  };
}

const NEUTRAL_VERSION = "mesh_version";

/**
 * JSON inside a `<script type="application/json">`: the HTML parser ends the element at the first
 * `</script`, and `<!--` changes how it reads on; escaped `<`, `>` and `&` can do neither, and
 * JSON.parse reads them back as they were.
 */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * Data strings reach the page only through the API's JSON, which the script puts into text nodes;
 * the policy is the second line: no inline script can run, and the page talks to its own host only.
 * Images may come from anywhere, since tile servers redirect to CDNs of their own. The API reference
 * (docs.ts) has the same policy: Swagger UI loads the document and tries requests on its own host.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src * data: blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
].join("; ");

const STYLE =
  "html,body{height:100%;margin:0}" +
  "body{display:flex;flex-direction:column;font-family:system-ui,sans-serif;line-height:1.4;color:#222}" +
  "header{padding:.5rem 1rem;border-bottom:1px solid #ccc}h1{font-size:1.25rem;margin:0 0 .25rem}header p{margin:.25rem 0}" +
  ".legend{display:flex;flex-wrap:wrap;gap:.25rem 1.5rem;margin:.25rem 0;padding:0;list-style:none}" +
  ".legend span{display:inline-block;vertical-align:middle;margin:0 .3rem 0 .6rem}" +
  ".dot{width:.8rem;height:.8rem;border-radius:50%;border:1px solid #fff;box-shadow:0 0 0 1px #333}.line{width:1.5rem;height:.25rem}" +
  "#map-status.problem,#map-tiles{color:#a61e4d}" +
  "#map{flex:1;min-height:20rem;background:#eef0f2}" +
  ".mesh-popup h2{font-size:1rem;margin:0 0 .25rem}.mesh-popup dl{display:grid;grid-template-columns:auto 1fr;gap:0 .75rem;margin:0 0 .25rem}" +
  ".mesh-popup dt{font-weight:600}.mesh-popup dd{margin:0;overflow-wrap:anywhere}";

/** The page's classes for the legend swatches: colours from the config, so no style attribute is needed. */
function swatchStyles(config: MapConfig): string {
  return [
    ...config.statuses.map((s) => `.dot.${s.status}{background:${s.color}}`),
    ...config.quality.map((q, i) => `.line.q${i}{background:${q.color}}`),
  ].join("");
}

/** `/map/index.html`: a static page that draws the network from the API's GeoJSON lists (assets/map/map.js). */
export function mapPage(model: Model, settings: MapSettings): string {
  const config = mapConfig(settings, model.settings);
  const takenAt = model.takenAt?.text ?? null;
  const positioned = model.accesspoints.filter((a) => a.position !== null).length;
  const from =
    takenAt === null
      ? "from a topology dump without a time of its own"
      : `from the topology dump taken at <time datetime="${html(takenAt)}">${html(takenAt)}</time>`;
  const statusItems = STATUSES.map((s) => `<span class="dot ${s}"></span>${html(s)}`).join("");
  const qualityItems = config.quality.map((q, i) => `<span class="line q${i}"></span>${html(q.label)}`).join("");
  const apiRoot = urlFor("api-root");
  return page(
    "Map — Mesh Network Topology Read API v1",
    [
      "<header>",
      "<h1>Map of the mesh network</h1>",
      `<p>${model.accesspoints.length} access points, ${positioned} of them with a position, and ${model.links.length} links, ${from}. ` +
        `Drawn from the API's GeoJSON lists (<a href="${html(apiRoot)}"><code>${html(apiRoot)}</code></a>); click an access point for its details. ` +
        `<a href="${html(landingFolder())}">About this site</a>.</p>`,
      '<ul class="legend">',
      `<li>Access points by status:${statusItems}</li>`,
      `<li>Links by quality:${qualityItems}</li>`,
      "</ul>",
      '<p id="map-status" role="status">Loading the network…</p>',
      '<p id="map-tiles" role="status" hidden></p>',
      "<noscript><p>The map needs JavaScript. The same data, as GeoJSON: " +
        `<a href="${html(urlFor("accesspoint-list", GEOJSON))}">access points</a>, <a href="${html(config.links[0])}">links</a>.</p></noscript>`,
      "</header>",
      '<div id="map"></div>',
      `<script type="application/json" id="map-config">${scriptJson(config)}</script>`,
      `<script src="${html(fileFor("leaflet", { asset: "leaflet.js" }))}"></script>`,
      `<script src="${html(fileFor("mapScript"))}"></script>`,
    ],
    {
      head: [
        `<meta http-equiv="Content-Security-Policy" content="${html(CONTENT_SECURITY_POLICY)}">`,
        // No favicon request: the host would answer it with the JSON 404, an error in the console.
        '<link rel="icon" href="data:,">',
        `<link rel="stylesheet" href="${html(fileFor("leaflet", { asset: "leaflet.css" }))}">`,
      ],
      style: `${STYLE}${swatchStyles(config)}`,
    },
  );
}

/** The landing page's folder URL: its page is the folder's index. */
function landingFolder(): string {
  return FILES.landing.slice(0, -FOLDER_INDEX.length);
}
