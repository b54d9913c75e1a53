/** The published schema of the Freifunk API file (github freifunk/api.freifunk.net), restated for ajv (freifunk-api.ts checks against it). */

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
/** ISO 3166-1 alpha-2, as the published enum lists them, and the empty string it allows. */
const COUNTRY_CODES =
  "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ CA CC CD " +
  "CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF " +
  "GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN " +
  "KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA " +
  "NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI " +
  "SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI " +
  "VN VU WF WS YE YT ZA ZM ZW";
const country = { type: "string", enum: ["", ...COUNTRY_CODES.split(" ")] };
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
