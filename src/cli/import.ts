import { existsSync } from "node:fs";
import { type Command, InvalidArgumentError, Option } from "commander";
import { BRAND_RULE, isBrand } from "../core/settings.ts";
import { IMPORT_API_DEFAULTS, importApi, type ImportApiResult } from "../importers/api.ts";
import { IMPORT_OPENNET_DEFAULTS, importOpennet, type ImportOpennetResult } from "../importers/opennet/index.ts";
import { stopped } from "./exit.ts";
import { count, historyDaysOption, instant, log, neededOption, quietOption, retentionOf, warn } from "./options.ts";

/** A whole number from 0 on (retries, milliseconds). */
function whole(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError("a whole number from 0 on");
  return n;
}

function brand(value: string): string {
  if (!isBrand(value)) throw new InvalidArgumentError(BRAND_RULE);
  return value;
}

export function register(program: Command): void {
  const imp = program.command("import").description("make a dump from another source of topology data");
  registerApi(imp);
  registerOpennet(imp);
}

const OUT_FLAGS = "--out <dump-dir>";
const OUT_DESCRIPTION = "folder to write the dump into (replaced only when absent, empty, or written by mesh-api before)";

interface ApiCommandOptions {
  out: string;
  brand?: string;
  at?: string;
  maxBytes: number;
  timeout: number;
  retries: number;
  retryDelay: number;
  quiet?: boolean;
}

interface OpennetCommandOptions {
  historyDays?: number;
  olsr?: string;
  wiki?: string;
  ondataservice?: string;
  previous?: string;
  out: string;
  at?: string;
  sites?: "none" | "detect" | "keep";
  timeout: number;
  quiet?: boolean;
}

function registerApi(imp: Command): void {
  imp
    .command("api")
    .description(
      "mirror a running instance of the original dynamic API (Geronimo) into a dump: reads its access point (with and without status), interface, link and site lists and writes them into --out atomically",
    )
    .argument("<base-url>", "the API's address (its /api/v1/ lists are read)")
    // needed, not required: commander checks required options before the arguments, and a missing <base-url> comes first
    .addOption(neededOption(OUT_FLAGS, OUT_DESCRIPTION))
    .option(
      "--brand <prefix>",
      "the brand prefix of the API's brand fields, mapped to mesh_ and named in network.json (default: detected from the field names)",
      brand,
    )
    .option("--at <instant>", "taken_at of the dump, an ISO 8601 instant (default: the time of the mirror)", instant)
    .option("--max-bytes <n>", "the largest answer accepted for one list", count, IMPORT_API_DEFAULTS.maxBytes)
    .option("--timeout <ms>", "time-out of one request, body included, in milliseconds", count, IMPORT_API_DEFAULTS.timeoutMs)
    .option("--retries <n>", "further tries after an HTTP 5xx answer or a network error", whole, IMPORT_API_DEFAULTS.retries)
    .addOption(
      new Option("--retry-delay <ms>", "wait before the first retry, doubled for each further one, in milliseconds")
        .argParser(whole)
        .default(IMPORT_API_DEFAULTS.retryDelayMs),
    )
    .addOption(quietOption())
    .action((base: string, opts: ApiCommandOptions) =>
      importInto(
        opts,
        () =>
          importApi(base, opts.out, {
            brand: opts.brand,
            at: opts.at,
            maxBytes: opts.maxBytes,
            timeoutMs: opts.timeout,
            retries: opts.retries,
            retryDelayMs: opts.retryDelay,
            log: (line) => log(opts, line),
            warn,
          }),
        (r) => apiSummary(opts.out, r),
      ),
    );
}

function registerOpennet(imp: Command): void {
  imp
    .command("opennet")
    .description(
      "make a dump from the raw sources of an Opennet network, applied in the original importer's order: OLSR txtinfo, the wiki's node table, ondataservice",
    )
    .option(
      "--olsr <file-or-url>",
      "OLSR txtinfo (/all): a file, or olsrd's txtinfo address (http://host:2006, its /all is read); required without --previous",
    )
    .option("--wiki <file-or-url>", "the wiki's node page (HTML): a file or its http(s) address")
    .option("--ondataservice <file>", "the ondataservice SQLite database: device, firmware, interfaces and wifi")
    .option(
      "--previous <dump-dir>",
      "the dump the previous import wrote: this import updates it as the original updates its database (ids kept, nothing dropped, timestamps of what the sources do not show kept); may be --out itself",
    )
    .requiredOption(OUT_FLAGS, OUT_DESCRIPTION)
    .option(
      "--at <instant>",
      "the import's instant: taken_at, and lastseen and link timestamps of what OLSR shows, an ISO 8601 instant (default: now)",
      instant,
    )
    .addOption(
      new Option(
        "--sites <mode>",
        "detect: update the sites by the original's rules; keep: the previous dump's sites as they are; none: no sites (default: keep with --previous, else none)",
      ).choices(["none", "detect", "keep"]),
    )
    .option(
      "--timeout <ms>",
      "time limit for reading --olsr or --wiki over HTTP, in milliseconds",
      count,
      IMPORT_OPENNET_DEFAULTS.timeoutMs,
    )
    .addOption(historyDaysOption())
    .addOption(quietOption())
    .action((opts: OpennetCommandOptions) =>
      importInto(
        opts,
        () => importOpennet(opts.out, { ...opts, timeoutMs: opts.timeout, retention: retentionOf(opts.historyDays), warn }),
        (r) => opennetSummary(opts, r),
      ),
    );
}

/**
 * Runs an import that writes the dump `opts.out` and prints `summary` of its result. An import
 * writes its dump whole or not at all, so a failure says which: nothing written, and the folder
 * that was there left as it was.
 */
async function importInto<R>(opts: { out: string; quiet?: boolean }, run: () => Promise<R>, summary: (result: R) => string): Promise<void> {
  const existed = existsSync(opts.out);
  try {
    const r = await run();
    log(opts, summary(r));
  } catch (err) {
    stopped(err, opts, `no dump was written${existed ? ` and ${opts.out} was left as it was` : ""}`, opts.out);
  }
}

/** What network.json now says, so that a build's surprising field names or lists can be traced to the import. */
function apiSummary(out: string, r: ImportApiResult): string {
  const brand =
    r.brand === undefined ? ", no brand" : `, brand ${r.brand}${r.brand === "mesh" ? "" : ` (its ${r.brand}_ fields as mesh_)`}`;
  return `wrote ${out}: ${r.accesspoints} access points, ${r.interfaces} interfaces, ${r.links} links, taken_at ${r.takenAt}${brand}, default_status ${r.defaultStatus ?? "not recorded"}`;
}

function opennetSummary(opts: OpennetCommandOptions, r: ImportOpennetResult): string {
  // sites are counted when there are some, or when they were asked for
  const sites = r.sites > 0 || opts.sites === "detect" ? `, ${r.sites} sites` : "";
  return `wrote ${opts.out}: ${r.accesspoints} access points, ${r.interfaces} interfaces, ${r.links} links${sites}, taken_at ${r.takenAt}, brand ${r.brand}`;
}
