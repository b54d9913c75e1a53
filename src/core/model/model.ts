import { pyFloat } from "../values/pyfloat.ts";
import type { AccesspointRecord, PointRecord } from "./schema.ts";
import { peersKey, type Dump, type ResolvedLink } from "./validator.ts";
import { groupBy, Groups } from "./collections.ts";
import { existedBy } from "./evidence.ts";
import { sortByIp } from "../values/ip.ts";
import { isWireless, renderAccesspoint, renderInterface } from "./render-json.ts";
import { TextBlocks } from "./packed.ts";
import type { Instant } from "../values/timestamp.ts";
import { resolveSettings, type SiteSettings } from "../settings.ts";

/**
 * Stage 3: indexes over the validated dump. Pure. Each access point and interface is kept as its
 * rendered JSON and the few fields the filters and the other resources read, not as its record (the
 * records take several times the memory of their JSON). The JSON is kept as UTF-8 bytes: that is how
 * it is written, many times over, and bytes outside the JavaScript heap do not make the garbage
 * collector let the heap grow (README, "Performance": memory).
 */

export interface AccesspointEntry {
  readonly main_ip: string;
  readonly main_ipv6: string | null;
  readonly mesh_version: string | null;
  readonly lastseen_timestamp: Instant | null;
  /** the dump's first_seen: when an import with memory first saw it (schema.ts) */
  readonly first_seen: Instant | null;
  /** the earliest its record shows it existed, in microseconds (evidence.ts); null when never seen */
  readonly existed_by: number | null;
  readonly site: number | null;
  readonly position: PointRecord | null;
  /**
   * The position's longitude and latitude as Python writes them: made once, for the lists, graphs and
   * features that write them again (numbers as text were a thirtieth of a recycled cycle's thread at
   * 40,000 access points, about half of that coordinates)
   */
  readonly positionText: readonly [lon: string, lat: string] | null;
  readonly post_address: string | null;
  /** the record's numbers the metrics file reads (core/history/metrics.ts); null where the record has none */
  readonly system_load_1min: number | null;
  /** seconds */
  readonly system_uptime: number | null;
  /** in the unit the firmware reports (the API does not say which) */
  readonly device_memory_available: number | null;
  readonly device_memory_free: number | null;
  /** interface ids, ascending */
  readonly interfaces: readonly number[];
  /** the access point's API JSON, UTF-8 */
  readonly json: Buffer;
}

export interface InterfaceEntry {
  readonly id: number;
  readonly ap: AccesspointEntry;
  /** wifi_ssid of its wifi attributes; null without them */
  readonly ssid: string | null;
  /** if_hwaddress in lower case, as the filter compares it */
  readonly mac: string | null;
  readonly wireless: boolean;
  /** whether it carries wifi attributes: what the `is_wireless` filter selects by, as in the original */
  readonly wifi: boolean;
  /** the interface's API JSON, UTF-8 */
  readonly json: Buffer;
}

export interface SiteEntry {
  readonly id: number;
  /** members in main_ip order */
  readonly members: readonly AccesspointEntry[];
}

export type Status = "online" | "flapping" | "offline";
export const STATUSES: readonly Status[] = ["online", "flapping", "offline"];

export interface Model {
  readonly takenAt: Instant | null;
  /** the brand and list default of this build (options over network.json over the defaults) */
  readonly settings: SiteSettings;
  /** sorted by main_ip */
  readonly accesspoints: readonly AccesspointEntry[];
  /** by main_ip and by main_ipv6 */
  readonly accesspointByIp: ReadonlyMap<string, AccesspointEntry>;
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
  /** what each output carries from the build this one replaces or the dump, by the output's kind (outputs/output.ts carry) */
  readonly carried?: ReadonlyMap<string, unknown>;
  /** the health of the cycle that made the build, for the metrics file; a plain build has none */
  readonly health?: CycleHealth;
}

/** What the cycle making a build says of itself (live/run.ts), for the metrics file (history/metrics.ts). */
export interface CycleHealth {
  /** the run that made the build */
  readonly run: number;
  /** each source's last import: its name and the instant (`taken_at`) of the run that imported it */
  readonly sources: readonly { readonly source: string; readonly at: string }[];
  /** how long the previous good run took, in seconds, as its record says; absent when it says nothing */
  readonly previousRunSeconds?: number;
  /** runs that failed between the previous good run and this one */
  readonly failedRuns: number;
}

export function buildModel(dump: Dump, given: Partial<SiteSettings> = {}): Model {
  const settings = resolveSettings(given, dump);
  const accesspoints: AccesspointEntry[] = [];
  const accesspointByIp = new Map<string, AccesspointEntry>();
  const interfaces: InterfaceEntry[] = [];
  // about 1.3 kB an access point and 0.5 kB an interface (a synthetic network of 40,000: 76 MB)
  const blocks = new TextBlocks(dump.accesspoints.reduce((n, r) => n + 1300 + 500 * r.interfaces.length, 0));
  for (const record of dump.accesspoints) {
    const ap = accesspointEntry(record, settings.brand, blocks);
    accesspoints.push(ap);
    accesspointByIp.set(ap.main_ip, ap);
    if (ap.main_ipv6 !== null) accesspointByIp.set(ap.main_ipv6, ap);
    for (const iface of record.interfaces) {
      interfaces.push({
        id: iface.id,
        ap,
        ssid: iface.wifi?.wifi_ssid ?? null,
        mac: iface.if_hwaddress?.toLowerCase() ?? null,
        wireless: isWireless(iface),
        wifi: iface.wifi !== null,
        json: blocks.pack(renderInterface(iface, ap.main_ip)),
      });
    }
  }
  interfaces.sort((a, b) => a.id - b.id);
  const interfaceById = new Map(interfaces.map((e) => [e.id, e]));
  // Validation decided which interface an address and which link a pair of peers resolve to; the
  // maps keep the order of the dump (access points by main_ip, links by id).
  const interfaceByAddress = new Map<string, InterfaceEntry>();
  for (const record of dump.accesspoints) {
    for (const iface of record.interfaces) {
      for (const { address } of iface.addresses) {
        if (!interfaceByAddress.has(address)) interfaceByAddress.set(address, interfaceById.get(dump.holderOfAddress.get(address)!)!);
      }
    }
  }
  const linksByAccesspoint = new Groups<string, ResolvedLink>();
  const linkByPeers = new Map<string, ResolvedLink>();
  for (const link of dump.links) {
    const peers = link.endpoints.map((e) => interfaceById.get(e.interfaceId)!.ap.main_ip);
    for (const ip of new Set(peers)) linksByAccesspoint.add(ip, link);
    const [a, b] = peers;
    if (a === b) continue; // a link from an access point to itself has no peers route
    if (dump.linkOfPeers.get(peersKey(a, b)) !== link.id) continue;
    linkByPeers.set(`${a}-${b}`, link);
    linkByPeers.set(`${b}-${a}`, link);
  }

  const siteMembers = groupBy(
    accesspoints.filter((ap) => ap.site !== null),
    (ap) => ap.site!,
  );
  const sites = [...siteMembers].sort(([a], [b]) => a - b).map(([id, members]) => ({ id, members: sortByIp(members, (m) => m.main_ip) }));

  return {
    takenAt: dump.takenAt,
    settings,
    accesspoints,
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

function accesspointEntry(record: AccesspointRecord, brand: string, blocks: TextBlocks): AccesspointEntry {
  return {
    main_ip: record.main_ip,
    main_ipv6: record.main_ipv6,
    mesh_version: record.mesh_version,
    lastseen_timestamp: record.lastseen_timestamp,
    first_seen: record.first_seen,
    existed_by: existedBy({
      lastseenMicros: record.lastseen_timestamp?.micros ?? null,
      uptimeSeconds: record.system_uptime,
      installDates: [record.firmware_install_timestamp, record.mesh_install_timestamp],
    }),
    site: record.site,
    position: record.position,
    positionText: record.position && [pyFloat(record.position.coordinates[0]), pyFloat(record.position.coordinates[1])],
    post_address: record.post_address,
    system_load_1min: record.system_load_1min,
    system_uptime: record.system_uptime,
    device_memory_available: record.device_memory_available,
    device_memory_free: record.device_memory_free,
    interfaces: record.interfaces.map((i) => i.id).sort((a, b) => a - b),
    json: blocks.pack(renderAccesspoint(record, brand)),
  };
}

const MINUTE = 60_000_000;
const DAY = 24 * 60 * MINUTE;

/**
 * The original's status rule (oni_model/models.py), decided here once: the OpenAPI text and the docs
 * say it from these numbers.
 */
export const STATUS_RULE = { onlineMinutes: 30, offlineDays: 30 } as const;

/** The rule in words, for documents. */
export const STATUS_RULE_TEXT =
  `\`online\` seen less than ${STATUS_RULE.onlineMinutes} minutes before, ` +
  `\`flapping\` ${STATUS_RULE.onlineMinutes} minutes to ${STATUS_RULE.offlineDays} days, \`offline\` older or never`;

/** online: seen in the last 30 minutes; flapping: 30 minutes to 30 days ago; offline: older, or never (STATUS_RULE). */
export function statusOf(seen: Instant | null, takenAt: Instant | null): Status {
  if (seen === null || takenAt === null) return "offline";
  const age = takenAt.micros - seen.micros;
  if (age < STATUS_RULE.onlineMinutes * MINUTE) return "online";
  if (age <= STATUS_RULE.offlineDays * DAY) return "flapping";
  return "offline";
}

/** What a dump holds, in counts: the build's summary and a snapshot's index entry. */
export interface DumpSummary {
  readonly files: number;
  readonly accesspoints: number;
  readonly interfaces: number;
  readonly links: number;
  readonly sites: number;
  readonly takenAt: string | null;
}
