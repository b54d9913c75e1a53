import { deferred, rendered, type Body } from "./body.ts";
import { docsPage } from "./documents/docs.ts";
import { filterValues, listFiles } from "./filters/derive.ts";
import { DEFAULT_MAP_SETTINGS, mapPage, type MapSettings } from "./documents/map.ts";
import { groupBy } from "./model/collections.ts";
import { statusOf, type InterfaceEntry, type Model } from "./model/model.ts";
import { openApiDocument } from "./documents/openapi.ts";
import { OUTPUTS } from "./outputs/index.ts";
import type { OutputBase } from "./outputs/output.ts";
import { apiRoot, landingPage } from "./documents/pages.ts";
import { renderLink, renderSite } from "./model/resources.ts";
import {
  aliasesBody,
  fileFor,
  layoutOf,
  NOT_FOUND_BODY,
  placeFile,
  rulesFor,
  type Aliases,
  type Bounds,
  type Layout,
  type LayoutPlan,
  type Others,
  PLACES,
  type FileName,
  type Rule,
} from "./routes.ts";
import type { ResolvedLink } from "./model/validator.ts";

export interface OutputFile {
  /** path under the output root, starting with "/" */
  readonly path: string;
  readonly body: Body;
  /**
   * An earlier file of the plan that holds these very bytes by the plan's making (a resource under
   * another of its keys, or a filter that keeps every item): a writer may give both names one file.
   */
  readonly sameAs?: string;
}

/**
 * Every response the API can give for this network, as (file, body) pairs at the places the route
 * table's templates name (fileFor). A generator, so the caller writes as it goes instead of holding
 * every body. Host files (rules, error pages) are the hosts' business, not the plan's.
 */
export function* outputFiles(
  model: Model,
  settings: { readonly map?: MapSettings } = {},
  // the values validate found for this dump, when the model has since been given what the outputs carry
  values: PlaceholderValues = placeholderValues(model),
): Generator<OutputFile> {
  const { lists, outputs, resources } = outputParts(model, settings, values);
  yield* lists;
  yield* outputs;
  yield* resources;
}

/**
 * The plan in three parts, which a writer may write side by side (docs/performance.md): the lists
 * and the outputs are long to render and hold most of a build's bytes in a few thousand files; the
 * resources' files are quick to render, hundreds of thousands of short files whose cost is the file
 * system's. Side by side, the lists and outputs are rendered while the resources' files are made.
 */
export interface PlanParts {
  /** the documents, the lists and their filters */
  readonly lists: Iterable<OutputFile>;
  /** the outputs' files (outputs/: the records beside the API, the history, the metrics) */
  readonly outputs: Iterable<OutputFile>;
  /** every resource's files: links, sites, access points and their interfaces */
  readonly resources: Iterable<OutputFile>;
}

export function outputParts(
  model: Model,
  settings: { readonly map?: MapSettings } = {},
  values: PlaceholderValues = placeholderValues(model),
): PlanParts {
  const placed = function* (files: Iterable<OutputFile>): Generator<OutputFile> {
    for (const file of files) {
      const path = placeFile(file.path, values.layout);
      yield file.sameAs === undefined
        ? { path, body: file.body }
        : { path, body: file.body, sameAs: placeFile(file.sameAs, values.layout) };
    }
  };
  const flat = flatParts(model, settings, aliasesBody(values, model.settings.defaultStatus));
  return { lists: placed(flat.lists), outputs: placed(flat.outputs), resources: placed(flat.resources) };
}

/** The parts at their paths in a flat build (routes/layout.ts places them). */
function flatParts(model: Model, settings: { readonly map?: MapSettings }, routing: Body): PlanParts {
  return { lists: flatLists(model, settings, routing), outputs: flatOutputs(model), resources: flatResources(model) };
}

const out = (path: string, body: Body, sameAs?: string): OutputFile => (sameAs === undefined ? { path, body } : { path, body, sameAs });

/** The documents and the lists, at their flat paths. */
function* flatLists(model: Model, settings: { readonly map?: MapSettings }, routing: Body): Generator<OutputFile> {
  yield out(fileFor("notFound"), NOT_FOUND_BODY);
  // The ways in: a landing page every static host serves at "/", and the API root.
  yield out(fileFor("landing"), landingPage(model));
  yield out(fileFor("apiRoot"), apiRoot(model));
  yield out(fileFor("aliases"), routing);
  yield out(fileFor("routingCopy"), routing);
  // Descriptions and views of the API, beside it: OpenAPI, the map (Leaflet's files are copied by
  // io/write/map-assets.ts), the reference (Swagger UI's by io/write/docs-assets.ts).
  yield out(fileFor("openapi"), openApiDocument(model.settings));
  yield out(fileFor("map"), mapPage(model, settings.map ?? DEFAULT_MAP_SETTINGS));
  yield out(fileFor("docs"), docsPage());
  // The lists and their filters (filters/records.ts).
  // as they are: a status file's `sameAs` is found only when read (filters/derive.ts), which the layout's pass never does
  yield* listFiles(model);
}

/** The outputs' files at their paths in a flat build. */
function* flatOutputs(model: Model): Generator<OutputFile> {
  for (const o of OUTPUTS as readonly OutputBase[])
    for (const { file, values, body } of o.bodies(model, PLACES)) yield out(fileFor(file as FileName, values), body);
}

/** The resources' files at their paths in a flat build: links, sites, access points and their interfaces. */
function* flatResources(model: Model): Generator<OutputFile> {
  const link = recentlyRendered((l: ResolvedLink) => renderLink(l, model));
  const linkList = (links: readonly ResolvedLink[]) => rendered(links, link);
  // A link's detail under its id, then under its peers' pairs, one after the other: rendered once, one file.
  const linkDetail = (key: string, l: ResolvedLink, sameAs?: string) =>
    out(
      fileFor("linkDetail", { key }),
      deferred(() => link(l)),
      sameAs,
    );
  const pairs = model.linkByPeers[Symbol.iterator]();
  let pair = pairs.next();
  for (const l of model.links) {
    const detail = linkDetail(String(l.id), l);
    yield detail;
    for (; !pair.done && pair.value[1] === l; pair = pairs.next()) yield linkDetail(pair.value[0], l, detail.path);
  }
  // pairs in another order than the links (none, as the model is made): each written all the same
  for (; !pair.done; pair = pairs.next()) yield linkDetail(...pair.value);

  for (const s of model.sites) yield out(fileFor("siteDetail", { id: String(s.id) }), renderSite(s));

  yield* accesspointFiles(model, linkList);
}

/**
 * An access point's files under each of its addresses, then those of the interfaces it holds (an
 * interface's access point is its detail again): each file that repeats another after it (sameAs).
 */
function* accesspointFiles(model: Model, linkList: (links: readonly ResolvedLink[]) => Body): Generator<OutputFile> {
  const linkStatus = (l: ResolvedLink) => statusOf(l.timestamp, model.takenAt);
  const ipsOf = groupBy([...model.accesspointByIp], ([, a]) => a);
  const addressesOf = groupBy([...model.interfaceByAddress], ([, e]) => e.ap);
  for (const [a, ips] of ipsOf) {
    const first = ips[0][0];
    const at = (name: "accesspointDetail" | "accesspointLinks" | "accesspointInterfaces", ip: string) => fileFor(name, { ip });
    const links = model.linksByAccesspoint.get(a.main_ip) ?? [];
    // Its default without `status`, when the list default is a status (the route table points there).
    const byDefault = model.settings.defaultStatus;
    const kept = byDefault === "all" ? links : links.filter((l) => linkStatus(l) === byDefault);
    for (const [ip] of ips) {
      const again = ip !== first;
      yield out(at("accesspointDetail", ip), a.json, again ? at("accesspointDetail", first) : undefined);
      yield out(at("accesspointLinks", ip), linkList(links), again ? at("accesspointLinks", first) : undefined);
      if (byDefault !== "all") {
        const byStatus = (ip: string) => fileFor("accesspointLinksByStatus", { ip, status: byDefault });
        yield out(
          byStatus(ip),
          deferred(() => linkList(kept)),
          kept.length === links.length ? at("accesspointLinks", ip) : again ? byStatus(first) : undefined,
        );
      }
      yield out(
        at("accesspointInterfaces", ip),
        rendered(a.interfaces, (id) => model.interfaceById.get(id)!.json),
        again ? at("accesspointInterfaces", first) : undefined,
      );
    }
    const firstOf = new Map<InterfaceEntry, string>();
    for (const [ip, e] of addressesOf.get(a) ?? []) {
      const before = firstOf.get(e);
      if (before === undefined) firstOf.set(e, ip);
      yield out(fileFor("interfaceDetail", { ip }), e.json, before === undefined ? undefined : fileFor("interfaceDetail", { ip: before }));
      yield out(fileFor("interfaceAccesspoint", { ip }), a.json, at("accesspointDetail", first));
    }
  }
  // interfaces of an access point no address names (none, as validation makes the model): each written all the same
  for (const [a, addresses] of addressesOf)
    if (!ipsOf.has(a))
      for (const [ip, e] of addresses) {
        yield out(fileFor("interfaceDetail", { ip }), e.json);
        yield out(fileFor("interfaceAccesspoint", { ip }), e.ap.json);
      }
}

/**
 * `render` remembering its last few bodies: a link is rendered for each file that holds it (about ten
 * by the plan's files), and the files that hold it one after the other (its details, an access
 * point's links and those of them with the default status) take the body made a moment ago.
 */
function recentlyRendered<T extends object>(render: (item: T) => Buffer, keep = 256): (item: T) => Buffer {
  const recent = new Map<T, Buffer>();
  return (item) => {
    let body = recent.get(item);
    if (body === undefined) {
      body = render(item);
      if (recent.size >= keep) recent.delete(recent.keys().next().value!);
      recent.set(item, body);
    }
    return body;
  };
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
  /** the present values of each ordered placeholder in their order (firmware bounds), with their files' keys */
  readonly bounds: Bounds;
  /** the route table of this build (its list default) */
  readonly rules: readonly Rule[];
  /** the folders the build splits (routes/layout.ts), and those still over the folder limit after the split */
  readonly layout: Layout;
  readonly over: LayoutPlan["over"];
}

const valuesOf = new WeakMap<Model, PlaceholderValues>();

/** The values present in the data for each data placeholder of the route table, with the aliases among them. */
export function placeholderValues(model: Model): PlaceholderValues {
  let values = valuesOf.get(model);
  if (!values) {
    // The layout follows the entries of the flat build's folders: its paths, bodies left unread.
    const { layout, over } = layoutOf(
      (function* () {
        // without what the outputs carry: the layout is the dump's, the same for validate and build (one day of the history)
        for (const part of Object.values(flatParts({ ...model, carried: undefined }, {}, ""))) for (const file of part) yield file.path;
      })(),
      model.settings.folderLimit,
    );
    values = { ...filterValues(model), rules: rulesFor(model.settings), layout, over };
    valuesOf.set(model, values);
  }
  return values;
}
