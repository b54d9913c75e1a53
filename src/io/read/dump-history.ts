import { readFile } from "node:fs/promises";
import path from "node:path";
import { COUNTS_FILE, EVENTS_FILE, parseCounts, parseEvents } from "../../core/history/lines.ts";
import type { ChangeEvent, RunCounts } from "../../core/history/event.ts";

export { COUNTS_FILE, EVENTS_FILE } from "../../core/history/lines.ts";

/** A file of the dump, or undefined when it has none (any other error is the machine's, and passes). */
export const readDumpFile = (file: string) =>
  readFile(file, "utf8").catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return undefined;
    throw err;
  });

/** The events a dump keeps, oldest first; none when it keeps none. A bad line is bad input, located. */
export async function readEvents(dump: string): Promise<ChangeEvent[]> {
  return parseEvents(await readDumpFile(path.join(dump, EVENTS_FILE)));
}

/** The counts a dump keeps, oldest first; none when it keeps none. A bad line is bad input, located. */
export async function readCounts(dump: string): Promise<RunCounts[]> {
  return parseCounts(await readDumpFile(path.join(dump, COUNTS_FILE)));
}
