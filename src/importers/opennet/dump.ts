import { ACCESSPOINT_FIELDS } from "../../core/fields.ts";
import { NETWORK_FORMAT } from "../../core/schema.ts";
import type { OpennetModel } from "./model.ts";

/** The model, once every source is applied, as the records of a dump. */

/**
 * The brand an Opennet network's API writes its brand fields with (`opennet_version`, ...), as the
 * original server does; the dump keeps the neutral `mesh_` names and says the brand in network.json. The
 * list default is left to the build: the raw sources say nothing about what the server answers.
 */
export const OPENNET_BRAND = "opennet";

export interface OpennetRecords {
  readonly network: { format: string; name: string | null; taken_at: string; brand: string };
  readonly accesspoints: Record<string, unknown>[];
  readonly links: Record<string, unknown>[];
  readonly notes: string[];
}

const AP_FIELD_NAMES = ACCESSPOINT_FIELDS.map(([name]) => name);

/** Dump records from the model; lastseen and link timestamps are the import's instant. */
export function modelToDump(
  model: OpennetModel,
  takenAt: string,
  notes: string[] = [],
  sites?: ReadonlyMap<string, number>,
): OpennetRecords {
  const accesspoints = [...model.aps.values()].map((ap) => {
    const out: Record<string, unknown> = { main_ip: ap.main_ip, main_ipv6: ap.fields.main_ipv6 ?? null };
    for (const name of AP_FIELD_NAMES) out[name] = ap.fields[name] ?? null;
    if (ap.fields.firmware_type === undefined) out.firmware_type = "OpenWrt";
    if (ap.fields.mesh_services_sorting === undefined) out.mesh_services_sorting = "manual";
    out.lastseen_timestamp = ap.lastseen ? takenAt : null;
    out.site = sites?.get(ap.main_ip) ?? null;
    out.interfaces = model.ifaces
      .filter((f) => f.ap === ap && !f.deleted)
      .map((f) => ({
        id: f.id,
        if_name: f.if_name,
        if_hwaddress: f.if_hwaddress,
        addresses: f.addresses.map((a) => ({ id: a.id, address: a.address, netmask_prefixlen: a.prefix })),
        wifi: f.wifi,
      }));
    return out;
  });
  const links = model.links.map((l) => ({
    id: l.id,
    timestamp: takenAt,
    endpoints: [
      { interface: l.ends[0].id, quality: l.quality[0] },
      { interface: l.ends[1].id, quality: l.quality[1] },
    ],
  }));
  return {
    network: { format: NETWORK_FORMAT, name: null, taken_at: takenAt, brand: OPENNET_BRAND },
    accesspoints,
    links,
    notes,
  };
}
