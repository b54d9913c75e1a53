import { ACCESSPOINT_FIELDS } from "../../core/model/fields.ts";
import { NETWORK_FORMAT } from "../../core/model/schema.ts";
import { existedBy } from "../../core/model/evidence.ts";
import { formatMicros, parseInstant } from "../../core/values/timestamp.ts";
import type { Ap, Iface, LastIds, OpennetModel } from "./opennet-model.ts";

/** The model, once every source is applied, as the records of a dump. */

/**
 * The brand an Opennet network's API writes its brand fields with (`opennet_version`, ...), as the
 * original server does; the dump keeps the neutral `mesh_` names and says the brand in network.json. The
 * list default is left to the build: the raw sources say nothing about what the server answers.
 */
export const OPENNET_BRAND = "opennet";

export interface OpennetNetwork {
  format: string;
  name: string | null;
  taken_at: string;
  brand: string | null;
  last_ids: LastIds;
  [setting: string]: unknown;
}

export interface OpennetRecords {
  readonly network: OpennetNetwork;
  readonly accesspoints: Record<string, unknown>[];
  readonly links: Record<string, unknown>[];
  readonly notes: string[];
}

const AP_FIELD_NAMES = ACCESSPOINT_FIELDS.map(([name]) => name);

/**
 * A record's names in the order the dump writes them, with or without `first_seen`. Each record is a
 * copy of one of these two, its values then set: an object given its 47 names one by one becomes a
 * hash table in V8 (about 3.2 KB against 0.5 KB a record: 110 MB at 40,000 access points).
 */
const RECORD_SHAPES = [false, true].map((firstSeen) =>
  Object.fromEntries(
    [
      ...new Set([
        "main_ip",
        "main_ipv6",
        ...AP_FIELD_NAMES,
        "lastseen_timestamp",
        "site",
        ...(firstSeen ? ["first_seen"] : []),
        "interfaces",
      ]),
    ].map((name) => [name, null]),
  ),
);

/**
 * Dump records from the model. What this import saw in OLSR (access points, links) carries the import's
 * instant; the rest keeps the timestamp of the previous state. `network` holds what a previous state's
 * network.json said besides its time and ids (the operator's settings), else the defaults of a new one.
 */
/**
 * first_seen for an access point the previous state holds none for: seen now and never before, it
 * appeared now; seen before, it was there when the memory began, and its own record's evidence then
 * is fixed (core/model/evidence.ts), so that it does not move on with each sighting.
 */
function appeared(ap: Ap, takenAt: string): string | null {
  if (ap.lastseenBefore === null) return ap.lastseen ? takenAt : null;
  const seen = parseInstant(ap.lastseenBefore);
  if (typeof seen === "string") return null;
  const text = (v: unknown) => (typeof v === "string" ? v : null);
  const uptime = ap.fields.system_uptime;
  const by = existedBy({
    lastseenMicros: seen.micros,
    uptimeSeconds: typeof uptime === "number" ? uptime : null,
    installDates: [text(ap.fields.firmware_install_timestamp), text(ap.fields.mesh_install_timestamp)],
  });
  return by === null ? null : formatMicros(by);
}

export function modelToDump(
  model: OpennetModel,
  takenAt: string,
  notes: string[] = [],
  network: Record<string, unknown> = { name: null, brand: OPENNET_BRAND },
  /** whether this import updates a previous state: only then can it tell an access point that appeared */
  memory = false,
): OpennetRecords {
  const ifacesOf = new Map<unknown, Iface[]>();
  for (const f of model.ifaces) {
    if (f.deleted) continue;
    const list = ifacesOf.get(f.ap);
    if (list === undefined) ifacesOf.set(f.ap, [f]);
    else list.push(f);
  }
  const accesspoints = [...model.aps.values()].map((ap) => {
    const firstSeen = ap.firstSeen ?? (memory ? appeared(ap, takenAt) : null);
    const out: Record<string, unknown> = { ...RECORD_SHAPES[firstSeen === null ? 0 : 1] };
    out.main_ip = ap.main_ip;
    out.main_ipv6 = ap.fields.main_ipv6 ?? null;
    for (const name of AP_FIELD_NAMES) out[name] = ap.fields[name] ?? null;
    if (ap.fields.firmware_type === undefined) out.firmware_type = "OpenWrt";
    if (ap.fields.mesh_services_sorting === undefined) out.mesh_services_sorting = "manual";
    out.lastseen_timestamp = ap.lastseen ? takenAt : ap.lastseenBefore;
    out.site = ap.site;
    if (firstSeen !== null) out.first_seen = firstSeen;
    out.interfaces = (ifacesOf.get(ap) ?? []).map((f) => ({
      id: f.id,
      if_name: f.if_name,
      if_hwaddress: f.if_hwaddress,
      addresses: f.addresses.map((a) => ({ id: a.id, address: a.address, netmask_prefixlen: a.prefix })),
      wifi: f.wifi,
    }));
    return out;
  });
  const links = model.liveLinks().map((l) => ({
    id: l.id,
    timestamp: l.seen ? takenAt : l.timestampBefore,
    endpoints: [
      { interface: l.ends[0].id, quality: l.quality[0] },
      { interface: l.ends[1].id, quality: l.quality[1] },
    ],
  }));
  const { format: _format, taken_at: _takenAt, last_ids: _lastIds, name = null, brand = OPENNET_BRAND, ...settings } = network;
  return {
    network: { format: NETWORK_FORMAT, name, taken_at: takenAt, brand, ...settings, last_ids: { ...model.lastIds } } as OpennetNetwork,
    accesspoints,
    links,
    notes,
  };
}
