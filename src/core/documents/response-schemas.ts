import { z } from "zod";
import { ACCESSPOINT_FIELDS, WIFI_FIELDS, type FieldKind } from "../model/fields.ts";
import { STATUSES } from "../model/model.ts";
import { brandField, DEFAULT_SETTINGS } from "../settings.ts";
import { listFilters } from "./pages.ts";
import { OUTPUTS, type OutputSchemaName } from "../outputs/index.ts";
import { OUTPUT_RECORDS } from "../outputs/derived.ts";
import type { OutputBase } from "../outputs/output.ts";
import { DOCS_FOLDER, ERROR_DETAILS, MAP_FOLDER, NOT_FOUND_BODY, OUTPUT_ROOT_LINKS, ROUTE_NAMES, urlFor } from "../routes.ts";

/**
 * zod schemas of the response bodies, as records.ts, resources.ts, geojson.ts, pages.ts and the
 * preview render them: the source of the OpenAPI document's schemas (openapi.ts). Every object is
 * strict, so a body with a field the renderers do not write fails validation, and every field the
 * dump lets be null is nullable here too. The field tables (fields.ts) drive both the rendering and
 * these schemas, so a new field cannot be rendered without being described.
 */

/** JSON Schema's own formats only: zod's IPv6 pattern refuses valid forms such as an embedded IPv4 tail. */
const ipv4 = z.string().meta({ format: "ipv4" });
const ipv6 = z.string().meta({ format: "ipv6" });

/** `formatMicros`: UTC, seconds always, six fraction digits or none. */
const Timestamp = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{6})?Z$/)
  .meta({ format: "date-time", description: "UTC, `YYYY-MM-DDTHH:MM:SS[.ffffff]Z` (no fraction when it is zero)" });

const longitude = z.number().min(-180).max(180);
const latitude = z.number().min(-90).max(90);
const Position = z.tuple([longitude, latitude]).meta({ description: "longitude, latitude" });
const Point = z.strictObject({ type: z.literal("Point"), coordinates: Position }).meta({ description: "A GeoJSON Point" });
const LineString = z.strictObject({ type: z.literal("LineString"), coordinates: z.array(Position).length(2) });

const id = z.int().min(0);

const OUTPUT_KINDS = {
  string: z.string(),
  integer: z.int(),
  float: z.number(),
  boolean: z.boolean(),
  timestamp: Timestamp,
  date: z.iso.date(),
  point: Point,
  decimal3: z
    .string()
    .regex(/^-?\d+\.\d{3}$/)
    .meta({ description: "decimal text, three fraction digits" }),
  decimal1: z
    .string()
    .regex(/^-?\d+\.\d$/)
    .meta({ description: "decimal text, one fraction digit" }),
} satisfies Record<FieldKind | "decimal3" | "decimal1", z.ZodType>;

function nullableFields(fields: readonly (readonly [string, keyof typeof OUTPUT_KINDS])[]): Record<string, z.ZodType> {
  return Object.fromEntries(fields.map(([name, kind]) => [name, OUTPUT_KINDS[kind].nullable()]));
}

/** An access point's members as a brand names them (records.ts writes them so). */
const accesspointFields = (brand: string): Record<string, z.ZodType> => ({
  main_ip: ipv4,
  main_ipv6: ipv6.nullable(),
  ...nullableFields(ACCESSPOINT_FIELDS.map(([name, kind]) => [brandField(name, brand), kind] as const)),
  site: id.nullable(),
});

const Address = z.discriminatedUnion("family", [
  z.strictObject({ id, address: ipv4, family: z.literal("inet"), netmask_prefixlen: z.int().min(0).max(32), interface: id }),
  z.strictObject({ id, address: ipv6, family: z.literal("inet6"), netmask_prefixlen: z.int().min(0).max(128), interface: id }),
]);

const WifiAttributes = z.strictObject({ interface: id, ...nullableFields(WIFI_FIELDS) });

const Interface = z.strictObject({
  addresses: z.array(Address),
  if_name: z.string().nullable(),
  if_hwaddress: z.string().nullable(),
  is_wireless: z.boolean(),
  wifi_attributes: z.array(WifiAttributes).max(1).meta({ description: "empty, or the one entry of an interface with wifi attributes" }),
  accesspoint: ipv4.meta({ description: "main_ip of the owning access point" }),
});

const quality = z.number().min(0).max(1);

/** Python's repr of a longitude: `12.0`, `-7.5`, `1e-05`. */
const longitudeText = z.string().regex(/^-?(\d+\.\d+|\d(\.\d+)?e[+-]\d{2,3})$/);

const Link = z.strictObject({
  endpoints: z.array(z.strictObject({ quality, interface: Interface })).length(2),
  id,
  is_wireless: z.boolean(),
  position: z
    .record(longitudeText, latitude)
    .meta({
      minProperties: 1,
      maxProperties: 2,
      description: "endpoint longitudes (as Python writes a float) to latitudes; null when fewer than two endpoints have a position",
    })
    .nullable(),
  quality,
  timestamp: Timestamp.nullable(),
  wifi_ssid: z.string().nullable(),
});

const Site = z.strictObject({
  accesspoints: z.array(ipv4),
  id,
  position: Point.nullable().meta({ description: "the mean of the members' positions; null when none has one" }),
  post_address: z.string(),
  radius: z.number().min(20),
});

const feature = <G extends z.ZodType, P extends z.ZodType>(geometry: G, properties: P) =>
  z.strictObject({ type: z.literal("Feature"), geometry: geometry.nullable(), properties });
const featureCollection = <F extends z.ZodType>(feature: F) =>
  z.strictObject({ type: z.literal("FeatureCollection"), features: z.array(feature) });

/** The schemas that name brand fields, for one brand. */
function accesspointSchemas(brand: string) {
  const fields = accesspointFields(brand);
  const Accesspoint = z.strictObject(fields);
  // The geometry is the position; the properties are every other field.
  const { position: _position, ...properties } = fields;
  const AccesspointFeature = feature(Point, z.strictObject(properties));
  return {
    Accesspoint,
    AccesspointList: z.array(Accesspoint),
    AccesspointFeature,
    AccesspointFeatureCollection: featureCollection(AccesspointFeature),
  };
}
const neutral = accesspointSchemas(DEFAULT_SETTINGS.brand);
const LinkFeature = feature(
  LineString,
  z.strictObject({
    endpoints: z.array(ipv4).length(2),
    id,
    timestamp: Timestamp.nullable(),
    quality,
    is_wireless: z.boolean(),
    wifi_ssid: z.string().nullable(),
  }),
);
const SiteFeature = feature(Point, z.strictObject({ accesspoints: z.array(ipv4), id }));

const filters = listFilters();
const resources = ["accesspoint", "interface", "link", "site"] as const;
const ApiRoot = z.strictObject({
  ...Object.fromEntries(resources.map((r) => [r, z.literal(urlFor(`${r}-list`))])),
  filters: z.strictObject(Object.fromEntries(resources.map((r) => [r, z.array(z.enum(filters[r]))]))),
  status_values: z.array(z.enum([...STATUSES, "all"])),
  openapi: z.literal(urlFor("openapi")),
  ...Object.fromEntries(
    OUTPUT_RECORDS.map((o) => [o.rootMember, "present" in o ? z.literal(urlFor(o.kind)).optional() : z.literal(urlFor(o.kind))]),
  ),
  ...Object.fromEntries(
    OUTPUT_ROOT_LINKS.map((l) => [
      l.member,
      l.description === undefined ? z.literal(l.url) : z.literal(l.url).meta({ description: l.description }),
    ]),
  ),
  map: z.literal(MAP_FOLDER).meta({ description: "the map's folder: its page is the folder's index" }),
  docs: z
    .literal(DOCS_FOLDER)
    .meta({ description: "the API reference's folder (HTML, no part of the API): its page is the folder's index" }),
  taken_at: Timestamp.nullable(),
});

const freeObject = z.record(z.string(), z.unknown());

/** The document itself: its top level exactly, the rest as OpenAPI 3.1 has it (checked by a validator in the tests). */
const OpenApiDocument = z.strictObject({
  openapi: z.literal("3.1.0"),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  servers: z.array(z.looseObject({ url: z.string() })),
  security: z.array(freeObject),
  paths: z.record(z.string(), freeObject),
  components: freeObject,
});

const notFound = JSON.parse(NOT_FOUND_BODY) as { detail: string };
const NotFound = z.strictObject({ detail: z.literal(notFound.detail) });
/**
 * The preview's other errors (their texts: routes.ts ERROR_DETAILS; a static host has its own):
 * each a `detail` sentence, as Django REST framework words them.
 */
export const PREVIEW_ERRORS = [
  {
    status: 400,
    name: "MalformedRequest",
    detail: ERROR_DETAILS.malformed,
    when: "A request target that cannot be decoded (bad percent-encoding, a NUL) or a broken request",
  },
  { status: 405, name: "MethodNotAllowed", detail: /^Method "[^"]*" not allowed\.$/, when: "Any method but GET, HEAD and OPTIONS" },
  { status: 414, name: "UriTooLong", detail: ERROR_DETAILS.uriTooLong, when: "A request target longer than 8,192 characters" },
  { status: 431, name: "HeaderFieldsTooLarge", detail: ERROR_DETAILS.headerTooLarge, when: "Request headers too large" },
  { status: 500, name: "InternalError", detail: ERROR_DETAILS.internal, when: "The preview failed to answer" },
] as const;

type ErrorName = (typeof PREVIEW_ERRORS)[number]["name"];
const errorSchemas = {} as Record<ErrorName, z.ZodType>;
for (const e of PREVIEW_ERRORS)
  errorSchemas[e.name] = z.strictObject({ detail: typeof e.detail === "string" ? z.literal(e.detail) : z.string().regex(e.detail) });

/** The preview's answer to OPTIONS (Django REST framework's metadata, as the original gave it). */
const Options = z.strictObject({
  name: z.enum(Object.values(ROUTE_NAMES) as [string, ...string[]]),
  description: z.string(),
  renders: z.array(z.literal("application/json")),
  parses: z.array(z.string()).max(0),
});

/** Named schemas: the document's components, in this order. */
export const RESPONSE_SCHEMAS = {
  Point,
  LineString,
  Timestamp,
  Accesspoint: neutral.Accesspoint,
  AccesspointList: neutral.AccesspointList,
  Address,
  WifiAttributes,
  Interface,
  InterfaceList: z.array(Interface),
  Link,
  LinkList: z.array(Link),
  Site,
  SiteList: z.array(Site),
  AccesspointFeature: neutral.AccesspointFeature,
  AccesspointFeatureCollection: neutral.AccesspointFeatureCollection,
  LinkFeature,
  LinkFeatureCollection: featureCollection(LinkFeature),
  SiteFeature,
  SiteFeatureCollection: featureCollection(SiteFeature),
  ApiRoot,
  // the outputs' further schemas (the history's), then each record's own
  ...(Object.fromEntries(OUTPUTS.flatMap((o) => Object.entries((o as OutputBase).schemas ?? {}))) as Record<OutputSchemaName, z.ZodType>),
  ...(Object.fromEntries(OUTPUT_RECORDS.map((o) => [o.schema.name, o.schema.zod])) as Record<OutputSchemaName, z.ZodType>),
  OpenApiDocument,
  NotFound,
  ...errorSchemas,
  Options,
} as const;

export type ResponseSchemaName = keyof typeof RESPONSE_SCHEMAS;

const byBrand = new Map<string, Record<ResponseSchemaName, z.ZodType>>();

/** The named schemas of a build whose brand fields carry `brand` (the neutral ones for `mesh`), in the same order. */
export function responseSchemas(brand: string): Record<ResponseSchemaName, z.ZodType> {
  let schemas = byBrand.get(brand);
  if (!schemas)
    byBrand.set(
      brand,
      (schemas = brand === DEFAULT_SETTINGS.brand ? RESPONSE_SCHEMAS : { ...RESPONSE_SCHEMAS, ...accesspointSchemas(brand) }),
    );
  return schemas;
}
