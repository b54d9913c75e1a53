import { z } from "zod";
import { BRAND_PATTERN, BRAND_RULE, COMMUNITY_URL_PATTERN, COMMUNITY_URL_RULE, DEFAULT_STATUSES } from "../settings.ts";
import { ACCESSPOINT_FIELDS, DEFAULT_FIRMWARE_TYPE, WIFI_FIELDS, type FieldKind } from "./fields.ts";
import { canonicalIp, canonicalIpv4, canonicalIpv6, type Family } from "../values/ip.ts";
import { checkDate, parseInstant, type Instant } from "../values/timestamp.ts";
import { fixedDecimal } from "../values/text.ts";

/**
 * zod schemas of the raw dump format `mesh-topology-dump/1`. They validate and normalise in one pass:
 * addresses become canonical text, timestamps become Instants, decimals become fixed-point text.
 */

/**
 * Free text from routers. A lone UTF-16 surrogate (JSON allows "\ud800") has no UTF-8 form: it would be
 * written as U+FFFD and collide with a real U+FFFD, so it is refused.
 */
const text = z.string().refine((s) => s.isWellFormed(), "not valid Unicode text (it holds a lone surrogate)");

const instant = z.string().transform((text, ctx): Instant => {
  const parsed = parseInstant(text);
  if (typeof parsed === "string") {
    ctx.addIssue({ code: "custom", message: `${parsed}: ${JSON.stringify(text)}` });
    return z.NEVER;
  }
  return parsed;
});

const date = z.string().superRefine((text, ctx) => {
  const problem = checkDate(text);
  if (problem) ctx.addIssue({ code: "custom", message: `${problem}: ${JSON.stringify(text)}` });
});

const finite = z.number().refine(Number.isFinite, "must be a finite number");

const point = z.strictObject({
  type: z.literal("Point", { error: 'must be "Point"' }),
  coordinates: z.tuple([
    finite.min(-180, "longitude must be between -180 and 180").max(180, "longitude must be between -180 and 180"),
    finite.min(-90, "latitude must be between -90 and 90").max(90, "latitude must be between -90 and 90"),
  ]),
});

const integer = z.number().int("must be an integer").refine(Number.isSafeInteger, "integer out of range");
const id = integer.min(0, "ids must not be negative");

function ipText(parse: (s: string) => string | undefined, what: string) {
  return z.string().transform((text, ctx) => {
    const ip = parse(text);
    if (ip === undefined) {
      ctx.addIssue({ code: "custom", message: `not a valid ${what} address: ${JSON.stringify(text)}` });
      return z.NEVER;
    }
    return ip;
  });
}

const decimal = (places: number) =>
  z.union([finite, text]).transform((value, ctx) => {
    const text = fixedDecimal(value, places);
    if (text === undefined) {
      ctx.addIssue({ code: "custom", message: `not a decimal number: ${JSON.stringify(value)}` });
      return z.NEVER;
    }
    return text;
  });

const kinds = {
  string: text,
  integer,
  float: finite,
  boolean: z.boolean(),
  timestamp: instant,
  date,
  point,
  decimal3: decimal(3),
  decimal1: decimal(1),
} satisfies Record<FieldKind | "decimal3" | "decimal1", z.ZodType>;

/** Every field may be null and defaults to null when absent. */
function nullableFields<const T extends readonly (readonly [string, keyof typeof kinds])[]>(fields: T) {
  return Object.fromEntries(fields.map(([name, kind]) => [name, (kinds[kind] as z.ZodType).nullable().default(null)])) as {
    [K in T[number] as K[0]]: z.ZodDefault<z.ZodNullable<(typeof kinds)[K[1]]>>;
  };
}

const address = z
  .strictObject({
    id,
    address: z.string(),
    netmask_prefixlen: integer,
  })
  .transform((a, ctx) => {
    const ip = canonicalIp(a.address);
    if (!ip) {
      ctx.addIssue({ code: "custom", path: ["address"], message: `not a valid IPv4 or IPv6 address: ${JSON.stringify(a.address)}` });
      return z.NEVER;
    }
    const max = ip.family === "inet" ? 32 : 128;
    if (a.netmask_prefixlen < 0 || a.netmask_prefixlen > max) {
      ctx.addIssue({
        code: "custom",
        path: ["netmask_prefixlen"],
        message: `prefix length ${a.netmask_prefixlen} is outside 0..${max} for ${ip.family === "inet" ? "IPv4" : "IPv6"}`,
      });
      return z.NEVER;
    }
    return { id: a.id, address: ip.address, family: ip.family as Family, netmask_prefixlen: a.netmask_prefixlen };
  });

const wifi = z.strictObject(nullableFields(WIFI_FIELDS));

const iface = z.strictObject({
  id,
  if_name: text.nullable().default(null),
  if_hwaddress: text.nullable().default(null),
  addresses: z.array(address).default([]),
  wifi: wifi.nullable().default(null),
});

const { firmware_type: _firmwareType, ...otherFields } = nullableFields(ACCESSPOINT_FIELDS);

export const accesspointSchema = z.strictObject({
  main_ip: ipText(canonicalIpv4, "IPv4"),
  main_ipv6: ipText(canonicalIpv6, "IPv6").nullable().default(null),
  ...otherFields,
  // Absent: the original importer's default; an explicit null stays null (zod keeps the two apart).
  firmware_type: text.nullable().default(DEFAULT_FIRMWARE_TYPE),
  site: id.nullable().default(null),
  /**
   * When an import with memory (`import opennet --previous`) first saw it in OLSR; null when it was
   * there when the memory began, or unknown. No API field: the meshviewer file's `firstseen` reads it.
   */
  first_seen: instant.nullable().default(null),
  interfaces: z.array(iface).default([]),
});

const quality = finite.min(0, "quality must be between 0 and 1").max(1, "quality must be between 0 and 1");

const endpoint = z
  .strictObject({
    interface: id.optional(),
    address: ipText((s) => canonicalIp(s)?.address, "IPv4 or IPv6").optional(),
    quality,
  })
  .superRefine((e, ctx) => {
    if ((e.interface === undefined) === (e.address === undefined)) {
      ctx.addIssue({ code: "custom", message: 'an endpoint names exactly one of "interface" (an interface id) or "address"' });
    }
  });

export const linkSchema = z.strictObject({
  id,
  timestamp: instant.nullable().default(null),
  endpoints: z.array(endpoint).length(2, "a link has exactly two endpoints"),
});

export const NETWORK_FORMAT = "mesh-topology-dump/1";

export const networkSchema = z.strictObject({
  format: z.literal(NETWORK_FORMAT, { error: `must be "${NETWORK_FORMAT}"` }),
  name: text.nullable().default(null),
  taken_at: instant.nullable().default(null),
  /** the brand prefix of the brand fields in the API (`opennet` writes `opennet_version`); the build's --brand overrides it */
  brand: z.string().regex(BRAND_PATTERN, BRAND_RULE).nullable().default(null),
  /** what a list without `status` answers; the build's --default-status overrides it */
  default_status: z.enum(DEFAULT_STATUSES).nullable().default(null),
  /** the community the Freifunk nodelist names (default: `name`); the build's --community-name overrides it */
  community_name: text.nullable().default(null),
  /** the community's web address in the Freifunk nodelist; the build's --community-url overrides it */
  community_url: z.string().regex(COMMUNITY_URL_PATTERN, COMMUNITY_URL_RULE).nullable().default(null),
  /**
   * the highest id each kind was ever given, for an import that updates this dump (the original never
   * gives an id twice); the build does not read it
   */
  last_ids: z.strictObject({ interface: id, address: id, link: id, site: id }).nullable().default(null),
});

export type AccesspointRecord = z.output<typeof accesspointSchema>;
export type InterfaceRecord = z.output<typeof iface>;
export type LinkRecord = z.output<typeof linkSchema>;
export type PointRecord = z.output<typeof point>;

/** Field names allowed at a place in a record, for "did you mean" hints on unknown fields. */
export function knownKeys(kind: "accesspoint" | "link" | "network", path: readonly PropertyKey[]): string[] {
  const shape = (s: { shape: Record<string, unknown> }) => Object.keys(s.shape);
  if (kind === "network") return shape(networkSchema);
  if (kind === "link") return path.length === 0 ? shape(linkSchema) : ["interface", "address", "quality"];
  const last = path[path.length - 1];
  if (path.length === 0) return shape(accesspointSchema);
  if (path[0] === "position") return ["type", "coordinates"];
  if (last === "wifi") return shape(wifi);
  if (path.includes("addresses")) return ["id", "address", "netmask_prefixlen"];
  return shape(iface);
}
