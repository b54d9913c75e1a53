import type { AccesspointRecord, InterfaceRecord } from "./schema.ts";
import type { Dump, ResolvedLink } from "./validate.ts";
import { compareIp } from "./ip.ts";
import type { Instant } from "./timestamp.ts";

/** Stage 3: indexes over the validated dump. Pure. */

export interface InterfaceEntry {
  readonly iface: InterfaceRecord;
  readonly ap: AccesspointRecord;
}

export interface SiteEntry {
  readonly id: number;
  /** members in main_ip order */
  readonly members: readonly AccesspointRecord[];
}

export type Status = "online" | "flapping" | "offline";
export const STATUSES: readonly Status[] = ["online", "flapping", "offline"];

export interface Model {
  readonly takenAt: Instant | null;
  readonly accesspoints: readonly AccesspointRecord[];
  /** by main_ip and by main_ipv6 */
  readonly accesspointByIp: ReadonlyMap<string, AccesspointRecord>;
  /** sorted by id */
  readonly interfaces: readonly InterfaceEntry[];
  readonly interfaceById: ReadonlyMap<number, InterfaceEntry>;
  /** every address to the interface with the lowest id that holds it */
  readonly interfaceByAddress: ReadonlyMap<string, InterfaceEntry>;
  readonly links: readonly ResolvedLink[];
  /** by main_ip: every link with an endpoint on the access point, once, by id */
  readonly linksByAccesspoint: ReadonlyMap<string, readonly ResolvedLink[]>;
  /** by "<main_ip a>-<main_ip b>" in both orders: the link with the lowest id */
  readonly linkByPeers: ReadonlyMap<string, ResolvedLink>;
  readonly sites: readonly SiteEntry[];
}

export function buildModel(dump: Dump): Model {
  const accesspointByIp = new Map<string, AccesspointRecord>();
  const interfaces: InterfaceEntry[] = [];
  for (const ap of dump.accesspoints) {
    accesspointByIp.set(ap.main_ip, ap);
    if (ap.main_ipv6 !== null) accesspointByIp.set(ap.main_ipv6, ap);
    for (const iface of ap.interfaces) interfaces.push({ iface, ap });
  }
  interfaces.sort((a, b) => a.iface.id - b.iface.id);
  const interfaceById = new Map(interfaces.map((e) => [e.iface.id, e]));
  const interfaceByAddress = new Map<string, InterfaceEntry>();
  for (const entry of interfaces) {
    for (const a of entry.iface.addresses) if (!interfaceByAddress.has(a.address)) interfaceByAddress.set(a.address, entry);
  }

  const linksByAccesspoint = new Map<string, ResolvedLink[]>();
  const linkByPeers = new Map<string, ResolvedLink>();
  for (const link of dump.links) {
    const peers = link.endpoints.map((e) => interfaceById.get(e.interfaceId)!.ap.main_ip);
    for (const ip of new Set(peers)) {
      const list = linksByAccesspoint.get(ip) ?? [];
      list.push(link);
      linksByAccesspoint.set(ip, list);
    }
    const [a, b] = peers;
    if (a === b) continue; // a link from an access point to itself has no peers route
    for (const key of [`${a}-${b}`, `${b}-${a}`]) if (!linkByPeers.has(key)) linkByPeers.set(key, link);
  }

  const siteMembers = new Map<number, AccesspointRecord[]>();
  for (const ap of dump.accesspoints) {
    if (ap.site === null) continue;
    const list = siteMembers.get(ap.site) ?? [];
    list.push(ap);
    siteMembers.set(ap.site, list);
  }
  const sites = [...siteMembers]
    .sort(([a], [b]) => a - b)
    .map(([id, members]) => ({ id, members: members.sort((a, b) => compareIp(a.main_ip, b.main_ip)) }));

  return {
    takenAt: dump.takenAt,
    accesspoints: dump.accesspoints,
    accesspointByIp,
    interfaces,
    interfaceById,
    interfaceByAddress,
    links: dump.links,
    linksByAccesspoint,
    linkByPeers,
    sites,
  };
}

const MINUTE = 60_000_000;
const DAY = 24 * 60 * MINUTE;

/** online: seen in the last 30 minutes; flapping: 30 minutes to 30 days ago; offline: older, or never. */
export function statusOf(seen: Instant | null, takenAt: Instant | null): Status {
  if (seen === null || takenAt === null) return "offline";
  const age = takenAt.micros - seen.micros;
  if (age < 30 * MINUTE) return "online";
  if (age <= 30 * DAY) return "flapping";
  return "offline";
}
