import { z } from "zod";
import { queryDoc } from "../filters/derive.ts";
import { STATUSES } from "../model/model.ts";
import { PREVIEW_ERRORS, responseSchemas, type ResponseSchemaName } from "./response-schemas.ts";
import {
  API_HEADERS,
  DOCS_FOLDER,
  errorBody,
  IGNORED_PARAMETERS,
  methodNotAllowed,
  NOT_FOUND_BODY,
  QUERY_PLACEHOLDERS,
  rulesFor,
  urlFor,
  type RouteKind,
  type Rule,
} from "../routes.ts";
import { OUTPUTS, type OutputKind, type OutputRouteKind } from "../outputs/index.ts";
import { OUTPUT_RECORDS, OUTPUT_ROUTES } from "../outputs/derived.ts";
import type { OutputBase } from "../outputs/output.ts";
import { DEFAULT_SETTINGS, type SiteSettings } from "../settings.ts";

/**
 * `/api/v1/openapi.json`: the OpenAPI 3.1 description of this API, generated from zod schemas of the
 * responses (response-schemas.ts) and from the route table (routes.ts), never written by hand. Pure
 * and model-free: the same document for every network, so it is byte-identical across builds.
 * Compact JSON, like every other response of the API.
 *
 * Paths, parameters and their values come from RULES: each path form is a path (a list form also
 * without its slash, which redirects), each query condition a parameter. What the rules cannot say
 * (which body a kind answers with, what a parameter means) is in the tables below, keyed by the rule
 * kinds and names, so a new kind fails to compile and a new parameter shows up undocumented (a test
 * checks that none is).
 */
export function openApiDocument(settings: SiteSettings = DEFAULT_SETTINGS): string {
  return JSON.stringify(document(settings));
}

type Served = Exclude<RouteKind, "not-found">;

/** What each kind answers; `geojson` is its body under `data_format=geojson`, where RULES have one. */
const KINDS: Record<Served, { readonly summary: string; readonly body: string; readonly geojson?: ResponseSchemaName }> = {
  "api-root": {
    summary: "The API root: the list endpoints, the filters each accepts, the status values, when the data was taken",
    body: "ApiRoot",
  },
  openapi: { summary: "This document", body: "OpenApiDocument" },
  ...(Object.fromEntries(OUTPUT_RECORDS.map((o) => [o.kind, { summary: o.summary, body: o.schema.name }])) as Record<
    OutputKind,
    { summary: string; body: string }
  >),
  ...(Object.fromEntries(OUTPUT_ROUTES.map((r) => [r.kind, { summary: r.summary, body: r.body }])) as Record<
    OutputRouteKind,
    { summary: string; body: string }
  >),
  "link-list": { summary: "All links", body: "LinkList", geojson: "LinkFeatureCollection" },
  "link-detail": { summary: "One link", body: "Link" },
  "site-list": { summary: "All sites", body: "SiteList", geojson: "SiteFeatureCollection" },
  "site-detail": { summary: "One site, by its id", body: "Site" },
  "accesspoint-list": { summary: "All access points", body: "AccesspointList", geojson: "AccesspointFeatureCollection" },
  "accesspoint-detail": { summary: "One access point, by its main_ip or main_ipv6", body: "Accesspoint" },
  "accesspoint-links": { summary: "The links of an access point", body: "LinkList" },
  "accesspoint-interfaces": { summary: "The interfaces of an access point", body: "InterfaceList" },
  "interface-list": { summary: "All interfaces", body: "InterfaceList" },
  "interface-detail": { summary: "The interface that holds an address (IPv4 or IPv6)", body: "Interface" },
  "interface-accesspoint": { summary: "The access point of the interface that holds an address", body: "Accesspoint" },
};

/** Values of a placeholder that does not come from the data. */
const PLACEHOLDER_VALUES: Readonly<Record<string, readonly string[]>> = { status: STATUSES };

interface Parameter {
  readonly name: string;
  readonly in: "path" | "query";
  readonly required?: true;
  readonly description: string;
  readonly schema: Record<string, unknown>;
}

const pathParameter = (name: string, description: string, schema: Record<string, unknown>): Parameter => ({
  name,
  in: "path",
  required: true,
  description,
  schema,
});
const address = { type: "string", description: "canonical text (IPv4 dotted quad, IPv6 as RFC 5952)" };

/**
 * The path placeholders of RULES, as OpenAPI parameters. `:key` is a link's id or its two peers: one
 * parameter, not `{id}` and `{ip_a}-{ip_b}`, because two templates that differ only in a parameter's
 * spelling are ambiguous to the tools that route by template (Redocly's no-ambiguous-paths).
 */
const PATH_PARAMETERS: Readonly<Record<string, Parameter>> = {
  ip: pathParameter("ip", "An access point's main_ip or main_ipv6; for an interface, any address it holds.", address),
  id: pathParameter("id", "The id.", { type: "integer", minimum: 0 }),
  key: pathParameter("key", "The link's id, or the main_ip of each of its two access points joined by `-` (either order).", {
    type: "string",
    pattern: "^(?:[0-9]+|[^-/]+-[^-/]+)$",
    examples: ["7", "10.0.0.1-10.0.0.2"],
  }),
  // the outputs' own placeholders (`:day` of the history)
  ...Object.fromEntries(
    OUTPUTS.flatMap((o) =>
      Object.entries((o as OutputBase).pathParameters ?? {}).map(([name, p]) => [name, pathParameter(name, p.description, p.schema)]),
    ),
  ),
};

/** A placeholder of a path form of RULES (`:ip`). */
const PLACEHOLDER = /:([a-z]+)/g;

/** The OpenAPI path template of a path form of RULES (`rule.from`); a list form's redirecting twin without the slash is not it. */
export function openApiPath(from: string): string {
  return from.replace(PLACEHOLDER, (_, name: string) => `{${name}}`);
}

/** The path parameters of a path form of RULES, in order; a placeholder without its entry above is a developer's error. */
const pathParameters = (from: string): Parameter[] =>
  [...from.matchAll(PLACEHOLDER)].map(([, name]) => {
    const parameter = PATH_PARAMETERS[name];
    if (!parameter) throw new Error(`${from}: PATH_PARAMETERS does not describe :${name}`);
    return parameter;
  });

/** The path forms of the rules and their rules, in the table's order; the catch-all 404 is not a path. */
function routes(rules: readonly Rule[]): Map<string, Rule[]> {
  const byFrom = new Map<string, Rule[]>();
  for (const rule of rules) {
    if (rule.kind === "not-found") continue;
    const held = byFrom.get(rule.from);
    if (held) held.push(rule);
    else byFrom.set(rule.from, [rule]);
  }
  return byFrom;
}

const isPlaceholder = (value: string) => value.startsWith(":");
const code = (text: string) => `\`${text}\``;
const condition = ([name, value]: [string, string]) => code(isPlaceholder(value) ? name : `${name}=${value}`);

/**
 * The query parameters of one path form, from its rules (first match wins): the literal values that
 * select a file, a placeholder that selects one by value, a rule that refuses every other value (a
 * placeholder rule with no file and no other condition), or none, when other values fall through to
 * rules that do not name the parameter and so are ignored.
 */
function queryParameters(rules: readonly Rule[], doc: (name: string) => string): { parameters: Parameter[]; refused: string[] } {
  const names = [...new Set(rules.flatMap((r) => Object.keys(r.query)))];
  const parameters = names.map((name): Parameter => {
    const literals: string[] = [];
    const placeholders: string[] = [];
    let closed = false;
    for (const rule of rules) {
      const value = rule.query[name];
      if (value === undefined) continue;
      if (rule.to === null) {
        if (isPlaceholder(value) && Object.keys(rule.query).length === 1) closed = true;
        continue;
      }
      if (!isPlaceholder(value)) literals.push(value);
      else placeholders.push(value.slice(1));
    }
    const fromData = placeholders.filter((p) => QUERY_PLACEHOLDERS[p]?.data !== false || !PLACEHOLDER_VALUES[p]);
    const values = [...new Set([...literals, ...placeholders.flatMap((p) => PLACEHOLDER_VALUES[p] ?? [])])];
    let schema: Record<string, unknown>;
    let rule: string;
    if (literals.length === 0 && placeholders.length === 0) {
      schema = { type: "string" };
      rule = "Any value, empty too, answers 404.";
    } else if (fromData.length > 0) {
      schema = { type: "string" };
      rule = "A value the build did not precompute (one no item has) answers 404.";
    } else if (closed || placeholders.length > 0) {
      schema = { type: "string", enum: values };
      rule = `${values.length <= 8 ? `Accepted here: ${values.map((v) => (v === "" ? "empty" : code(v))).join(", ")}; any` : "Any"} other value answers 404.`;
    } else {
      schema = { type: "string", examples: values };
      rule = "Any other value is ignored (the answer is the one without the parameter).";
    }
    return { name, in: "query", description: `${doc(name)} ${rule}`, schema };
  });
  const refused = rules
    .filter((r) => r.to === null && Object.keys(r.query).length > 1)
    .map((r) => Object.entries(r.query).map(condition).join(" with "));
  return { parameters, refused: [...new Set(refused)] };
}

const camel = (kind: string) => kind.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
const ref = (group: string, name: string) => ({ $ref: `#/components/${group}/${name}` });
const JSON_TYPE = API_HEADERS["Content-Type"];
/** Content-Type is the media type of `content`; OpenAPI ignores it among response headers. */
const HEADER_NAMES = Object.keys(API_HEADERS).filter((h) => h.toLowerCase() !== "content-type");
const headers = () => Object.fromEntries(HEADER_NAMES.map((h) => [h, ref("headers", h)]));

function document(settings: SiteSettings): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const [from, rules] of routes(rulesFor(settings))) {
    const kind = rules[0].kind as Served;
    const about = KINDS[kind];
    const geojson = rules.some((r) => r.to !== null && r.query.data_format === "geojson");
    if (geojson && !about.geojson) throw new Error(`${kind} answers data_format=geojson, but KINDS names no GeoJSON body for it`);
    const schema = geojson
      ? {
          oneOf: [
            { ...ref("schemas", about.body), description: "without `data_format=geojson`" },
            { ...ref("schemas", about.geojson!), description: "with `data_format=geojson`" },
          ],
        }
      : ref("schemas", about.body);
    const { parameters: query, refused } = queryParameters(rules, (name) => queryDoc(kind, name, settings));
    const description = refused.length > 0 ? `Not precomputed, answered 404: ${refused.join("; ")}.` : undefined;
    const ok = {
      description: geojson ? "The answer: a JSON array, or with `data_format=geojson` a GeoJSON FeatureCollection" : "The answer",
      headers: headers(),
      content: { [JSON_TYPE]: { schema } },
    };
    const path = openApiPath(from);
    const id = camel(kind);
    const ignored = IGNORED.filter((p) => p.on === "every endpoint" || (p.on === "lists" && from.endsWith("/") && kind.endsWith("-list")));
    const parameters = [...pathParameters(from), ...query, ...ignored.map((p) => ref("parameters", p.name))];
    const operations = (get: Record<string, unknown>, head: Record<string, unknown>, options: Record<string, unknown>, name: string) => ({
      parameters,
      get: { tags: [kind.split("-")[0]], summary: about.summary, ...(description && { description }), operationId: name, responses: get },
      head: { tags: [kind.split("-")[0]], summary: `${about.summary} (headers only)`, operationId: `${name}Head`, responses: head },
      options: { tags: [kind.split("-")[0]], summary: "What the endpoint renders", operationId: `${name}Options`, responses: options },
    });
    const errors = Object.fromEntries(DESCRIBED_ERRORS.map((e) => [String(e.status), ref("responses", e.name)]));
    paths[path] = operations(
      { "200": ok, "404": ref("responses", "NotFound"), ...errors },
      { "200": ref("responses", "Headers"), "404": ref("responses", "NotFoundHead") },
      { "200": ref("responses", "Options"), "404": ref("responses", "NotFound") },
      id,
    );
    // A list path without its slash: the preview redirects, as the original did; hosts that cannot redirect answer as for the slashed path.
    if (path.endsWith("/")) {
      paths[path.slice(0, -1)] = operations(
        {
          "301": ref("responses", "Redirect"),
          "200": { ...ok, description: `${ok.description}, on hosts that do not redirect: as for the path with its slash` },
          "404": ref("responses", "NotFound"),
          ...errors,
        },
        { "301": ref("responses", "Redirect"), "200": ref("responses", "Headers"), "404": ref("responses", "NotFoundHead") },
        { "301": ref("responses", "Redirect"), "200": ref("responses", "Options"), "404": ref("responses", "NotFound") },
        `${id}Redirect`,
      );
    }
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Mesh Network Topology Read API",
      version: "1",
      description: INFO,
      license: { name: "GPL-3.0-or-later", identifier: "GPL-3.0-or-later" },
    },
    // The paths are absolute and the build does not know its site's address: the site root, relative to where the document was fetched
    // (what OpenAPI assumes without `servers`, stated because tools and linters ask for it).
    servers: [{ url: "/", description: "the site that serves this document" }],
    // A public API: no operation asks for credentials.
    security: [],
    paths,
    components: {
      schemas: schemas(describedSchemas(responseSchemas(settings.brand))),
      parameters: Object.fromEntries(IGNORED.map((p) => [p.name, ignoredParameter(p)])),
      headers: headerComponents(),
      responses: responses(),
    },
  };
}

/**
 * The preview's errors an operation can meet. 405 answers the methods the document has no operation
 * for, and OpenAPI describes only the responses of operations: INFO says it in words, and its body is
 * no component, as nothing would refer to it.
 */
const METHOD_NOT_ALLOWED = PREVIEW_ERRORS.find((e) => e.status === 405)!;
const DESCRIBED_ERRORS = PREVIEW_ERRORS.filter((e) => e !== METHOD_NOT_ALLOWED);
const describedSchemas = (named: Readonly<Record<string, z.ZodType>>) =>
  Object.fromEntries(Object.entries(named).filter(([name]) => name !== METHOD_NOT_ALLOWED.name));

const INFO = [
  "A static copy of the Mesh Network Topology Read API v1: every answer is a file computed once from a topology dump.",
  `Every response under \`${urlFor("api-root")}\` but the reference's HTML page and its files (\`${DOCS_FOLDER}\`, this document rendered) carries the headers ${HEADER_NAMES.map(code).join(", ")} and is \`${JSON_TYPE}\`; every unknown path, identifier or filter value, and every filter combination that is not precomputed, answers 404 with \`${NOT_FOUND_BODY}\`.`,
  "HEAD, OPTIONS, redirects and the error bodies other than 404 are described as the preview (`mesh-api preview`) answers them; static hosts differ there (docs/hosting.md).",
  `Any method but GET, HEAD and OPTIONS answers ${METHOD_NOT_ALLOWED.status} with \`${errorBody(methodNotAllowed("<method>"))}\` (the preview).`,
  "Generated from the route table and zod schemas of the bodies; response objects are strict (no other members).",
].join("\n\n");

/** The parameters no rule names (routes.ts IGNORED_PARAMETERS): accepted and ignored. */
const IGNORED = Object.entries(IGNORED_PARAMETERS).map(([name, p]) => ({ name, ...p }));

const ignoredParameter = (p: (typeof IGNORED)[number]): Parameter => ({
  name: p.name,
  in: "query",
  description: `Accepted on ${p.on} and ignored: ${p.why}`,
  schema: { type: "string", examples: [...p.values] },
});

function headerComponents(): Record<string, unknown> {
  return Object.fromEntries(
    HEADER_NAMES.map((h) => [
      h,
      { description: `Always \`${API_HEADERS[h]}\``, required: true, schema: { type: "string", const: API_HEADERS[h] } },
    ]),
  );
}

function responses(): Record<string, unknown> {
  const body = (name: string) => ({ [JSON_TYPE]: { schema: ref("schemas", name) } });
  const out: Record<string, unknown> = {
    NotFound: {
      description: 'Not found (and every request a static copy does not answer): `{"detail":"Not found."}`',
      headers: headers(),
      content: body("NotFound"),
    },
    NotFoundHead: { description: "Not found, headers only", headers: headers() },
    Headers: { description: "The headers of the GET answer, without its body", headers: headers() },
    Options: { description: "What the endpoint renders", headers: headers(), content: body("Options") },
    Redirect: {
      description: "A list path without its slash: to the path with it, the query kept (no body)",
      headers: {
        Location: { description: "the path with its slash, and the query as sent", required: true, schema: { type: "string" } },
        ...headers(),
      },
    },
  };
  for (const e of DESCRIBED_ERRORS) out[e.name] = { description: e.when, headers: headers(), content: body(e.name) };
  return out;
}

function schemas(named: Readonly<Record<string, z.ZodType>>): Record<string, unknown> {
  const registry = z.registry<{ id: string }>();
  for (const [name, schema] of Object.entries(named)) registry.add(schema, { id: name });
  const { schemas } = z.toJSONSchema(registry, { target: "draft-2020-12", uri: (id) => `#/components/schemas/${id}` });
  // Components sit inside the document: its dialect (OpenAPI 3.1's, 2020-12) applies, and they are found by their key, not an $id.
  return Object.fromEntries(
    Object.entries(schemas).map(([name, { $schema: _dialect, $id: _id, ...schema }]) => [name, schema as Record<string, unknown>]),
  );
}

export { queryDoc };
