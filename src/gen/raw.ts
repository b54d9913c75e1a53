import type { SynthDump } from "./synth.ts";

/**
 * The raw sources an Opennet server would read for a synthetic network (synth.ts), at a step of a
 * changing day: OLSR txtinfo (`/all`: MID for the further addresses, Topology for the links, an empty
 * Links table) and the wiki's node table (address, street, antenna, device, owner, position). From
 * step to step, deterministically for a seed: about 2% of the links leave OLSR (and come back later),
 * qualities drift, and `step` new access points appear, each linked to an existing one. Used by the
 * cycle's test and the benchmark, where sources must change between runs.
 */

export interface RawSources {
  readonly olsr: string;
  readonly wiki: string;
}

/** A stable pseudo-random number in [0, 1) for a key (FNV-1a, then a few xorshift rounds). */
function unit(...key: number[]): number {
  let h = 2166136261;
  for (const k of key) {
    h ^= k;
    h = Math.imul(h, 16777619) >>> 0;
  }
  h ^= h << 13;
  h ^= h >>> 17;
  h ^= h << 5;
  return (h >>> 0) / 4294967296;
}

const html = (s: unknown) => String(s ?? "").replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);

interface Iface {
  readonly id: number;
  readonly addresses: { address: string }[];
}

export function rawSources(dump: SynthDump, step: number, seed = 1): RawSources {
  const addressOf = new Map<number, string>();
  const byAddress = new Set<string>();
  const mid: string[] = [];
  for (const ap of dump.accesspoints) {
    const main = String(ap.main_ip);
    const aliases: string[] = [];
    for (const f of ap.interfaces as Iface[]) {
      const v4 = f.addresses.map((a) => a.address).filter((a) => !a.includes(":"));
      if (v4[0] !== undefined) addressOf.set(f.id, v4[0]);
      for (const a of v4) {
        byAddress.add(a);
        if (a !== main) aliases.push(a);
      }
    }
    if (aliases.length > 0) mid.push(`${main}\t${aliases.join(";")}`);
  }
  const topology: string[] = [];
  const row = (a: string, b: string, lq: number, nlq: number) =>
    topology.push(`${b}\t${a}\t${lq.toFixed(3)}\t${nlq.toFixed(3)}\t${(lq * nlq > 0 ? 1 / (lq * nlq) : 0).toFixed(3)}`);
  for (const link of dump.links) {
    const id = Number(link.id);
    if (step > 0 && unit(seed, id, step) < 0.02) continue;
    const ends = (link.endpoints as { interface?: number; address?: string; quality: number }[]).map((e) =>
      e.interface !== undefined ? addressOf.get(e.interface) : e.address,
    );
    if (ends[0] === undefined || ends[1] === undefined || ends.some((a) => a!.includes(":"))) continue;
    const drift = (q: number, k: number) => Math.min(1, Math.max(0.05, q + (unit(seed, id, step, k) - 0.5) * 0.2 * Math.min(step, 1)));
    const [qa, qb] = (link.endpoints as { quality: number }[]).map((e, k) => drift(e.quality, k));
    row(ends[0]!, ends[1]!, qa, qb);
  }
  const anchors = [...addressOf.values()];
  for (let k = 1; k <= step; k++) {
    const fresh = `10.254.${Math.floor(k / 250)}.${(k % 250) + 1}`;
    const to = anchors[Math.floor(unit(seed, k, 7) * anchors.length)];
    if (to !== undefined && !byAddress.has(fresh)) row(fresh, to, 0.8, 0.7);
  }
  // each table: its name, a header line, the rows, a blank line
  const table = (name: string, header: string, rows: readonly string[]) => [`Table: ${name}`, header, ...rows, "", ""].join("\n");
  const olsr =
    table("Links", "Local IP\tRemote IP\tHyst.\tLQ\tNLQ\tCost", []) +
    table("Topology", "Dest. IP\tLast hop IP\tLQ\tNLQ\tCost", topology) +
    table("MID", "IP address\tAliases", mid);
  const rows = dump.accesspoints.map((ap) => {
    const position = ap.position as { coordinates: [number, number] } | null;
    const cells = [
      ap.main_ip,
      "",
      ap.post_address ?? "",
      ap.antenna ?? "",
      ap.device_model ?? "",
      ap.owner ?? "",
      "",
      position ? `${position.coordinates[1]} ${position.coordinates[0]}` : "",
    ];
    return `<tr>${cells.map((c) => `<td>${html(c)}</td>`).join("")}</tr>`;
  });
  const wiki = `<html><body><table>\n${rows.join("\n")}\n</table></body></html>\n`;
  return { olsr, wiki };
}
