import { API, API_DIR } from "../base.ts";
import { OUTPUTS, type OutputFiles } from "../outputs/index.ts";
import type { OutputBase } from "../outputs/output.ts";
import { listRules } from "../filters/derive.ts";
import { FILTERS, LISTS, STATUS, type ResourceName } from "../filters/records.ts";
import { DEFAULT_SETTINGS } from "../settings.ts";
import { fill } from "./placeholders.ts";

export { fill };

/** The start of the build's hidden names (no host serves them); a host names its own internal paths after it. */
export const HIDDEN = "/.mesh-api";

/** The file a static host serves for a folder's URL (`/`, `/snapshots/`, `/map/`). */
export const FOLDER_INDEX = "index.html";
/** The map's folder: its page is the folder's index. */
export const MAP_FOLDER = "/map/";
/** The status page's folder (the history's record, outputs/history.ts): its page is the folder's index. */
export { STATUS_FOLDER } from "../outputs/timeline.ts";
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
  linkDetail: `${API}/link/:key/index.json`,
  siteDetail: `${API}/site/:id/index.json`,
  accesspointDetail: `${API}/accesspoint/:ip/index.json`,
  accesspointLinks: `${API}/accesspoint/:ip/links/index.json`,
  /** written only when the list default is a status (`--default-status online`): the default of `/links/` */
  accesspointLinksByStatus: `${API}/accesspoint/:ip/links/_q/status/:status/index.json`,
  accesspointInterfaces: `${API}/accesspoint/:ip/interfaces/index.json`,
  interfaceDetail: `${API}/interface/:ip/index.json`,
  interfaceAccesspoint: `${API}/interface/:ip/accesspoint/index.json`,
  /** the OpenAPI 3.1 description of the API (openapi.ts) */
  openapi: `${API}/openapi.json`,
} as const;

const SITE_FILES = {
  /** the map (map.ts): its page and script, and the Leaflet files copied beside them (io/write/map-assets.ts) */
  map: `${MAP_FOLDER}${FOLDER_INDEX}`,
  mapScript: "/map/map.js",
  leaflet: "/map/leaflet/:asset",
  leafletImage: "/map/leaflet/images/:image",
  /** the API reference (docs.ts): its page and script, and Swagger UI's files copied beside them (io/write/docs-assets.ts) */
  docs: `${DOCS_FOLDER}${FOLDER_INDEX}`,
  docsScript: `${DOCS_FOLDER}docs.js`,
  swaggerUi: `${DOCS_FOLDER}:asset`,
  /** the landing page every static host serves at "/" */
  landing: `/${FOLDER_INDEX}`,
  /** the mark of a folder this tool wrote (io/write/ownership.ts); hidden: hosts and the preview do not serve it */
  marker: `${HIDDEN}-output`,
  /** what a build records about itself: its dump and its files (io/write/build-record.ts); hidden like the marker */
  buildRecord: `${HIDDEN}-build.json`,
  /** the digest of every file a recyclable build wrote (io/write/emit.ts): the next build into that tree rewrites only what changed; hidden like the marker */
  fileDigests: `${HIDDEN}-files.json`,
  /** filter values whose answer is the file of another value (one file, several routes), for every host */
  aliases: `${HIDDEN}-aliases.json`,
  /**
   * the same bytes under a name every deploy keeps (some platforms leave out names starting with "."), for a
   * host whose code reads the routing per request (hosts/); named like a host file, so no host serves it as content
   */
  routingCopy: "/_mesh-api-routing.json",
  /** host files: the page a host serves for a missing file, and the literal rules of a host that reads them from the build */
  notFoundPage: "/404.html",
  redirectRules: "/_redirects",
} as const;

/**
 * The lists' files, derived from the records (filters/records.ts): each combination of filters the
 * route table answers with a file (filters/derive.ts listRules), named after its list and its filters'
 * `fileName`s in the file's order (`accesspointListGeojsonByStatus`), with a file per status where
 * the list has one. A map, not a hand-kept table: a new filter record brings its files.
 */
type ListFileName = `${ResourceName}List${string}`;
const LIST_FILES: Readonly<Record<ListFileName, string>> = (() => {
  const out: Record<string, string> = {};
  const add = (name: string, template: string) => {
    if (name in out && out[name] !== template) throw new Error(`${name}: two list files of one name (${out[name]}, ${template})`);
    out[name] = template;
  };
  for (const list of LISTS)
    for (const t of listRules(list, DEFAULT_SETTINGS.defaultStatus, FILTERS).targets) {
      const name = `${list.resource}List${t.ordered.map((p) => p.filter.fileName).join("")}`;
      add(name, t.file);
      if (t.statusFile) add(`${name}${STATUS.fileName}`, t.statusFile);
    }
  return out;
})();

/**
 * Every file the build writes, as a template: `:name` is filled by fileFor(). Rules point at these,
 * the plan fills them, and check and the tests map files back to them. No other code spells an
 * output path; the output records (outputs/) bring their own. Filter results live under `_q/`,
 * which no IP address or id can be.
 */
const FIXED_FILES = {
  ...API_FILES,
  ...(Object.assign({}, ...OUTPUTS.map((o) => o.files)) as OutputFiles),
  ...SITE_FILES,
} as const;

export type FileName = keyof typeof FIXED_FILES | ListFileName;

/**
 * The snapshot's API archive while a build writes it with the tree (publish/archives.ts), moved into
 * `/snapshots/` before the tree is served: never a file of a build.
 */
export const API_ARCHIVE_PARTIAL = `${HIDDEN}-api-archive.partial`;

export const FILES: typeof FIXED_FILES & Readonly<Record<ListFileName, string>> = { ...LIST_FILES, ...FIXED_FILES };

/**
 * The files answered as the API answers (its headers, JSON): every file under the API's folder but
 * the reference's (`except`), and the output records' files outside it (fixed names: `/freifunk/…`),
 * which the route table routes too. Every host sends these with API_HEADERS, `check` compares them,
 * the API snapshot holds them.
 */
export const API_SERVED: { readonly folder: string; readonly except: string; readonly files: readonly string[] } = {
  folder: `/${API_DIR}/`,
  except: DOCS_FOLDER,
  files: OUTPUTS.flatMap((o) => {
    const site = new Set<string>((o as OutputBase).siteFiles ?? []);
    return Object.entries<string>(o.files)
      .filter(([name]) => !site.has(name))
      .map(([, file]) => file);
  }).filter((f) => !f.startsWith(`/${API_DIR}/`)),
};
for (const file of API_SERVED.files) if (file.includes(":")) throw new Error(`${file}: an output outside the API has a fixed name`);

/**
 * The site's files a host serves with a Content-Type of their own, whatever their name says (a name
 * without an extension gets none from a MIME table): the preview and every host print each as a rule
 * of their own (hosts/). Outside the API, answered to GET and HEAD as the site's other files.
 */
export const TYPED_FILES: readonly { readonly file: string; readonly type: string }[] = OUTPUTS.flatMap((o) =>
  Object.entries<string | undefined>((o as OutputBase).types ?? {}).map(([name, type]) => ({
    file: (o.files as Readonly<Record<string, string>>)[name],
    type: type!,
  })),
);
for (const { file } of TYPED_FILES)
  if (file.includes(":") || file.startsWith(`/${API_DIR}/`)) throw new Error(`${file}: a typed file is a fixed name outside the API`);

const SERVED_FILES: ReadonlySet<string> = new Set(API_SERVED.files);
/** Whether a file of the output (its path from the root, with its "/") is one of API_SERVED: API_SERVED_GLOBS's match, without listing the tree. */
export const isApiServed = (file: string): boolean =>
  (file.startsWith(API_SERVED.folder) && !file.startsWith(API_SERVED.except)) || SERVED_FILES.has(file);

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

/** The snapshots folder (publish/archives.ts writes it after the API) and its files, relative to it. */
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

/** The file of a template filled with raw values; placeholders not given stay (a rule's target). */
export function fileFor(name: FileName, values: Readonly<Record<string, string | null>> = {}): string {
  const template = FILES[name] as string | undefined;
  // A list file's name is checked here, not by the compiler: the records make them.
  if (template === undefined) throw new Error(`${name}: no such file (routes/files.ts)`);
  return fill(template, values);
}
