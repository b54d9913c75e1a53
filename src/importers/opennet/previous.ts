import { stat } from "node:fs/promises";
import { ACCESSPOINT_FIELDS } from "../../core/model/fields.ts";
import { InvalidDumpError, UsageError } from "../../core/problems.ts";
import { compareIp } from "../../core/values/ip.ts";
import type { Instant } from "../../core/values/timestamp.ts";
import { validateDump, type Dump } from "../../core/model/validator.ts";
import { loadDump } from "../../io/read/load.ts";
import { readCounts, readEvents } from "../../io/read/dump-history.ts";
import { viewOf, type ChangeEvent, type RunCounts, type StateView } from "../../core/history/events.ts";
import { type Iface, OpennetModel } from "./opennet-model.ts";

/**
 * The state an import with memory starts from: a dump (the previous import's, or one written by
 * another tool or by hand), checked as `validate` checks it and turned back into the model the
 * sources are applied to. Access points, interfaces, addresses, links and sites keep their ids,
 * timestamps and values; the next ids continue from network.json's `last_ids` (or, without it, from
 * the greatest id present).
 */

export interface PreviousState {
  readonly model: OpennetModel;
  /** what the events compare (core/history/events.ts), when network.json names its instant */
  readonly view?: StateView;
  /** the changes the previous imports recorded */
  readonly events: readonly ChangeEvent[];
  /** the previous imports' counts by status */
  readonly counts: readonly RunCounts[];
  /** network.json's other fields (name, brand, default_status, community), carried into the new dump */
  readonly network: Record<string, unknown>;
}

const isInstant = (v: unknown): v is Instant => typeof v === "object" && v !== null && "micros" in v && "text" in v;
const plain = (v: unknown): unknown => (isInstant(v) ? v.text : v);

export async function readPrevious(dir: string): Promise<PreviousState> {
  const s = await stat(dir).catch(() => undefined);
  if (!s?.isDirectory())
    throw new UsageError(`--previous ${dir}: ${s ? "not a folder" : "no such folder"}; name the dump the previous import wrote`);
  const { dump, network, view } = await checkedDump(dir);
  const events = await readEvents(dir);
  const counts = await readCounts(dir);
  return { model: modelOf(dump, network), network, view, events, counts };
}

/**
 * The dump checked, and what the events compare. In a function of its own, so that the records as
 * read are let go before the model is made of the checked ones (at 40,000 access points, about a
 * tenth of the import's memory).
 */
async function checkedDump(dir: string): Promise<{ dump: Dump; network: Record<string, unknown>; view?: StateView }> {
  const loaded = await loadDump(dir);
  const validation = validateDump(loaded);
  const errors = validation.problems.filter((p) => p.severity === "error");
  if (validation.dump === undefined || errors.length > 0)
    throw new InvalidDumpError(validation.problems.map((p) => ({ ...p, source: { ...p.source, file: `${dir}/${p.source.file}` } })));
  const network = (loaded.network?.value ?? {}) as Record<string, unknown>;
  const records = (kind: string) => loaded.records.filter((r) => r.kind === kind).map((r) => r.value);
  const view =
    typeof network.taken_at === "string"
      ? viewOf({ takenAt: network.taken_at, accesspoints: records("accesspoint") as Record<string, unknown>[], links: records("link") })
      : undefined;
  return { dump: validation.dump, network, view };
}

/** The model the sources are applied to, made of the checked dump. */
function modelOf(dump: Dump, network: Record<string, unknown>): OpennetModel {
  const model = new OpennetModel();
  const ifaces = new Map<number, Iface>();
  // Interfaces are restored in id order, as the original's tables hold them: lookups take the lowest id first.
  const pending: { iface: Parameters<OpennetModel["restoreIface"]>; addresses: { id: number; address: string; prefix: number }[] }[] = [];
  const aps = [...dump.accesspoints].sort((a, b) => compareIp(a.main_ip, b.main_ip));
  for (const record of aps) {
    const ap = model.ap(record.main_ip);
    for (const [name] of ACCESSPOINT_FIELDS) {
      if (name === "lastseen_timestamp") continue;
      ap.fields[name] = plain(record[name as keyof typeof record]);
    }
    ap.fields.main_ipv6 = record.main_ipv6;
    ap.lastseenBefore = record.lastseen_timestamp?.text ?? null;
    ap.site = record.site;
    ap.firstSeen = record.first_seen?.text ?? null;
    for (const f of record.interfaces) {
      pending.push({
        iface: [ap, f.id, { if_name: f.if_name, if_hwaddress: f.if_hwaddress, wifi: f.wifi === null ? null : { ...f.wifi } }],
        addresses: f.addresses.map((a) => ({ id: a.id, address: a.address, prefix: a.netmask_prefixlen })),
      });
    }
  }
  pending.sort((a, b) => a.iface[1] - b.iface[1]);
  for (const { iface, addresses } of pending) {
    const f = model.restoreIface(...iface);
    ifaces.set(f.id, f);
    for (const a of addresses) model.addAddress(f, a.address, a.prefix, a.id);
  }
  for (const link of dump.links) {
    const [a, b] = link.endpoints;
    model.restoreLink(
      link.id,
      [ifaces.get(a.interfaceId)!, ifaces.get(b.interfaceId)!],
      [a.quality, b.quality],
      link.timestamp?.text ?? null,
    );
  }
  const last = network.last_ids as Partial<Record<keyof OpennetModel["lastIds"], number>> | null | undefined;
  const greatestSite = Math.max(0, ...aps.map((ap) => ap.site ?? 0));
  model.lastIds.interface = Math.max(model.lastIds.interface, last?.interface ?? 0);
  model.lastIds.address = Math.max(model.lastIds.address, last?.address ?? 0);
  model.lastIds.link = Math.max(model.lastIds.link, last?.link ?? 0);
  model.lastIds.site = Math.max(greatestSite, last?.site ?? 0);
  return model;
}
