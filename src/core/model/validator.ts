import type { DefaultStatus } from "../settings.ts";
import type { z } from "zod";
import type { LoadedDump, RawRecord } from "./input.ts";
import { compareSources, formatSource, jsonPath, type Problem, type Source } from "../problems.ts";
import { accesspointSchema, knownKeys, linkSchema, networkSchema, type AccesspointRecord, type LinkRecord } from "./schema.ts";
import { Groups } from "./collections.ts";
import { nearest } from "../values/text.ts";
import { compareIp, sortByIp } from "../values/ip.ts";
import type { Instant } from "../values/timestamp.ts";

/** Stage 2: schema checks per record, then the checks across records. Pure: no I/O. */

export interface Dump {
  readonly name: string | null;
  /** what network.json names (null: not named); the build's options override both */
  readonly brand: string | null;
  readonly defaultStatus: DefaultStatus | null;
  readonly communityName: string | null;
  readonly communityUrl: string | null;
  /** the instant status filters are computed against; null when the dump has no timestamp at all */
  readonly takenAt: Instant | null;
  /** sorted by main_ip */
  readonly accesspoints: readonly AccesspointRecord[];
  /** sorted by id; endpoints resolved to interface ids, in dump order */
  readonly links: readonly ResolvedLink[];
  /**
   * The two rules for what a dump holds twice, decided here once: an address held by several
   * interfaces belongs to the lowest interface id; two access points joined by several links are
   * joined, for the link-by-peers route, by the lowest link id.
   */
  readonly holderOfAddress: ReadonlyMap<string, number>;
  /** by the two main_ips in IP order, joined by a space */
  readonly linkOfPeers: ReadonlyMap<string, number>;
}

export interface ResolvedLink {
  readonly id: number;
  readonly timestamp: Instant | null;
  readonly endpoints: readonly { readonly interfaceId: number; readonly quality: number }[];
}

export interface Validation {
  /** present when there are no errors */
  readonly dump?: Dump;
  /** errors and warnings, in file order */
  readonly problems: Problem[];
}

export interface DumpValidator {
  /** checks one record against its schema and keeps only the validated form */
  accept(record: RawRecord): void;
  /** the checks across records, once every record was accepted */
  finish(loaded: LoadedDump): Validation;
}

export function validateDump(loaded: LoadedDump): Validation {
  const validator = createValidator();
  for (const record of loaded.records) validator.accept(record);
  return validator.finish(loaded);
}

/**
 * What a record the schema refused still says, read as far as it can be: its ids and addresses take
 * part in the uniqueness checks (a bad link must not hide a duplicate id), and a link that names one of
 * them is reported as a consequence of that record's error, not as a problem of its own.
 */
export interface Rejected {
  readonly source: Source;
  readonly ids: { readonly link?: number; readonly mainIp?: string; readonly interfaces: number[]; readonly addresses: string[] };
}

function rejectedOf(kind: RawRecord["kind"], source: Source, value: unknown): Rejected {
  const v = (value ?? {}) as Record<string, unknown>;
  const interfaces: number[] = [];
  const addresses: string[] = [];
  if (kind === "accesspoint" && Array.isArray(v.interfaces))
    for (const f of v.interfaces as Record<string, unknown>[]) {
      if (Number.isSafeInteger(f?.id)) interfaces.push(f.id as number);
      if (Array.isArray(f?.addresses))
        for (const a of f.addresses as Record<string, unknown>[]) if (typeof a?.address === "string") addresses.push(a.address);
    }
  return {
    source,
    ids: {
      ...(kind === "link" && Number.isSafeInteger(v.id) ? { link: v.id as number } : {}),
      ...(kind === "accesspoint" && typeof v.main_ip === "string" ? { mainIp: v.main_ip } : {}),
      interfaces,
      addresses,
    },
  };
}

export function createValidator(): DumpValidator {
  const problems: Problem[] = [];
  const aps: SourcedAccesspoint[] = [];
  const links: SourcedLink[] = [];
  const rejected: Rejected[] = [];
  return {
    accept(record) {
      if (record.kind === "accesspoint") {
        const ap = check(accesspointSchema, "accesspoint", record.source, record.value, problems);
        if (ap) aps.push({ source: record.source, ap });
        else rejected.push(rejectedOf("accesspoint", record.source, record.value));
      } else {
        const link = check(linkSchema, "link", record.source, record.value, problems);
        if (link) links.push({ source: record.source, link });
        else rejected.push(rejectedOf("link", record.source, record.value));
      }
    },
    finish: (loaded) => crossCheck(loaded, aps, links, problems, rejected),
  };
}

interface SourcedAccesspoint {
  source: Source;
  ap: AccesspointRecord;
}

interface SourcedLink {
  source: Source;
  link: LinkRecord;
}

/** Adds the checks' errors and warnings to the list of problems. */
interface Report {
  error(source: Source, path: string, message: string): void;
  warning(kind: string, source: Source, path: string, message: string): void;
}

/** Which access point has each interface and which interfaces hold each address, read from the access points. */
interface AccesspointIndex {
  /** interface id → the main_ip of the first access point that has it */
  readonly ownerOfInterface: ReadonlyMap<number, string>;
  readonly holders: Groups<string, AddressHolder>;
}

/** An interface that holds an address, and where: the address is `$.interfaces[i].addresses[j]` of the record. */
interface AddressHolder {
  readonly ifaceId: number;
  readonly source: Source;
  readonly at: readonly [number, number];
}

/** Says why a link's endpoint may be missing: the refused or unreadable access point record that held it. */
interface Consequences {
  ofInterface(id: number): string;
  ofAddress(address: string): string;
}

/** The links whose two endpoints were found, and the links between each pair of access points. */
interface LinkIndex {
  readonly resolved: ResolvedLink[];
  readonly pairs: Groups<string, { id: number; source: Source }>;
}

/** The checks across records, once every record was checked against its schema. */
function crossCheck(
  loaded: LoadedDump,
  aps: SourcedAccesspoint[],
  links: SourcedLink[],
  problems: Problem[],
  rejected: readonly Rejected[] = [],
): Validation {
  problems.push(...loaded.problems);
  const report = reportInto(problems);
  const network = loaded.network ? check(networkSchema, "network", loaded.network.source, loaded.network.value, problems) : undefined;
  // Uniqueness keeps the first occurrence in file order: the checks below read the records in that order.
  aps.sort((a, b) => compareSources(a.source, b.source));
  links.sort((a, b) => compareSources(a.source, b.source));
  // The order of the steps is the order of problems with the same source and path (the sort below is stable).
  checkLinkIds(links, rejected, report);
  const index = indexAccesspoints(aps, report);
  const holderOfAddress = holderOfEachAddress(index.holders, report);
  const { resolved, pairs } = resolveLinks(links, index.ownerOfInterface, holderOfAddress, consequences(loaded, rejected), report);
  const linkOfPeers = linkOfEachPair(pairs, report);

  problems.sort((a, b) => compareSources(a.source, b.source) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  if (problems.some((p) => p.severity === "error")) return { problems };
  return { problems, dump: dumpOf(network, aps, resolved, holderOfAddress, linkOfPeers) };
}

function reportInto(problems: Problem[]): Report {
  return {
    error: (source, path, message) => problems.push({ severity: "error", source, path, message }),
    warning: (kind, source, path, message) => problems.push({ severity: "warning", kind, source, path, message }),
  };
}

/** Reports each later use of a key: the first occurrence (in the order of the calls) keeps the value. */
function uniqueness<K>(what: string, report: Report): (key: K | null, source: Source, path: string | (() => string)) => void {
  const seen = new Map<K, Source>();
  return (key, source, path) => {
    if (key === null) return;
    const first = seen.get(key);
    if (first)
      report.error(
        source,
        typeof path === "string" ? path : path(),
        `duplicate ${what} ${JSON.stringify(key)} (first used at ${formatSource(first)})`,
      );
    else seen.set(key, source);
  };
}

/** Link ids in file order, the refused records' too: a record with an error must not hide a duplicate. */
function checkLinkIds(links: readonly SourcedLink[], rejected: readonly Rejected[], report: Report): void {
  const linkId = uniqueness<number>("link id", report);
  const linkIds = [
    ...links.map(({ source, link }) => ({ source, id: link.id })),
    ...rejected.flatMap((r) => (r.ids.link === undefined ? [] : [{ source: r.source, id: r.ids.link }])),
  ].sort((a, b) => compareSources(a.source, b.source));
  for (const { source, id } of linkIds) linkId(id, source, "$.id");
}

/** Checks that main addresses, interface ids and address ids are unique, and finds who holds what. */
function indexAccesspoints(aps: readonly SourcedAccesspoint[], report: Report): AccesspointIndex {
  const mainIp = uniqueness<string>("main_ip", report);
  const mainIpv6 = uniqueness<string>("main_ipv6", report);
  const interfaceId = uniqueness<number>("interface id", report);
  const addressId = uniqueness<number>("address id", report);
  const ownerOfInterface = new Map<number, string>();
  const holders = new Groups<string, AddressHolder>();
  // The paths are written only for a problem: two million of them cost a tenth of a second at 40,000 access points.
  for (const { source, ap } of aps) {
    mainIp(ap.main_ip, source, "$.main_ip");
    mainIpv6(ap.main_ipv6, source, "$.main_ipv6");
    ap.interfaces.forEach((iface, i) => {
      interfaceId(iface.id, source, () => `$.interfaces[${i}].id`);
      if (!ownerOfInterface.has(iface.id)) ownerOfInterface.set(iface.id, ap.main_ip);
      iface.addresses.forEach((a, j) => {
        addressId(a.id, source, () => `$.interfaces[${i}].addresses[${j}].id`);
        holders.add(a.address, { ifaceId: iface.id, source, at: [i, j] });
      });
    });
  }
  return { ownerOfInterface, holders };
}

/** An address held by several interfaces belongs to the lowest interface id, with a warning. */
function holderOfEachAddress(holders: AccesspointIndex["holders"], report: Report): Map<string, number> {
  const holder = new Map<string, number>();
  for (const [address, list] of holders) {
    // nearly every address has one holder: the list of ids is made only for the warning
    let lowest = list[0].ifaceId;
    for (const h of list) lowest = Math.min(lowest, h.ifaceId);
    holder.set(address, lowest);
    if (list.some((h) => h.ifaceId !== lowest)) {
      const ids = [...new Set(list.map((h) => h.ifaceId))].sort((a, b) => a - b);
      const last = list[list.length - 1];
      report.warning(
        "shared address",
        last.source,
        `$.interfaces[${last.at[0]}].addresses[${last.at[1]}].address`,
        `address ${address} is held by interfaces ${ids.join(", ")}; lookups by this address use interface ${ids[0]}`,
      );
    }
  }
  return holder;
}

/**
 * What links may name of an access point record that was refused or could not be read: their errors
 * are its consequences, and say so.
 */
function consequences(loaded: LoadedDump, rejected: readonly Rejected[]): Consequences {
  const refusedInterface = new Map<number, Source>();
  const refusedAddress = new Map<string, Source>();
  for (const r of rejected) {
    for (const id of r.ids.interfaces) if (!refusedInterface.has(id)) refusedInterface.set(id, r.source);
    for (const a of r.ids.addresses) if (!refusedAddress.has(a)) refusedAddress.set(a, r.source);
  }
  const unreadable = loaded.problems.find((p) => p.source.file.startsWith("accesspoints/"))?.source;
  const consequence = (found: Source | undefined) =>
    found
      ? ` (a consequence of the error in the access point record at ${formatSource(found)})`
      : unreadable
        ? ` (perhaps a consequence of the unreadable access point record at ${formatSource(unreadable)})`
        : "";
  return {
    ofInterface: (id) => consequence(refusedInterface.get(id)),
    ofAddress: (address) => consequence(refusedAddress.get(address)),
  };
}

/** Each link's endpoints as interface ids; a link with an endpoint that names nothing is an error and left out. */
function resolveLinks(
  links: readonly SourcedLink[],
  ownerOfInterface: ReadonlyMap<number, string>,
  holderOfAddress: ReadonlyMap<string, number>,
  consequence: Consequences,
  report: Report,
): LinkIndex {
  const resolved: ResolvedLink[] = [];
  const pairs = new Groups<string, { id: number; source: Source }>();
  for (const { source, link } of links) {
    const endpoints: { interfaceId: number; quality: number }[] = [];
    link.endpoints.forEach((e, i) => {
      const id = e.interface ?? holderOfAddress.get(e.address!);
      if (id === undefined)
        report.error(
          source,
          `$.endpoints[${i}].address`,
          `no interface holds the address ${e.address}${consequence.ofAddress(e.address!)}`,
        );
      else if (!ownerOfInterface.has(id))
        report.error(source, `$.endpoints[${i}].interface`, `no interface has the id ${id}${consequence.ofInterface(id)}`);
      else endpoints.push({ interfaceId: id, quality: e.quality });
    });
    if (endpoints.length !== 2) continue;
    resolved.push({ id: link.id, timestamp: link.timestamp, endpoints });
    const [a, b] = endpoints.map((e) => ownerOfInterface.get(e.interfaceId)!);
    if (a !== b) pairs.add(peersKey(a, b), { id: link.id, source });
  }
  return { resolved, pairs };
}

/** Two access points joined by several links are joined, for the link-by-peers route, by the lowest link id, with a warning. */
function linkOfEachPair(pairs: LinkIndex["pairs"], report: Report): Map<string, number> {
  const linkOfPeers = new Map<string, number>();
  for (const [key, list] of pairs) {
    const ids = list.map((l) => l.id).sort((a, b) => a - b);
    linkOfPeers.set(key, ids[0]);
    if (list.length < 2) continue;
    const last = list[list.length - 1];
    report.warning(
      "shared link peers",
      last.source,
      "$",
      `links ${ids.join(", ")} all join ${key.replace(" ", " and ")}; the link by peers is link ${ids[0]}`,
    );
  }
  return linkOfPeers;
}

/** The checked dump: network.json's settings, access points by main_ip, links by id. */
function dumpOf(
  network: z.output<typeof networkSchema> | undefined,
  aps: readonly SourcedAccesspoint[],
  resolved: ResolvedLink[],
  holderOfAddress: ReadonlyMap<string, number>,
  linkOfPeers: ReadonlyMap<string, number>,
): Dump {
  const accesspoints = sortByIp(
    aps.map((a) => a.ap),
    (a) => a.main_ip,
  );
  resolved.sort((a, b) => a.id - b.id);
  return {
    name: network?.name ?? null,
    brand: network?.brand ?? null,
    defaultStatus: network?.default_status ?? null,
    communityName: network?.community_name ?? null,
    communityUrl: network?.community_url ?? null,
    takenAt: network?.taken_at ?? latestTimestamp(accesspoints, resolved),
    accesspoints,
    links: resolved,
    holderOfAddress,
    linkOfPeers,
  };
}

/** The key of a pair of access points, whichever way round a link joins them. */
export function peersKey(a: string, b: string): string {
  return compareIp(a, b) <= 0 ? `${a} ${b}` : `${b} ${a}`;
}

function latestTimestamp(aps: readonly AccesspointRecord[], links: readonly ResolvedLink[]): Instant | null {
  let latest: Instant | null = null;
  for (const t of [...aps.map((a) => a.lastseen_timestamp), ...links.map((l) => l.timestamp)]) {
    if (t && (!latest || t.micros > latest.micros)) latest = t;
  }
  return latest;
}

function check<S extends z.ZodType>(
  schema: S,
  kind: "accesspoint" | "link" | "network",
  source: Source,
  value: unknown,
  problems: Problem[],
): z.output<S> | undefined {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  for (const issue of result.error.issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        const hint = nearest(key, knownKeys(kind, issue.path));
        problems.push({
          severity: "error",
          source,
          path: jsonPath([...issue.path, key]),
          message: `unknown field ${JSON.stringify(key)}${hint ? `; did you mean ${JSON.stringify(hint)}?` : ""}`,
        });
      }
      continue;
    }
    problems.push({ severity: "error", source, path: jsonPath(issue.path), message: plainMessage(issue) });
  }
  return undefined;
}

function plainMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === "invalid_type") {
    const expected =
      issue.expected === "int"
        ? "an integer"
        : issue.expected === "object"
          ? "an object"
          : issue.expected === "array"
            ? "an array"
            : `a ${issue.expected}`;
    return issue.message.includes("received undefined")
      ? `missing required field (${expected})`
      : `expected ${expected}, ${issue.message.replace(/^.*received /, "got ")}`;
  }
  return issue.message.replace(/^Invalid input: /, "");
}
