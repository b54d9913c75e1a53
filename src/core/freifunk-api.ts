import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import { UsageError } from "./problems.ts";

/**
 * The Freifunk API file of a community (github freifunk/api.freifunk.net, `specs/0.5.3.json`): who
 * the community is (the operator's template: name, location, contact) and its live state, which the
 * directory (api.freifunk.net) and freifunk-karte.de read: `state.nodes`, `state.lastchange` and a
 * `nodeMaps` entry for the nodelist. The original published one per city, its node count fixed in its
 * configuration; the build writes it from the data (docs/freifunk.md).
 */
export const FREIFUNK_API_VERSION = "0.5.3";

const url = { type: "string", pattern: "^(http|https)://[A-Za-z0-9ÄÖÜäöüß\\-_\\./]+" };
const email = { type: "string", format: "email", pattern: "^[A-Za-z0-9äöüÄÖUß_\\-\\.]+@[A-Za-z0-9äöüÄÖUß_\\-\\.]+\\.[A-Za-z]{2,}$" };
const geoCode = {
  type: "object",
  properties: { lat: { type: "number" }, lon: { type: "number" } },
  required: ["lat", "lon"],
  additionalProperties: false,
};
const address = {
  type: "object",
  properties: { name: { type: "string" }, street: { type: "string" }, zipcode: { type: "string" } },
  additionalProperties: false,
};
const country = {
  type: "string",
  enum: [
    "",
    "AD",
    "AE",
    "AF",
    "AG",
    "AI",
    "AL",
    "AM",
    "AO",
    "AQ",
    "AR",
    "AS",
    "AT",
    "AU",
    "AW",
    "AX",
    "AZ",
    "BA",
    "BB",
    "BD",
    "BE",
    "BF",
    "BG",
    "BH",
    "BI",
    "BJ",
    "BL",
    "BM",
    "BN",
    "BO",
    "BQ",
    "BR",
    "BS",
    "BT",
    "BV",
    "BW",
    "BY",
    "BZ",
    "CA",
    "CC",
    "CD",
    "CF",
    "CG",
    "CH",
    "CI",
    "CK",
    "CL",
    "CM",
    "CN",
    "CO",
    "CR",
    "CU",
    "CV",
    "CW",
    "CX",
    "CY",
    "CZ",
    "DE",
    "DJ",
    "DK",
    "DM",
    "DO",
    "DZ",
    "EC",
    "EE",
    "EG",
    "EH",
    "ER",
    "ES",
    "ET",
    "FI",
    "FJ",
    "FK",
    "FM",
    "FO",
    "FR",
    "GA",
    "GB",
    "GD",
    "GE",
    "GF",
    "GG",
    "GH",
    "GI",
    "GL",
    "GM",
    "GN",
    "GP",
    "GQ",
    "GR",
    "GS",
    "GT",
    "GU",
    "GW",
    "GY",
    "HK",
    "HM",
    "HN",
    "HR",
    "HT",
    "HU",
    "ID",
    "IE",
    "IL",
    "IM",
    "IN",
    "IO",
    "IQ",
    "IR",
    "IS",
    "IT",
    "JE",
    "JM",
    "JO",
    "JP",
    "KE",
    "KG",
    "KH",
    "KI",
    "KM",
    "KN",
    "KP",
    "KR",
    "KW",
    "KY",
    "KZ",
    "LA",
    "LB",
    "LC",
    "LI",
    "LK",
    "LR",
    "LS",
    "LT",
    "LU",
    "LV",
    "LY",
    "MA",
    "MC",
    "MD",
    "ME",
    "MF",
    "MG",
    "MH",
    "MK",
    "ML",
    "MM",
    "MN",
    "MO",
    "MP",
    "MQ",
    "MR",
    "MS",
    "MT",
    "MU",
    "MV",
    "MW",
    "MX",
    "MY",
    "MZ",
    "NA",
    "NC",
    "NE",
    "NF",
    "NG",
    "NI",
    "NL",
    "NO",
    "NP",
    "NR",
    "NU",
    "NZ",
    "OM",
    "PA",
    "PE",
    "PF",
    "PG",
    "PH",
    "PK",
    "PL",
    "PM",
    "PN",
    "PR",
    "PS",
    "PT",
    "PW",
    "PY",
    "QA",
    "RE",
    "RO",
    "RS",
    "RU",
    "RW",
    "SA",
    "SB",
    "SC",
    "SD",
    "SE",
    "SG",
    "SH",
    "SI",
    "SJ",
    "SK",
    "SL",
    "SM",
    "SN",
    "SO",
    "SR",
    "SS",
    "ST",
    "SV",
    "SX",
    "SY",
    "SZ",
    "TC",
    "TD",
    "TF",
    "TG",
    "TH",
    "TJ",
    "TK",
    "TL",
    "TM",
    "TN",
    "TO",
    "TR",
    "TT",
    "TV",
    "TW",
    "TZ",
    "UA",
    "UG",
    "UM",
    "US",
    "UY",
    "UZ",
    "VA",
    "VC",
    "VE",
    "VG",
    "VI",
    "VN",
    "VU",
    "WF",
    "WS",
    "YE",
    "YT",
    "ZA",
    "ZM",
    "ZW",
  ],
};
/** ISO 3166-2 subdivisions: the published enum has thousands of codes; restated as their form (docs/freifunk.md). */
const subdivision = { type: "string", pattern: "^$|^[A-Z]{2}-[A-Z0-9]{1,3}$" };
const place = { city: { type: "string" }, country, state: subdivision, address, geoCode };

/**
 * specs/0.5.3.json restated for ajv (draft-07), member by member. Not restated: the inner members of
 * `timeline`, `services`, `support`, `privacy` and `techDetails` (kept as arrays and objects), and the
 * subdivision list (its form instead); `socialprojects.number` carries `minimum` where the published
 * file misspells it `mininum`. So a template this accepts may still fail the directory's check in
 * those members; everything the build writes is checked in full.
 */
export const FREIFUNK_API_SCHEMA = {
  $schema: "http://json-schema.org/draft-07/schema#",
  type: "object",
  properties: {
    api: { type: "string", enum: [FREIFUNK_API_VERSION] },
    name: { type: "string" },
    metacommunity: { type: "string" },
    url,
    location: {
      type: "object",
      properties: {
        ...place,
        additionalLocations: {
          type: "array",
          items: { type: "object", properties: place, required: ["city", "geoCode"], additionalProperties: false },
        },
      },
      required: ["city", "geoCode"],
      additionalProperties: false,
    },
    contact: {
      type: "object",
      minProperties: 1,
      additionalProperties: false,
      properties: {
        email,
        facebook: { type: "string", pattern: "^(http|https)://([a-z\\-]*\\.|)facebook\\.com/[A-Za-z0-9ÄÖÜäöüß\\-_\\.]+" },
        identica: { type: "string", pattern: "^(http|https)://([a-z\\-]*\\.|)identi\\.ca/[A-Za-z0-9ÄÖÜäöüß\\-_\\.]+" },
        irc: { type: "string", pattern: "^(irc|ircs)://.*" },
        jabber: { type: "string", pattern: "^[A-Za-z0-9äöüÄÖUß_\\-\\.]+@[A-Za-z0-9äöüÄÖUß_\\-\\.]+\\.[A-Za-z]{2,}(\\?join){0,1}$" },
        ml: {
          type: "string",
          pattern: "^([A-Za-z0-9äöüÄÖUß_\\-\\.]+@[A-Za-z0-9äöüÄÖUß_\\-\\.]+\\.[A-Za-z]{2,}|(http|https)://[A-Za-z0-9ÄÖÜäöüß\\-_\\./]+)$",
        },
        googleplus: { type: "string", pattern: "^(http|https)://plus\\.google\\.com/[A-Za-z0-9ÄÖÜäöüß\\+\\-\\./_]+" },
        matrix: { type: "string", pattern: "^https://matrix\\.to/#/" },
        mastodon: { type: "string", pattern: "^https://[^\\s/]+/@[\\w.-]+(@[a-zA-Z0-9.-]+\\.[a-zA-Z]{2,})?$" },
        twitter: { type: "string", pattern: "^@[A-Za-z0-9_\\-]{1,15}" },
        webform: url,
        phone: { type: "string" },
      },
    },
    state: {
      type: "object",
      additionalProperties: false,
      required: ["lastchange"],
      properties: {
        nodes: { type: "integer", minimum: 0 },
        lastchange: { type: "string", format: "date-time" },
        message: { type: "string" },
        description: { type: "string" },
        focus: {
          type: "array",
          items: {
            type: "string",
            enum: [
              "infrastructure/backbone",
              "Public Free Wifi",
              "Social Community Building",
              "Local services and content",
              "Free internet access",
            ],
          },
        },
      },
    },
    nodeMaps: {
      type: "array",
      items: {
        type: "object",
        additionalProperties: false,
        properties: {
          url,
          interval: { type: "string" },
          technicalType: {
            type: "string",
            enum: [
              "",
              "ffmap",
              "ffsomething",
              "olsr-dot",
              "openwifimap",
              "netmon",
              "libremap",
              "nodewatcher",
              "kml",
              "nodelist",
              "meshviewer",
              "hopglass",
            ],
          },
          mapType: { type: "string", enum: ["", "geographical", "structural", "list/status"] },
        },
      },
    },
    feeds: {
      type: "array",
      items: {
        type: "object",
        additionalProperties: false,
        properties: {
          name: { type: "string" },
          category: { type: "string", enum: ["blog", "forum", "ics", "podcast", "wiki", "others", ""] },
          type: { type: "string" },
          url,
        },
      },
    },
    timeline: { type: "array" },
    services: { type: "array" },
    support: { type: "object" },
    privacy: { type: "object" },
    socialprojects: {
      type: "object",
      additionalProperties: false,
      properties: { number: { type: "integer", minimum: 0 }, website: url, contact: email },
    },
    techDetails: { type: "object" },
  },
  required: ["name", "location", "contact", "url", "state"],
  additionalProperties: false,
} as const;

export interface FreifunkApiSettings {
  /** where the template came from, for messages */
  readonly source: string;
  /** the operator's file: the community's name, location, contact (everything but the live state) */
  readonly template: Readonly<Record<string, unknown>>;
  /** where the site is published: the nodelist's address in `nodeMaps` (null: the template names it) */
  readonly siteUrl: string | null;
}

export interface FreifunkApiInput {
  readonly settings: FreifunkApiSettings;
  /** the data's instant (taken_at) */
  readonly takenAt: string | null;
  /** the access points online at that instant */
  readonly online: number;
  /** the nodelist's path on the site */
  readonly nodelistPath: string;
}

/** The file as written: the template with the live state, and the nodelist among its maps. */
export function freifunkApiDocument(input: FreifunkApiInput): Record<string, unknown> {
  const { template, siteUrl } = input.settings;
  const maps = Array.isArray(template.nodeMaps) ? (template.nodeMaps as unknown[]) : [];
  const isNodelist = (m: unknown) => (m as { technicalType?: unknown } | null)?.technicalType === "nodelist";
  const interval = (maps.find(isNodelist) as { interval?: unknown } | undefined)?.interval;
  const nodeMaps =
    siteUrl === null
      ? maps
      : [
          ...maps.filter((m) => !isNodelist(m)),
          {
            url: new URL(input.nodelistPath, siteUrl).href,
            ...(interval === undefined ? {} : { interval }),
            technicalType: "nodelist",
            mapType: "list/status",
          },
        ];
  const state = (template.state ?? {}) as Record<string, unknown>;
  return {
    api: FREIFUNK_API_VERSION,
    ...template,
    state: { ...state, nodes: input.online, ...(input.takenAt === null ? {} : { lastchange: input.takenAt }) },
    nodeMaps,
  };
}

let validator: ReturnType<Ajv["compile"]> | undefined;

/** What is wrong with the file against the published schema, each with its JSON path; empty when nothing is. */
export function freifunkApiProblems(input: FreifunkApiInput): string[] {
  const problems: string[] = [];
  const { template } = input.settings;
  if (template.api !== undefined && template.api !== FREIFUNK_API_VERSION)
    problems.push(
      `$.api: ${JSON.stringify(template.api)}, but the build writes and checks version ${FREIFUNK_API_VERSION}; set it to "${FREIFUNK_API_VERSION}" or leave it out`,
    );
  if (input.takenAt === null) problems.push("$.state.lastchange: the dump has no taken_at, the instant the file's state is of");
  const doc = freifunkApiDocument(input);
  if (!(doc.nodeMaps as unknown[]).some((m) => (m as { technicalType?: unknown } | null)?.technicalType === "nodelist"))
    problems.push('$.nodeMaps: no entry with "technicalType": "nodelist"; give --site-url <the site\'s address>, or add the entry');
  if (problems.length > 0) return problems;
  if (!validator) {
    const ajv = new Ajv({ allErrors: true, strict: true });
    addFormats.default(ajv);
    validator = ajv.compile(FREIFUNK_API_SCHEMA);
  }
  if (!validator(doc))
    for (const e of validator.errors ?? []) {
      const where =
        "$" +
        e.instancePath.replace(/\/([^/]*)/g, (_, key: string) =>
          /^\d+$/.test(key) ? `[${key}]` : `.${key.replace(/~1/g, "/").replace(/~0/g, "~")}`,
        );
      const extra = e.keyword === "additionalProperties" ? ` (${(e.params as { additionalProperty: string }).additionalProperty})` : "";
      problems.push(`${where}: ${e.message}${extra}`);
    }
  return problems;
}

/** Refuses, before any work, a template whose file would not fit the schema. */
export function assertFreifunkApi(input: FreifunkApiInput): void {
  const problems = freifunkApiProblems(input);
  if (problems.length > 0)
    throw new UsageError(
      `--freifunk-api ${input.settings.source}: the file it makes does not fit the Freifunk API ${FREIFUNK_API_VERSION} schema:\n` +
        problems.map((p) => `  ${p}`).join("\n"),
    );
}
