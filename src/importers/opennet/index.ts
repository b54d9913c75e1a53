import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { assertReplaceable } from "../../io/write/ownership.ts";
import { importTime, writeImportedDump, type CheckedDump, type Handover } from "../../io/write/write-dump.ts";
import { UsageError } from "../../core/problems.ts";
import { fetchBytes } from "../../io/read/net.ts";
import { updateSites } from "../opennet-sites.ts";
import { modelToDump } from "./dump.ts";
import { ImportOpennetError } from "./error.ts";
import { changes, countsOf, retain, viewOf, type Retention } from "../../core/history/events.ts";
import { parseInstant, type Instant } from "../../core/values/timestamp.ts";
import { OpennetModel } from "./opennet-model.ts";
import { applyOlsr } from "./olsr.ts";
import { applyOndataservice } from "./ondataservice.ts";
import { readPrevious } from "./previous.ts";
import { applyWiki } from "./wiki.ts";

export { modelToDump, type OpennetRecords } from "./dump.ts";
export { ImportOpennetError } from "./error.ts";
export { OpennetModel } from "./opennet-model.ts";
export { readPrevious, type PreviousState } from "./previous.ts";
export { applyOlsr, parseTxtinfo } from "./olsr.ts";
export { applyOndataservice } from "./ondataservice.ts";
export { applyWiki, parseNodeIp, parseWikiNodes, type WikiNode } from "./wiki.ts";

/**
 * `import opennet`: a dump from the raw sources the original server (Geronimo,
 * github.com/opennet-initiative/api) was fed with, applied in its order on an empty network or, with
 * `previous`, on the state a previous import left (previous.ts), as the original's periodic imports
 * update its database:
 *
 * 1. OLSR txtinfo (`MID` and `HNA`: access points and their further addresses; `Topology` and
 *    `Links`: links with the LQ/NLQ of each end, creating access points and interfaces for unknown
 *    addresses with a /16 prefix, as the original does);
 * 2. the wiki's node table (HTML): address, antenna, device, owner and position per node;
 * 3. ondataservice (SQLite, tables `nodes` and `ifaces`): device, firmware and system fields,
 *    interfaces with names, MAC addresses, addresses and wifi attributes.
 *
 * Interface, address and link ids are given in creation order, as the original's database does; what
 * the previous state holds keeps its id, and nothing is dropped because a source no longer shows it.
 * Then, with `sites: "detect"`, sites updated from the positions (opennet-sites.ts). The model is held
 * in memory and written as a dump only after it passes the dump's own checks.
 */

export interface ImportOpennetOptions {
  /** a txtinfo file, or the address of olsrd's txtinfo plugin (its `/all` is read); required without `previous` */
  readonly olsr?: string;
  /** the wiki's node page: a file or an http(s) address */
  readonly wiki?: string;
  readonly ondataservice?: string;
  /** a dump (the previous import's) this import updates, as the original updates its database */
  readonly previous?: string;
  /**
   * `detect`: sites updated by the original's rules (opennet-sites.ts); `keep`: the previous state's
   * sites as they are; `none`: every `site` null. Default: `keep` with `previous`, else `none`.
   */
  readonly sites?: "none" | "detect" | "keep";
  /** `taken_at`, and the `lastseen_timestamp` and link `timestamp` of what OLSR shows; the time of the import when absent */
  readonly at?: string;
  /** time limit for reading a source over HTTP, in milliseconds */
  readonly timeoutMs?: number;
  /** how long the changes are kept (with `previous`): `--history-days` */
  readonly retention?: Retention;
  readonly warn?: (line: string) => void;
  readonly cwd?: string;
  readonly home?: string;
}

export const IMPORT_OPENNET_DEFAULTS = { timeoutMs: 30_000, maxBytes: 64 * 1024 * 1024 } as const;

/** the sha256 of the bytes each source read gave */
type Digests = Partial<Record<"olsr" | "wiki" | "ondataservice", string>>;

export interface ImportOpennetResult {
  readonly accesspoints: number;
  readonly interfaces: number;
  readonly links: number;
  readonly takenAt: string;
  /** the brand network.json names */
  readonly brand: string | null;
  /** how many sites the dump has */
  readonly sites: number;
  /** the dump as it was validated before it was written, for a build that follows at once */
  readonly checked: Handover<CheckedDump>;
  /** the sha256 of the bytes each source read gave (a file's, or an address's answer) */
  readonly digests: Readonly<Digests>;
}

const isUrl = (source: string) => /^https?:\/\//i.test(source);

/** A source file, or (for OLSR and the wiki) a live address read with a time limit. */
async function read(source: string, what: string, timeoutMs: number, url?: (source: string) => string): Promise<Buffer> {
  if (url !== undefined && isUrl(source)) {
    const target = url(source);
    const r = await fetchBytes(target, timeoutMs, IMPORT_OPENNET_DEFAULTS.maxBytes);
    if (!r.ok) throw new ImportOpennetError(`${what} ${target}: cannot read it (${r.reason})`);
    return r.bytes;
  }
  try {
    return await readFile(source);
  } catch (err) {
    throw new ImportOpennetError(`${source}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, {
      cause: err,
    });
  }
}

/** olsrd's txtinfo plugin answers every table at `/all`, as the original reads it. */
const txtinfoAll = (base: string) => `${base.replace(/\/+$/, "")}/all`;

/**
 * Reads the sources, applies them in the original's order to the previous state (or an empty network),
 * checks the records and writes the dump. Every source is read before anything is written: a source
 * that cannot be read leaves `out` as it was.
 */
export async function importOpennet(out: string, options: ImportOpennetOptions): Promise<ImportOpennetResult> {
  const takenAt = importTime(options.at, (message) => new ImportOpennetError(message));
  if (options.olsr === undefined && options.previous === undefined)
    throw new UsageError("import opennet needs --olsr (a txtinfo file or address), or --previous with the sources of this run");
  await assertReplaceable({ out, option: "--out", kind: "dump", cwd: options.cwd, home: options.home });
  // Made in a function of its own: the sources' text, the previous state and the models are no longer
  // held while the records are checked and written (at 40,000 access points, hundreds of MB).
  const { records, digests } = await importedRecords(options, takenAt);
  const counts = await writeImportedDump(out, records, {
    sources: { accesspoints: "accesspoints", links: "links" },
    verdict: "the sources do not make a valid dump",
    error: (message) => new ImportOpennetError(message),
    warn: options.warn,
  });
  return {
    ...counts,
    digests,
    takenAt,
    brand: records.network.brand,
    sites: new Set(records.accesspoints.map((ap) => ap.site).filter((s) => s !== null)).size,
  };
}

/** The sources read and applied to the previous state: the records of the dump, and the sources' digests. */
async function importedRecords(options: ImportOpennetOptions, takenAt: string) {
  const timeoutMs = options.timeoutMs ?? IMPORT_OPENNET_DEFAULTS.timeoutMs;
  const digests: Digests = {};
  const kept = (kind: keyof typeof digests, bytes: Buffer) => {
    digests[kind] = createHash("sha256").update(bytes).digest("hex");
    return bytes;
  };
  const olsr =
    options.olsr === undefined ? undefined : kept("olsr", await read(options.olsr, "--olsr", timeoutMs, txtinfoAll)).toString("utf8");
  const wiki =
    options.wiki === undefined ? undefined : kept("wiki", await read(options.wiki, "--wiki", timeoutMs, (u) => u)).toString("utf8");
  const ondataservice =
    options.ondataservice === undefined
      ? undefined
      : kept("ondataservice", await read(options.ondataservice, "--ondataservice", timeoutMs));
  const previous = options.previous === undefined ? undefined : await readPrevious(options.previous);
  const model = previous?.model ?? new OpennetModel();
  const notes: string[] = [];
  if (olsr !== undefined) notes.push(...applyOlsr(model, olsr, options.olsr));
  if (wiki !== undefined) notes.push(...applyWiki(model, wiki, options.wiki));
  if (ondataservice !== undefined) await applyOndataservice(model, ondataservice, options.ondataservice);
  const sites = options.sites ?? (previous ? "keep" : "none");
  if (sites === "detect") {
    const update = updateSites(
      [...model.aps.values()].map((ap) => ({
        main_ip: ap.main_ip,
        coordinates: (ap.fields.position as { coordinates: [number, number] } | null | undefined)?.coordinates ?? null,
        site: ap.site,
      })),
      model.lastIds.site,
    );
    for (const ap of model.aps.values()) ap.site = update.site.get(ap.main_ip) ?? null;
    model.lastIds.site = update.lastId;
  } else if (sites === "none") {
    for (const ap of model.aps.values()) ap.site = null;
  }
  const dumped = modelToDump(model, takenAt, notes, previous?.network, previous !== undefined);
  // With memory, what changed since the previous state, kept for the retention window (core/history/events.ts).
  const at = parseInstant(takenAt) as Instant;
  const view = previous === undefined ? undefined : viewOf({ takenAt, ...dumped });
  const records =
    previous === undefined || view === undefined
      ? dumped
      : {
          ...dumped,
          events: retain([...previous.events, ...(previous.view ? changes(previous.view, view) : [])], at, options.retention),
          counts: retain(
            [...previous.counts, ...(previous.counts.length === 0 && previous.view ? [countsOf(previous.view)] : []), countsOf(view)],
            at,
            options.retention,
          ),
        };
  return { records, digests };
}
