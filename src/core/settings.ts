/**
 * What a community decides about its API beyond its data: the brand its field names carry and what a
 * list answers without a `status` parameter. A dump's network.json may name both; a build's options
 * override the dump. Every default is stated here, once.
 */

export type DefaultStatus = "all" | "online";
export const DEFAULT_STATUSES: readonly DefaultStatus[] = ["all", "online"];

export interface SiteSettings {
  /** the prefix of the brand fields (`<brand>_version`, ...); "mesh" writes the API description's names */
  readonly brand: string;
  /** what `/accesspoint/`, `/link/` and `/accesspoint/<ip>/links/` answer without `status` */
  readonly defaultStatus: DefaultStatus;
  /** the community the Freifunk nodelist names (`community.name`); null leaves the member out */
  readonly communityName: string | null;
  /** the community's web address in the Freifunk nodelist (`community.href`); null leaves the member out */
  readonly communityUrl: string | null;
  /**
   * each output's own settings, by its kind, from the options it adds (outputs/output.ts): the output
   * reads its own; one not asked for has none (the Freifunk API file without --freifunk-api)
   */
  readonly outputs: Readonly<Record<string, unknown>>;
  /**
   * the most entries a folder of the build holds: a folder of details or filter values with more is
   * split into shards (routes/layout.ts). A static host may refuse a deploy with too many files in one
   * folder (docs/hosting.md, "Large folders"); the default leaves room below the strictest we know.
   */
  readonly folderLimit: number;
}

/**
 * The API description's names and rule: the neutral prefix, and lists that publish the whole
 * collection; no community named beyond what the dump says (resolveSettings).
 */
export const DEFAULT_SETTINGS: SiteSettings = {
  brand: "mesh",
  defaultStatus: "all",
  communityName: null,
  communityUrl: null,
  outputs: {},
  folderLimit: 50_000,
};

/** The neutral prefix every brand field carries in the dump format and the API description. */
export const NEUTRAL_PREFIX = "mesh_";

/** A brand is letters and digits: it becomes part of JSON keys, JavaScript property names and OpenAPI names. */
export const BRAND_PATTERN = /^[A-Za-z0-9]+$/;
export const BRAND_RULE = "a brand prefix is letters and digits, e.g. opennet";

export function isBrand(value: string): boolean {
  return BRAND_PATTERN.test(value);
}

/** A field's name in the output: a brand field (`mesh_…`) carries the brand instead of the neutral prefix. */
export function brandField(name: string, brand: string): string {
  return name.startsWith(NEUTRAL_PREFIX) ? `${brand}_${name.slice(NEUTRAL_PREFIX.length)}` : name;
}

/** What a dump's network.json says about the settings (validate.ts). */
export interface DumpSettings {
  readonly brand?: string | null;
  readonly defaultStatus?: DefaultStatus | null;
  readonly communityName?: string | null;
  readonly communityUrl?: string | null;
  /** the network's name: the community's, when network.json names no community */
  readonly name?: string | null;
}

/** The settings of a build: the options given, else what the dump names, else the defaults. */
export function resolveSettings(given: Partial<SiteSettings>, dump: DumpSettings = {}): SiteSettings {
  return {
    brand: given.brand ?? dump.brand ?? DEFAULT_SETTINGS.brand,
    defaultStatus: given.defaultStatus ?? dump.defaultStatus ?? DEFAULT_SETTINGS.defaultStatus,
    communityName: given.communityName ?? dump.communityName ?? dump.name ?? DEFAULT_SETTINGS.communityName,
    communityUrl: given.communityUrl ?? dump.communityUrl ?? DEFAULT_SETTINGS.communityUrl,
    outputs: given.outputs ?? DEFAULT_SETTINGS.outputs,
    folderLimit: given.folderLimit ?? DEFAULT_SETTINGS.folderLimit,
  };
}

/** A community's web address: http(s), as the nodelist's readers follow it. */
export const COMMUNITY_URL_PATTERN = /^https?:\/\/[^\s/?#]+(?:[/?#]\S*)?$/;
export const COMMUNITY_URL_RULE = "a community URL is an http(s) address, e.g. https://example.org/";
