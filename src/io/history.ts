import { readFile } from "node:fs/promises";
import path from "node:path";
import { EARLIEST_CREDIBLE } from "../core/evidence.ts";
import { fileFor } from "../core/routes.ts";

/**
 * The `firstseen` of every node in an earlier build's meshviewer file (the output a build replaces,
 * or the build a cycle served), in microseconds by node id: the previous state that saw each node, so
 * that a node keeps the first sighting a build once gave it (docs/freifunk.md). An unreadable or
 * absent file is no history.
 */
export async function readFirstSeen(dir: string | undefined): Promise<ReadonlyMap<string, number>> {
  const seen = new Map<string, number>();
  if (dir === undefined) return seen;
  const text = await readFile(path.join(dir, fileFor("meshviewer")), "utf8").catch(() => undefined);
  if (text === undefined) return seen;
  try {
    const parsed = JSON.parse(text) as { nodes?: unknown };
    if (!Array.isArray(parsed.nodes)) return seen;
    for (const node of parsed.nodes as { node_id?: unknown; firstseen?: unknown }[]) {
      if (typeof node?.node_id !== "string" || typeof node.firstseen !== "string") continue;
      const micros = Date.parse(node.firstseen) * 1000;
      if (Number.isFinite(micros) && micros >= EARLIEST_CREDIBLE) seen.set(node.node_id, micros);
    }
  } catch {
    // not JSON: no history
  }
  return seen;
}
