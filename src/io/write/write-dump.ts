import { mkdir, open, writeFile } from "node:fs/promises";
import path from "node:path";
import { writeMarker } from "./ownership.ts";
import { COUNTS_FILE, EVENTS_FILE } from "../read/dump-history.ts";
import type { ChangeEvent, RunCounts } from "../../core/history/event.ts";
import { replaceFolder } from "./swap.ts";
import type { LoadedDump, RawRecord } from "../../core/model/input.ts";
import { formatProblem } from "../../core/problems.ts";
import { parseInstant } from "../../core/values/timestamp.ts";
import { validateDump, type Dump } from "../../core/model/validator.ts";

/** Records of a dump as the importers make them. */
export interface DumpRecords {
  readonly network: unknown;
  readonly accesspoints: readonly Record<string, unknown>[];
  readonly links: readonly unknown[];
  /** the changes its imports recorded, oldest first (core/history/lines.ts EVENTS_FILE); absent: none kept */
  readonly events?: readonly ChangeEvent[];
  /** each import's counts by status, oldest first (COUNTS_FILE); absent: none kept */
  readonly counts?: readonly RunCounts[];
}

/** What an importer made: the records, and what the format could not hold, for the user to read. */
export interface ImportedRecords extends DumpRecords {
  readonly notes: readonly string[];
}

export interface ImportedCounts {
  readonly accesspoints: number;
  readonly interfaces: number;
  readonly links: number;
  /**
   * The dump as its checks validated it, and the files it was written to: a build that follows at
   * once (`cycle`) takes it instead of reading and validating the same records again. Taken once, so
   * that the records are not held while the build writes (a fresh build lets them go too).
   */
  readonly checked: Handover<CheckedDump>;
}

/** A value the first `take` gets; from then on nothing holds it through this. */
export interface Handover<T> {
  take(): T | undefined;
}

function handOver<T>(value: T): Handover<T> {
  let held: T | undefined = value;
  return {
    take() {
      const taken = held;
      held = undefined;
      return taken;
    },
  };
}

export interface CheckedDump {
  readonly dump: Dump;
  /** as loadDump lists them */
  readonly files: readonly string[];
}

/** The files writeDump writes, in the order loadDump lists a dump's files. */
const DUMP_FILES = ["accesspoints/accesspoints.ndjson", "links/links.ndjson", "network.json"] as const;

/** How an importer's records are named in its messages, and the importer's own error for a refusal. */
export interface ImportCheck {
  /** where the access points and the links came from, named in place of a dump file */
  readonly sources: { readonly accesspoints: string; readonly links: string };
  /** the last line of the refusal, such as "the sources do not make a valid dump" */
  readonly verdict: string;
  readonly error: (message: string) => Error;
  readonly warn?: (line: string) => void;
}

/**
 * The end of every import: its notes as warnings, then the records through the dump's own checks (an
 * importer must never write a dump that build would refuse), then the atomic write.
 */
export async function writeImportedDump(out: string, records: ImportedRecords, check: ImportCheck): Promise<ImportedCounts> {
  for (const note of records.notes) check.warn?.(note);
  const loaded: LoadedDump = {
    network: { source: { file: "network.json" }, value: records.network },
    records: [
      ...records.accesspoints.map((value, index): RawRecord => ({
        kind: "accesspoint",
        source: { file: check.sources.accesspoints, index },
        value,
      })),
      ...records.links.map((value, index): RawRecord => ({ kind: "link", source: { file: check.sources.links, index }, value })),
    ],
    files: [],
    problems: [],
  };
  const validation = validateDump(loaded);
  const errors = validation.problems.filter((p) => p.severity === "error");
  if (errors.length > 0 || validation.dump === undefined) {
    // ten are enough to see what is wrong; the rest would bury them
    const shown = errors.slice(0, 10).map(formatProblem).join("\n");
    const more = errors.length > 10 ? `\n(${errors.length - 10} more)` : "";
    throw check.error(`${shown}${more}\n${check.verdict} (${errors.length} errors)`);
  }
  await writeDump(out, records);
  return {
    accesspoints: records.accesspoints.length,
    interfaces: records.accesspoints.reduce((n, ap) => n + (ap.interfaces as unknown[]).length, 0),
    links: records.links.length,
    checked: handOver({ dump: validation.dump, files: DUMP_FILES }),
  };
}

/**
 * The instant an import stamps on its dump: `--at` as given when it is an instant, else the time of the
 * import. `error` makes the importer's own error of the message for a bad `--at`.
 */
export function importTime(at: string | undefined, error: (message: string) => Error): string {
  if (at === undefined) return new Date().toISOString();
  const parsed = parseInstant(at);
  if (typeof parsed === "string") throw error(`--at ${at}: ${parsed}`);
  return at;
}

/** Writes a dump folder atomically (one NDJSON file each for access points and links), marked as a dump. */
export async function writeDump(out: string, records: DumpRecords): Promise<void> {
  await replaceFolder(out, async (tmp) => {
    await mkdir(path.join(tmp, "accesspoints"));
    await mkdir(path.join(tmp, "links"));
    const [accesspoints, links, network] = DUMP_FILES;
    await writeFile(path.join(tmp, network), JSON.stringify(records.network, null, 2) + "\n");
    await writeNdjson(path.join(tmp, accesspoints), records.accesspoints);
    await writeNdjson(path.join(tmp, links), records.links);
    if (records.events !== undefined) {
      await mkdir(path.join(tmp, path.dirname(EVENTS_FILE)), { recursive: true });
      await writeNdjson(path.join(tmp, EVENTS_FILE), records.events);
    }
    if (records.counts !== undefined) {
      await mkdir(path.join(tmp, path.dirname(COUNTS_FILE)), { recursive: true });
      await writeNdjson(path.join(tmp, COUNTS_FILE), records.counts);
    }
    await writeMarker(tmp, "dump");
  });
}

/**
 * One record a line, written a thousand lines at a time: the whole text, the array of its lines and
 * its UTF-8 copy were each as large as the file (about 60 MB of access points at 40,000), and held at
 * once beside the records at the import's peak.
 */
async function writeNdjson(file: string, items: readonly unknown[]): Promise<void> {
  const handle = await open(file, "w");
  try {
    for (let i = 0; i < items.length; i += 1000) {
      let text = "";
      for (const item of items.slice(i, i + 1000)) text += JSON.stringify(item) + "\n";
      // one write may take fewer bytes than it is given (a disk filling up): the rest goes on, or fails
      const bytes = Buffer.from(text, "utf8");
      for (let at = 0; at < bytes.length;) at += (await handle.write(bytes, at)).bytesWritten;
    }
  } finally {
    await handle.close();
  }
}
