import { STATUSES, type Model } from "../model/model.ts";
import { html, page } from "./html.ts";

export { html, page };
import {
  DOCS_FOLDER,
  MAP_FOLDER,
  OUTPUT_ROOT_LINKS,
  PLACES,
  pathFormsOf,
  RULES,
  SNAPSHOT_DIR,
  SNAPSHOT_FILES,
  urlFor,
  type RouteKind,
} from "../routes.ts";
import { FILTERS, LISTS, STATUS } from "../filters/records.ts";
import { OUTPUTS } from "../outputs/index.ts";
import { OUTPUT_RECORDS, OUTPUT_ROUTES } from "../outputs/derived.ts";
import type { OutputBase } from "../outputs/output.ts";

/**
 * The ways in for a newcomer, rendered from the model (pure, deterministic): the landing page
 * (`/index.html`), the API root (`/api/v1/index.json`) and the snapshot listing
 * (`/snapshots/index.html`). The pages are plain HTML5 in UTF-8, with no script and nothing loaded
 * from elsewhere; every text that comes from the data is escaped.
 */

/** The four resources, as the API root names them (DRF's router: the URL prefix). */
const RESOURCES = ["accesspoint", "interface", "link", "site"] as const;
type Resource = (typeof RESOURCES)[number];

/**
 * The query parameters each list accepts, in the route table's order (`format` is accepted
 * everywhere). A parameter named only by rules that refuse (`in_bbox`) is not one it accepts.
 */
export function listFilters(): Record<Resource, string[]> {
  const filters = Object.fromEntries(RESOURCES.map((r) => [r, [] as string[]])) as Record<Resource, string[]>;
  const answered = new Set(
    RULES.filter((rule) => rule.to !== null).flatMap((rule) => Object.keys(rule.query).map((n) => `${rule.kind} ${n}`)),
  );
  for (const rule of RULES) {
    const resource = RESOURCES.find((r) => rule.kind === `${r}-list`);
    if (!resource) continue;
    for (const name of Object.keys(rule.query))
      if (!filters[resource].includes(name) && answered.has(`${rule.kind} ${name}`)) filters[resource].push(name);
  }
  return filters;
}

/**
 * `/api/v1/`: the list endpoints, the filters each accepts, the values of `status`, and when the
 * data was taken. Compact JSON with a fixed key order, like every other response.
 */
export function apiRoot(model: Model): string {
  const root: Record<string, unknown> = {};
  for (const r of RESOURCES) root[r] = urlFor(`${r}-list`);
  root.filters = listFilters();
  root.status_values = [...STATUSES, "all"];
  root.openapi = urlFor("openapi");
  for (const o of OUTPUT_RECORDS) if (o.present?.(model) ?? true) root[o.rootMember] = urlFor(o.kind);
  for (const link of OUTPUT_ROOT_LINKS) root[link.member] = link.url;
  root.map = MAP_FOLDER;
  root.docs = DOCS_FOLDER;
  root.taken_at = model.takenAt?.text ?? null;
  return JSON.stringify(root);
}

interface Endpoint {
  readonly template: string;
  readonly about: string;
  /** request targets that answer 200 on this build, as sent (percent-encoded) */
  readonly examples: readonly string[];
}

/** The API's endpoints with one example each that this build answers, omitted when the network has no such item. */
/** A list's examples: the list, its status filter and each filter whose record has an example in this network. */
function listed(model: Model, kind: RouteKind): string[] {
  const list = LISTS.find((l) => l.kind === kind)!;
  const filters = FILTERS.filter((f) => f.resource === list.resource).flatMap((f) => {
    const value = f.example?.(model);
    return value === undefined ? [] : [urlFor(kind, { [f.param]: value })];
  });
  return [urlFor(kind), ...(list.status ? [urlFor(kind, { [STATUS.param]: STATUS.example })] : []), ...filters];
}

/** Examples made of a value the network may lack: none without it. */
const when = <T>(value: T | null | undefined, make: (v: T) => string[]) => (value === undefined || value === null ? [] : make(value));

/** A landing page row: the path form as the page shows it (each placeholder as <name>, or as `shown` spells it), what it answers, examples. */
const row = (kind: RouteKind, about: string, examples: string[], shown: Record<string, string> = {}): Endpoint => ({
  template: pathFormsOf(kind)[0].replace(/:([a-z]+)/g, (_, name: string) => shown[name] ?? `<${name}>`),
  about,
  examples,
});

export function landingExamples(model: Model): Endpoint[] {
  const ap = model.accesspoints[0];
  const addresses = [...model.interfaceByAddress.keys()];
  const address = addresses.find((a) => !a.includes(":")) ?? addresses[0];
  const link = model.links[0];
  const peers = model.linkByPeers.keys().next().value;
  const site = model.sites[0];
  return [
    row("accesspoint-list", "all access points", listed(model, "accesspoint-list")),
    row(
      "accesspoint-detail",
      "one access point, by its main_ip or main_ipv6",
      when(ap, (a) => [urlFor("accesspoint-detail", { ip: a.main_ip })]),
    ),
    row(
      "accesspoint-links",
      "the links of an access point",
      when(ap, (a) => [urlFor("accesspoint-links", { ip: a.main_ip })]),
    ),
    row(
      "accesspoint-interfaces",
      "the interfaces of an access point",
      when(ap, (a) => [urlFor("accesspoint-interfaces", { ip: a.main_ip })]),
    ),
    // the outputs' routes that say what they answer: beside an access point's detail, then under the API
    ...OUTPUT_ROUTES.filter((r) => r.about !== undefined && r.beside === "accesspoint").map((r) =>
      row(
        r.kind,
        r.about!,
        when(ap, (a) => [urlFor(r.kind, { ip: a.main_ip })]),
      ),
    ),
    ...OUTPUT_ROUTES.filter((r) => r.about !== undefined && r.beside === undefined).map((r) => row(r.kind, r.about!, [urlFor(r.kind)])),
    row("interface-list", "all interfaces", listed(model, "interface-list")),
    row(
      "interface-detail",
      "the interface that holds an address (IPv4 or IPv6)",
      when(address, (a) => [urlFor("interface-detail", { ip: a })]),
    ),
    row(
      "interface-accesspoint",
      "the access point of that interface",
      when(address, (a) => [urlFor("interface-accesspoint", { ip: a })]),
    ),
    row("link-list", "all links", listed(model, "link-list")),
    row(
      "link-detail",
      "one link, by its id",
      when(link, (l) => [urlFor("link-detail", { key: String(l.id) })]),
      { key: "<id>" },
    ),
    row(
      "link-detail",
      "the link between two access points",
      when(peers, (p) => [urlFor("link-detail", { key: p })]),
      {
        key: "<ip_a>-<ip_b>",
      },
    ),
    row("site-list", "all sites", listed(model, "site-list")),
    row(
      "site-detail",
      "one site, by its id",
      when(site, (s) => [urlFor("site-detail", { id: String(s.id) })]),
    ),
  ];
}

/** `/`: what this is, the endpoints with an example each, the counts and `taken_at` of this build. */
export function landingPage(model: Model): string {
  const takenAt = model.takenAt?.text ?? null;
  const when =
    takenAt === null
      ? "a topology dump without a time of its own"
      : `the topology dump taken at <time datetime="${html(takenAt)}">${html(takenAt)}</time>`;
  const filters = listFilters();
  const byDefault =
    model.settings.defaultStatus === "all"
      ? "without it, a list holds every item"
      : `without it, the access point and link lists and an access point's links hold the <code>${model.settings.defaultStatus}</code> items only (<code>status=all</code> for every item)`;
  const rows = landingExamples(model).map((e) => {
    const list = RESOURCES.find((r) => e.template === urlFor(`${r}-list`));
    const accepts =
      list && filters[list].length > 0 ? `<br>filters: ${filters[list].map((f) => `<code>${html(f)}</code>`).join(", ")}` : "";
    const examples = e.examples.length > 0 ? e.examples.map(exampleLink).join("<br>") : "none in this network";
    return `<tr><td><code>${html(e.template)}</code></td><td>${html(e.about)}${accepts}</td><td>${examples}</td></tr>`;
  });
  const count = (label: string, n: number) => `<tr><th>${label}</th><td class="n">${n}</td></tr>`;
  return page("Mesh Network Topology Read API v1 — static copy", [
    "<h1>Mesh Network Topology Read API v1</h1>",
    `<p>This site is a static copy of the Mesh Network Topology Read API v1 of this network. Every answer of the API was computed once, from ${when}, and is served as a file: JSON, for <code>GET</code>, <code>HEAD</code> and <code>OPTIONS</code>. It changes when the site is built again.</p>`,
    "<h2>This build</h2>",
    "<table>",
    `<tr><th>Taken at</th><td>${takenAt === null ? "unknown" : html(takenAt)}</td></tr>`,
    count("Access points", model.accesspoints.length),
    count("Interfaces", model.interfaces.length),
    count("Links", model.links.length),
    count("Sites", model.sites.length),
    "</table>",
    "<h2>Endpoints</h2>",
    `<p>The API root <a href="${urlFor("api-root")}">${urlFor("api-root")}</a> lists the endpoints in JSON, with the filters each list accepts. Every endpoint also accepts <code>format=api</code>, and every list <code>in_bbox</code>, both ignored: a box gets the whole list, a superset of its items (a static copy cannot cut boxes). <code>status</code> is one of <code>online</code>, <code>flapping</code>, <code>offline</code> or <code>all</code>; ${byDefault}. Each example below is an answer of this build.</p>`,
    "<table>",
    "<tr><th>Endpoint</th><th>Answers</th><th>Example</th></tr>",
    ...rows,
    "</table>",
    "<h2>Description, reference, graph and map</h2>",
    "<ul>",
    `<li><a href="${urlFor("openapi")}"><code>${urlFor("openapi")}</code></a>: the API described in OpenAPI 3.1, for client generators and API tools.</li>`,
    ...OUTPUT_RECORDS.filter((o) => o.present?.(model) ?? true).map(
      (o) => `<li><a href="${urlFor(o.kind)}"><code>${urlFor(o.kind)}</code></a>: ${o.landing}</li>`,
    ),
    ...OUTPUTS.flatMap((o) => (o as OutputBase).landingLinks?.(PLACES) ?? []),
    `<li><a href="${MAP_FOLDER}"><code>${MAP_FOLDER}</code></a>: a map of the access points and links.</li>`,
    `<li><a href="${DOCS_FOLDER}"><code>${DOCS_FOLDER}</code></a>: the API reference, rendered from the OpenAPI document, where requests can be tried.</li>`,
    "</ul>",
    "<h2>Snapshots</h2>",
    `<p>The topology dump and this API tree as archives, one a day, with their SHA-256 sums: <a href="/${SNAPSHOT_DIR}/">/${SNAPSHOT_DIR}/</a>, when this site publishes them.</p>`,
  ]);
}

function exampleLink(target: string): string {
  let shown: string;
  try {
    shown = decodeURIComponent(target);
  } catch {
    shown = target;
  }
  return `<a href="${html(target)}"><code>${html(shown)}</code></a>`;
}

/** What the snapshot listing needs of the snapshot index (publish/archives.ts). */
export interface SnapshotListing {
  readonly snapshots: readonly {
    readonly date: string;
    readonly taken_at: string | null;
    readonly files: readonly { readonly file: string; readonly kind: string; readonly bytes: number; readonly sha256: string }[];
  }[];
}

/** `/snapshots/`: every archive kept, newest first, with its size and SHA-256; links are relative to the folder. */
export function snapshotListing(index: SnapshotListing): string {
  // Before a first snapshot the folder holds this page alone: the landing page's link is no 404.
  if (index.snapshots.length === 0)
    return page("Snapshots — Mesh Network Topology Read API v1", [
      "<h1>Snapshots</h1>",
      `<p>This site publishes no snapshots yet: archives of the topology dump and of its API tree, one a day, appear here once the site's operator writes them (<code>build --snapshot</code> or <code>snapshot</code>). Back to <a href="../">the landing page</a>.</p>`,
    ]);
  const rows = index.snapshots.flatMap((s) =>
    s.files.map(
      (f) =>
        `<tr><td>${html(s.date)}</td><td>${s.taken_at === null ? "unknown" : html(s.taken_at)}</td>` +
        `<td><a href="${html(encodeURIComponent(f.file))}">${html(f.file)}</a></td><td>${f.kind === "dump" ? "topology dump" : f.kind === "api" ? "API tree" : html(f.kind)}</td>` +
        `<td class="n">${megabytes(f.bytes)}</td><td><code>${html(f.sha256)}</code></td></tr>`,
    ),
  );
  return page("Snapshots — Mesh Network Topology Read API v1", [
    "<h1>Snapshots</h1>",
    `<p>The topology dump this site was built from and its API tree, as archives: one snapshot a day, newest first. Check a download against <a href="${SNAPSHOT_FILES.sums}">${SNAPSHOT_FILES.sums}</a> (<code>sha256sum -c ${SNAPSHOT_FILES.sums}</code>); the same list as JSON: <a href="${SNAPSHOT_FILES.index}">${SNAPSHOT_FILES.index}</a>. Back to <a href="../">the landing page</a>.</p>`,
    "<table>",
    "<tr><th>Date</th><th>Taken at</th><th>Archive</th><th>Contents</th><th>Size</th><th>SHA-256</th></tr>",
    ...rows,
    "</table>",
  ]);
}

/** Sizes in MB (10^6 bytes), two decimals; a non-empty file never shows as 0.00. */
export function megabytes(bytes: number): string {
  if (bytes > 0 && bytes < 5_000) return "&lt; 0.01 MB";
  return `${(bytes / 1_000_000).toFixed(2)} MB`;
}
