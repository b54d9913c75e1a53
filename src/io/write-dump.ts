import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { writeMarker } from "./ownership.ts";
import { replaceFolder } from "./swap.ts";

/** Records of a dump as the importers make them. */
export interface DumpRecords {
  readonly network: unknown;
  readonly accesspoints: readonly unknown[];
  readonly links: readonly unknown[];
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
