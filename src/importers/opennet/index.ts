import { readFile } from "node:fs/promises";
import { assertReplaceable } from "../../io/ownership.ts";
import { importTime, writeImportedDump } from "../../io/write-dump.ts";
import { detectSites } from "../opennet-sites.ts";
import { modelToDump } from "./dump.ts";
import { ImportOpennetError } from "./error.ts";
import { OpennetModel } from "./model.ts";
import { applyOlsr } from "./olsr.ts";
import { applyOndataservice } from "./ondataservice.ts";
import { applyWiki } from "./wiki.ts";

export { modelToDump, type OpennetRecords } from "./dump.ts";
export { ImportOpennetError } from "./error.ts";
export { OpennetModel } from "./model.ts";
export { applyOlsr, parseTxtinfo } from "./olsr.ts";
export { applyOndataservice } from "./ondataservice.ts";
export { applyWiki, parseNodeIp, parseWikiNodes, type WikiNode } from "./wiki.ts";

/**
 * `import opennet`: a dump from the raw sources the original server (Geronimo,
 * github.com/opennet-initiative/api) was fed with, applied in its order on an empty network:
 *
 * 1. OLSR txtinfo (`MID` and `HNA`: access points and their further addresses; `Topology` and
 *    `Links`: links with the LQ/NLQ of each end, creating access points and interfaces for unknown
 *    addresses with a /16 prefix, as the original does);
 * 2. the wiki's node table (HTML): address, antenna, device, owner and position per node;
 * 3. ondataservice (SQLite, tables `nodes` and `ifaces`): device, firmware and system fields,
 *    interfaces with names, MAC addresses, addresses and wifi attributes.
 *
 * Interface, address and link ids are given in creation order, as the original's database does.
 * Then, with `sites: "detect"`, sites from the positions (opennet-sites.ts). The model is held in memory
 * and written as a dump only after it passes the dump's own checks.
 */

export interface ImportOpennetOptions {
  readonly olsr: string;
  readonly wiki?: string;
  readonly ondataservice?: string;
  /** `detect`: sites by the original's rules (opennet-sites.ts); `none` (default): every `site` null */
  readonly sites?: "none" | "detect";
  /** `taken_at`, `lastseen_timestamp` and link `timestamp`; the time of the import when absent */
  readonly at?: string;
  readonly warn?: (line: string) => void;
  readonly cwd?: string;
  readonly home?: string;
}

export interface ImportOpennetResult {
  readonly accesspoints: number;
  readonly interfaces: number;
  readonly links: number;
  readonly takenAt: string;
  /** the brand network.json names */
  readonly brand: string;
  /** how many sites were detected (0 without --sites detect) */
  readonly sites: number;
}

async function read(file: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (err) {
    throw new ImportOpennetError(`${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

/** Reads the sources, applies them in the original's order, checks the records and writes the dump. */
export async function importOpennet(out: string, options: ImportOpennetOptions): Promise<ImportOpennetResult> {
  const takenAt = importTime(options.at, (message) => new ImportOpennetError(message));
  await assertReplaceable({ out, option: "--out", kind: "dump", cwd: options.cwd, home: options.home });
  const model = new OpennetModel();
  const notes: string[] = [];
  applyOlsr(model, (await read(options.olsr)).toString("utf8"), options.olsr);
  if (options.wiki !== undefined) notes.push(...applyWiki(model, (await read(options.wiki)).toString("utf8"), options.wiki));
  if (options.ondataservice !== undefined) await applyOndataservice(model, await read(options.ondataservice), options.ondataservice);
  const sites =
    options.sites === "detect"
      ? detectSites(
          [...model.aps.values()].map((ap) => ({
            main_ip: ap.main_ip,
            coordinates: (ap.fields.position as { coordinates: [number, number] } | undefined)?.coordinates ?? null,
          })),
        )
      : undefined;
  const records = modelToDump(model, takenAt, notes, sites);
  const counts = await writeImportedDump(out, records, {
    sources: { accesspoints: "accesspoints", links: "links" },
    verdict: "the sources do not make a valid dump",
    error: (message) => new ImportOpennetError(message),
    warn: options.warn,
  });
  return {
    ...counts,
    takenAt,
    brand: records.network.brand,
    sites: new Set(sites?.values()).size,
  };
}
