import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { writeMarker } from "./ownership.ts";
import { replaceFolder } from "./swap.ts";
import { parseInstant } from "../core/timestamp.ts";

/** Records of a dump as the importers make them. */
export interface DumpRecords {
  readonly network: unknown;
  readonly accesspoints: readonly unknown[];
  readonly links: readonly unknown[];
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
  const ndjson = (items: readonly unknown[]) => items.map((r) => JSON.stringify(r) + "\n").join("");
  await replaceFolder(out, async (tmp) => {
    await mkdir(path.join(tmp, "accesspoints"));
    await mkdir(path.join(tmp, "links"));
    await writeFile(path.join(tmp, "network.json"), JSON.stringify(records.network, null, 2) + "\n");
    await writeFile(path.join(tmp, "accesspoints", "accesspoints.ndjson"), ndjson(records.accesspoints));
    await writeFile(path.join(tmp, "links", "links.ndjson"), ndjson(records.links));
    await writeMarker(tmp, "dump");
  });
}
