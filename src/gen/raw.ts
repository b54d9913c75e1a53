import type { SynthDump } from "./synth.ts";

/**
 * The raw sources an Opennet server would read for a synthetic network (synth.ts), at a step of a
 * changing day: OLSR txtinfo (`/all`: olsrd's six tables, of which MID holds the further addresses and
 * Topology the links; Links, Neighbors, HNA and Routes are empty) and the wiki's node table (address,
 * street, antenna, device, owner, position); the ondataservice database is ondataservice.ts. From step
 * to step, deterministically for a seed: about 2% of the links leave OLSR (and come back later),
 * qualities drift, and `step` new access points appear, each linked to an existing one. The wiki is
 * the same at every step (it changes by hand). Used by `npm run synth -- --raw`, the cycle's test and
 * the benchmark, where sources must change between runs.
 */

export interface RawSources {
  readonly olsr: string;
  readonly wiki: string;
}

/** The last step there is room for: the new access points' addresses are 10.254.<k / 250>.<k % 250 + 1>. */
export const RAW_MAX_STEP = 250 * 256 - 1;

/** A step stands for one run of the original's OLSR import, every 6 minutes: ondataservice's clocks move on by it. */
export const STEP_SECONDS = 360;

/** A stable pseudo-random number in [0, 1) for a key (FNV-1a, then a few xorshift rounds). */
export function unit(...key: number[]): number {
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

export function assertStep(step: number): void {
  if (!Number.isInteger(step) || step < 0 || step > RAW_MAX_STEP)
    throw new RangeError(
      `the step must be a whole number from 0 to ${RAW_MAX_STEP} (the room for new access points' addresses), not ${step}`,
    );
}

export function rawSources(dump: SynthDump, step: number, seed = 1): RawSources {
  assertStep(step);
  return { olsr: olsrText(dump, step, seed), wiki: wikiPage(dump, seed) };
}

function olsrText(dump: SynthDump, step: number, seed: number): string {
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
  // each table: its name, a header line, the rows, a blank line; all six in olsrd's order, as the
  // importer takes a missing table for a file cut short
  const table = (name: string, header: string, rows: readonly string[]) => [`Table: ${name}`, header, ...rows, "", ""].join("\n");
  return (
    table("Links", "Local IP\tRemote IP\tHyst.\tLQ\tNLQ\tCost", []) +
    table("Neighbors", "IP address\tSYM\tMPR\tMPRS\tWill.\t2 Hop Neighbors", []) +
    table("Topology", "Dest. IP\tLast hop IP\tLQ\tNLQ\tCost", topology) +
    table("HNA", "Destination\tGateway", []) +
    table("MID", "IP address\tAliases", mid) +
    table("Routes", "Destination\tGateway IP\tMetric\tETX\tInterface", [])
  );
}

/** Metres per degree of latitude on the sphere site detection measures on (opennet-sites.ts). */
const METRES_PER_DEGREE = (6370986 * Math.PI) / 180;

/**
 * Where the wiki places each access point: where the dump does, but the members of a site within 2
 * to 8 metres of the first placed member, as a site's routers share a roof or a mast. The dump
 * scatters them over their cluster, hundreds of metres apart, and site detection (4 access points
 * within about 20 metres) then found none in an import of these sources.
 */
export function wikiPositions(dump: SynthDump, seed = 1): (readonly [number, number] | null)[] {
  const anchor = new Map<unknown, readonly [number, number]>();
  return dump.accesspoints.map((ap, i) => {
    const at = (ap.position as { coordinates: [number, number] } | null)?.coordinates ?? null;
    if (at === null || ap.site === null || ap.site === undefined) return at;
    const centre = anchor.get(ap.site) ?? at;
    anchor.set(ap.site, centre);
    const r = 2 + 6 * unit(seed, i, 11);
    const angle = 2 * Math.PI * unit(seed, i, 12);
    const dLat = (r * Math.cos(angle)) / METRES_PER_DEGREE;
    const dLon = (r * Math.sin(angle)) / (METRES_PER_DEGREE * Math.cos((centre[1] * Math.PI) / 180));
    return [round6(centre[0] + dLon), round6(centre[1] + dLat)];
  });
}

function wikiPage(dump: SynthDump, seed: number): string {
  const positions = wikiPositions(dump, seed);
  const rows = dump.accesspoints.map((ap, i) => {
    const position = positions[i];
    const cells = [
      ap.main_ip,
      "",
      ap.post_address ?? "",
      ap.antenna ?? "",
      ap.device_model ?? "",
      ap.owner ?? "",
      "",
      position ? `${position[1]} ${position[0]}` : "",
    ];
    return `<tr>${cells.map((c) => `<td>${html(c)}</td>`).join("")}</tr>`;
  });
  return `<html><body><table>\n${rows.join("\n")}\n</table></body></html>\n`;
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
