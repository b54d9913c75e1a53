import { parseInstant } from "../core/values/timestamp.ts";
import { DEFAULT_RETENTION } from "../core/history/events.ts";
import { type Command, InvalidArgumentError, Option } from "commander";
import {
  BRAND_RULE,
  COMMUNITY_URL_PATTERN,
  COMMUNITY_URL_RULE,
  DEFAULT_SETTINGS,
  DEFAULT_STATUSES,
  isBrand,
  type DefaultStatus,
  type SiteSettings,
} from "../core/settings.ts";
import { formatProblem, UsageError, type Problem } from "../core/problems.ts";
import { readJsonObject } from "../io/read/template.ts";
import { DEFAULT_MAP_SETTINGS } from "../core/documents/map.ts";
import { OUTPUTS } from "../core/outputs/index.ts";
import type { OptionValue, OutputOption } from "../core/outputs/output.ts";
import type { HostWarning } from "../hosts/host.ts";
import { SHOWN_PER_KIND, warningLines } from "./format.ts";

/** Options and output helpers every command shares. */

export interface QuietOption {
  readonly quiet?: boolean;
}

export const quietOption = () => new Option("-q, --quiet", "print nothing but errors");

export const log = (opts: QuietOption, line: string) => {
  if (!opts.quiet) process.stderr.write(line + "\n");
};

/**
 * Options a command cannot run without, checked once its arguments are there: commander checks its
 * required options before the arguments, so `fetch-dump` alone complained about --out, not the URL.
 */
const needed = new WeakSet<Option>();

export const neededOption = (flags: string, description: string) => {
  const option = new Option(flags, description);
  needed.add(option);
  return option;
};

/** Before each action: a needed option left out is a usage error, in commander's words. */
export function checkNeeded(command: Command): void {
  for (const option of command.options)
    if (needed.has(option) && command.getOptionValue(option.attributeName()) === undefined)
      command.error(`error: required option '${option.flags}' not specified`, { code: "commander.missingMandatoryOptionValue" });
}

export const warn = (line: string) => void process.stderr.write(`warning: ${line}\n`);

/** How a command prints problems. */
export interface ReportOptions extends QuietOption {
  readonly allWarnings?: boolean;
}

export const allWarningsOption = () =>
  new Option("--all-warnings", `print every warning, instead of the first ${SHOWN_PER_KIND} of each kind and a count of the rest`);

/** Every error, and the warnings grouped by kind (or all of them) unless quiet. */
export const report = (problems: readonly Problem[], hostWarnings: readonly HostWarning[], opts: ReportOptions) => {
  for (const p of problems) if (p.severity === "error") process.stderr.write(formatProblem(p) + "\n");
  if (opts.quiet) return;
  for (const line of warningLines(problems, hostWarnings, opts.allWarnings ? Infinity : SHOWN_PER_KIND)) process.stderr.write(line + "\n");
};

/** `--brand` and `--default-status`: a build's site settings; what is not given comes from network.json. */
export const brandOption = () =>
  new Option(
    "--brand <prefix>",
    "the brand prefix of the brand fields, e.g. opennet writes opennet_version (default: network.json's, else mesh)",
  ).argParser((value: string) => {
    if (!isBrand(value)) throw new InvalidArgumentError(BRAND_RULE);
    return value;
  });

export const defaultStatusOption = () =>
  new Option(
    "--default-status <status>",
    "what /accesspoint/, /link/ and /accesspoint/<ip>/links/ answer without status: all, or online as the original did (default: network.json's, else all)",
  ).choices(DEFAULT_STATUSES);

/** `--folder-limit`: the layout of the build (core/routes/layout.ts); host-config needs the build's to find its files. */
export const folderLimitOption = () =>
  new Option(
    "--folder-limit <entries>",
    `the most entries a folder of the build holds; a folder of details or filter values with more is split into shards (default: ${DEFAULT_SETTINGS.folderLimit}, below Netlify's 54,000)`,
  ).argParser(count);

/** `--community-name` and `--community-url`: what the Freifunk nodelist says of the community. */
export const communityNameOption = () =>
  new Option(
    "--community-name <text>",
    "the community the Freifunk nodelist names (default: network.json's community_name, else its name)",
  );

export const communityUrlOption = () =>
  new Option(
    "--community-url <url>",
    "the community's web address in the Freifunk nodelist (default: network.json's community_url, else none)",
  ).argParser((value: string) => {
    if (!COMMUNITY_URL_PATTERN.test(value)) throw new InvalidArgumentError(COMMUNITY_URL_RULE);
    return value;
  });

/** An output's option (outputs/output.ts) as commander's, its value checked as the output declares it. */
function outputOption(o: OutputOption): Option {
  const option = new Option(o.flags, o.description);
  if (o.value === "count") option.argParser(count);
  if (o.value === "url")
    option.argParser((value: string) => {
      if (!COMMUNITY_URL_PATTERN.test(value)) throw new InvalidArgumentError("an http(s) address, e.g. https://api.example.org/");
      return value;
    });
  return option;
}

/** The options' long flags, as commander names their values. */
const attribute = (flags: string) => new Option(flags).attributeName();

/**
 * The site's options, one group that `build` and `cycle` both take: the settings every build has
 * (settings.ts), the map's tiles, and every output's own options (outputs/).
 */
export const siteOptions = (): Option[] => [
  new Option("--extra <dir>", "a folder of your own files for the site (robots.txt, about/, .well-known/), copied into every build"),
  new Option("--tiles <url>", "background tiles of the map at /map/ (a Leaflet URL template)")
    .argParser(tiles)
    .default(DEFAULT_MAP_SETTINGS.tiles),
  new Option("--tiles-attribution <html>", "the credit the tile server asks for (default: OpenStreetMap's, with the default tiles)"),
  brandOption(),
  defaultStatusOption(),
  folderLimitOption(),
  communityNameOption(),
  communityUrlOption(),
  ...OUTPUTS.flatMap((o) => (o.options ?? []).map(outputOption)),
];

/** A command with the site options (siteOptions) after those it has. */
export function withSiteOptions(command: Command): Command {
  for (const option of siteOptions()) command.addOption(option);
  return command;
}

/** What the site options give: every setting the command line names, each output's read (a file's JSON) and made by its record. */
export async function siteSettingsOf(opts: SettingsFlags): Promise<Partial<SiteSettings>> {
  const given = opts as SettingsFlags & Readonly<Record<string, unknown>>;
  const outputs: Record<string, unknown> = {};
  for (const o of OUTPUTS) {
    const values: Record<string, OptionValue | undefined> = {};
    for (const option of o.options ?? []) {
      const long = option.flags.split(" ")[0];
      const value = given[attribute(option.flags)] as string | number | undefined;
      values[long] =
        value === undefined || option.value !== "json-file"
          ? value
          : { source: String(value), object: await readJsonObject(String(value), long) };
    }
    const settings = o.settings?.(values) ?? null;
    if (settings !== null) outputs[o.kind] = settings;
  }
  return { ...settingsOf(opts), ...(Object.keys(outputs).length > 0 && { outputs }) };
}

/** A Leaflet tile URL template: http(s), with the {z}, {x} and {y} Leaflet fills. */
export function tiles(value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value.replace(/[{}]/g, (c) => (c === "{" ? "%7B" : "%7D")));
  } catch {
    url = undefined;
  }
  if (!url || !/^https?:$/.test(url.protocol) || !["{z}", "{x}", "{y}"].every((p) => value.includes(p)))
    throw new InvalidArgumentError("a tile URL is http(s) with {z}, {x} and {y}, e.g. https://tile.openstreetmap.org/{z}/{x}/{y}.png");
  return value;
}

/** The map's tiles and their credit as the command line gives them. */
export const mapOf = (opts: { tiles: string; tilesAttribution?: string }) => ({
  tiles: opts.tiles,
  attribution: opts.tilesAttribution ?? (opts.tiles === DEFAULT_MAP_SETTINGS.tiles ? DEFAULT_MAP_SETTINGS.attribution : ""),
});

export interface SettingsFlags {
  readonly brand?: string;
  readonly defaultStatus?: DefaultStatus;
  readonly communityName?: string;
  readonly communityUrl?: string;
  readonly folderLimit?: number;
}

/** The settings given on the command line, for the library (options left out stay out). */
export const settingsOf = (opts: SettingsFlags): Partial<SiteSettings> => ({
  ...(opts.brand !== undefined && { brand: opts.brand }),
  ...(opts.defaultStatus !== undefined && { defaultStatus: opts.defaultStatus }),
  ...(opts.communityName !== undefined && { communityName: opts.communityName }),
  ...(opts.communityUrl !== undefined && { communityUrl: opts.communityUrl }),
  ...(opts.folderLimit !== undefined && { folderLimit: opts.folderLimit }),
});

export function count(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("a count is a positive integer");
  return n;
}

export function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError("a port is an integer from 0 to 65535");
  return n;
}

/** An `--at` value: an ISO 8601 instant with a time zone, checked as the dump's timestamps are (import, cycle). */
export function instant(value: string): string {
  const parsed = parseInstant(value);
  if (typeof parsed === "string")
    throw new InvalidArgumentError(`${parsed}; give an ISO 8601 instant with a time zone, such as 2026-11-22T11:28:02Z`);
  return value;
}

/** `--history-days`: how long an import with memory keeps the changes it records (core/history/events.ts). */
export const historyDaysOption = () =>
  new Option(
    "--history-days <days>",
    `how many days of changes an import with memory keeps (at most ${DEFAULT_RETENTION.max.toLocaleString("en-US")} changes; default: ${DEFAULT_RETENTION.days})`,
  ).argParser(count);

export const retentionOf = (days: number | undefined) => ({ ...DEFAULT_RETENTION, ...(days !== undefined && { days }) });
