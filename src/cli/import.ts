import { existsSync } from "node:fs";
import { type Command, InvalidArgumentError, Option } from "commander";
import { BRAND_RULE, isBrand } from "../core/settings.ts";
import { parseInstant } from "../core/timestamp.ts";
import { IMPORT_API_DEFAULTS, importApi } from "../importers/api.ts";
import { importOpennet } from "../importers/opennet/index.ts";
import { stopped } from "./exit.ts";
import { count, log, neededOption, quietOption, warn } from "./options.ts";

/** A whole number from 0 on (retries, milliseconds). */
function whole(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError("a whole number from 0 on");
  return n;
}

function instant(value: string): string {
  const parsed = parseInstant(value);
  if (typeof parsed === "string")
    throw new InvalidArgumentError(`${parsed}; give an ISO 8601 instant with a time zone, such as 2026-11-22T11:28:02Z`);
  return value;
}

function brand(value: string): string {
  if (!isBrand(value)) throw new InvalidArgumentError(BRAND_RULE);
  return value;
}

export function register(program: Command): void {
  const imp = program.command("import").description("make a dump from another source of topology data");
  imp
    .command("api")
    .description(
      "mirror a running instance of the original dynamic API (Geronimo) into a dump: reads its access point (with and without status), interface, link and site lists and writes them into --out atomically",
    )
    .argument("<base-url>", "the API's address (its /api/v1/ lists are read)")
    .addOption(
      neededOption("--out <dump-dir>", "folder to write the dump into (replaced only when absent, empty, or written by mesh-api before)"),
    )
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
    .action(
      async (
        base: string,
        opts: {
          out: string;
          brand?: string;
          at?: string;
          maxBytes: number;
          timeout: number;
          retries: number;
          retryDelay: number;
          quiet?: boolean;
        },
      ) => {
        const existed = existsSync(opts.out);
        try {
          const r = await importApi(base, opts.out, {
            brand: opts.brand,
            at: opts.at,
            maxBytes: opts.maxBytes,
            timeoutMs: opts.timeout,
            retries: opts.retries,
            retryDelayMs: opts.retryDelay,
            log: (line) => log(opts, line),
            warn,
          });
          // what network.json now says, so that a build's surprising field names or lists can be traced to the import
          const brand =
            r.brand === undefined ? ", no brand" : `, brand ${r.brand}${r.brand === "mesh" ? "" : ` (its ${r.brand}_ fields as mesh_)`}`;
          log(
            opts,
            `wrote ${opts.out}: ${r.accesspoints} access points, ${r.interfaces} interfaces, ${r.links} links, taken_at ${r.takenAt}${brand}, default_status ${r.defaultStatus ?? "not recorded"}`,
          );
        } catch (err) {
          stopped(err, opts, `no dump was written${existed ? ` and ${opts.out} was left as it was` : ""}`);
        }
      },
    );
  imp
    .command("opennet")
    .description(
      "make a dump from the raw sources of an Opennet network, applied in the original importer's order: OLSR txtinfo, the wiki's node table, ondataservice",
    )
    .requiredOption("--olsr <file>", "OLSR txtinfo output (/all): access points, interfaces and links")
    .option("--wiki <file>", "the wiki's node page (HTML): address, owner, antenna, device and position")
    .option("--ondataservice <file>", "the ondataservice SQLite database: device, firmware, interfaces and wifi")
    .requiredOption("--out <dump-dir>", "folder to write the dump into (replaced only when absent, empty, or written by mesh-api before)")
    .option("--at <instant>", "taken_at, lastseen and link timestamps, an ISO 8601 instant (default: now)", instant)
    .addOption(
      new Option("--sites <mode>", "detect: group access points into sites by the original's rules; none: no sites")
        .choices(["none", "detect"])
        .default("none"),
    )
    .addOption(quietOption())
    .action(
      async (opts: {
        olsr: string;
        wiki?: string;
        ondataservice?: string;
        out: string;
        at?: string;
        sites: "none" | "detect";
        quiet?: boolean;
      }) => {
        const existed = existsSync(opts.out);
        try {
          const r = await importOpennet(opts.out, { ...opts, warn });
          log(
            opts,
            `wrote ${opts.out}: ${r.accesspoints} access points, ${r.interfaces} interfaces, ${r.links} links${opts.sites === "detect" ? `, ${r.sites} sites` : ""}, taken_at ${r.takenAt}, brand ${r.brand}`,
          );
        } catch (err) {
          stopped(err, opts, `no dump was written${existed ? ` and ${opts.out} was left as it was` : ""}`);
        }
      },
    );
}
