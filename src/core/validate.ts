import type { DefaultStatus } from "./settings.ts";
import type { z } from "zod";
import type { LoadedDump, RawRecord } from "./input.ts";
import { compareSources, formatSource, jsonPath, type Problem, type Source } from "./problems.ts";
import { accesspointSchema, knownKeys, linkSchema, networkSchema, type AccesspointRecord, type LinkRecord } from "./schema.ts";
import { Groups } from "./collections.ts";
import { nearest } from "./text.ts";
import { compareIp, sortByIp } from "./ip.ts";
import type { Instant } from "./timestamp.ts";

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
  const aps: { source: Source; ap: AccesspointRecord }[] = [];
  const links: { source: Source; link: LinkRecord }[] = [];
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

function crossCheck(
  loaded: LoadedDump,
  aps: { source: Source; ap: AccesspointRecord }[],
  links: { source: Source; link: LinkRecord }[],
  problems: Problem[],
  rejected: readonly Rejected[] = [],
): Validation {
  problems.push(...loaded.problems);
  const error = (source: Source, path: string, message: string) => problems.push({ severity: "error", source, path, message });
  const warning = (kind: string, source: Source, path: string, message: string) =>
    problems.push({ severity: "warning", kind, source, path, message });

  let network: z.output<typeof networkSchema> | undefined;
  if (loaded.network) network = check(networkSchema, "network", loaded.network.source, loaded.network.value, problems);

  aps.sort((a, b) => compareSources(a.source, b.source));
  links.sort((a, b) => compareSources(a.source, b.source));

  // Uniqueness: the first occurrence in file order keeps the value, later ones are errors.
  const unique = <K>(what: string) => {
    const seen = new Map<K, Source>();
    return (key: K | null, source: Source, path: string) => {
      if (key === null) return;
      const first = seen.get(key);
      if (first) error(source, path, `duplicate ${what} ${JSON.stringify(key)} (first used at ${formatSource(first)})`);
      else seen.set(key, source);
    };
  };
  const mainIp = unique<string>("main_ip");
  const mainIpv6 = unique<string>("main_ipv6");
  const interfaceId = unique<number>("interface id");
  const addressId = unique<number>("address id");
  const linkId = unique<number>("link id");

  // Link ids in file order, the refused records' too: a record with an error must not hide a duplicate.
  const linkIds = [
    ...links.map(({ source, link }) => ({ source, id: link.id })),
    ...rejected.flatMap((r) => (r.ids.link === undefined ? [] : [{ source: r.source, id: r.ids.link }])),
  ].sort((a, b) => compareSources(a.source, b.source));
  for (const { source, id } of linkIds) linkId(id, source, "$.id");
  // What links may name of an access point record that was refused or could not be read: their
  // errors are its consequences, and say so.
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

  const ownerOfInterface = new Map<number, string>();
  const holders = new Groups<string, { ifaceId: number; source: Source; path: string }>();
  for (const { source, ap } of aps) {
    mainIp(ap.main_ip, source, "$.main_ip");
    mainIpv6(ap.main_ipv6, source, "$.main_ipv6");
    ap.interfaces.forEach((iface, i) => {
      interfaceId(iface.id, source, `$.interfaces[${i}].id`);
      if (!ownerOfInterface.has(iface.id)) ownerOfInterface.set(iface.id, ap.main_ip);
      iface.addresses.forEach((a, j) => {
        addressId(a.id, source, `$.interfaces[${i}].addresses[${j}].id`);
        holders.add(a.address, { ifaceId: iface.id, source, path: `$.interfaces[${i}].addresses[${j}].address` });
      });
    });
  }
  for (const [address, list] of holders) {
    const ids = [...new Set(list.map((h) => h.ifaceId))].sort((a, b) => a - b);
    if (ids.length > 1) {
      const last = list[list.length - 1];
      warning(
        "shared address",
        last.source,
        last.path,
        `address ${address} is held by interfaces ${ids.join(", ")}; lookups by this address use interface ${ids[0]}`,
      );
    }
  }
  const holderOfAddress = new Map([...holders].map(([address, list]) => [address, Math.min(...list.map((h) => h.ifaceId))]));
  const holderOf = (address: string) => holderOfAddress.get(address);

  const resolved: ResolvedLink[] = [];
  const pairs = new Groups<string, { id: number; source: Source }>();
  for (const { source, link } of links) {
    const endpoints: { interfaceId: number; quality: number }[] = [];
    link.endpoints.forEach((e, i) => {
      const id = e.interface ?? holderOf(e.address!);
      if (id === undefined)
        error(
          source,
          `$.endpoints[${i}].address`,
          `no interface holds the address ${e.address}${consequence(refusedAddress.get(e.address!))}`,
        );
      else if (!ownerOfInterface.has(id))
        error(source, `$.endpoints[${i}].interface`, `no interface has the id ${id}${consequence(refusedInterface.get(id))}`);
      else endpoints.push({ interfaceId: id, quality: e.quality });
    });
    if (endpoints.length !== 2) continue;
    resolved.push({ id: link.id, timestamp: link.timestamp, endpoints });
    const [a, b] = endpoints.map((e) => ownerOfInterface.get(e.interfaceId)!);
    if (a !== b) {
      const key = peersKey(a, b);
      pairs.add(key, { id: link.id, source });
    }
  }
  const linkOfPeers = new Map<string, number>();
  for (const [key, list] of pairs) {
    const ids = list.map((l) => l.id).sort((a, b) => a - b);
    linkOfPeers.set(key, ids[0]);
    if (list.length < 2) continue;
    const last = list[list.length - 1];
    warning(
      "shared link peers",
      last.source,
      "$",
      `links ${ids.join(", ")} all join ${key.replace(" ", " and ")}; the link by peers is link ${ids[0]}`,
    );
  }

  problems.sort((a, b) => compareSources(a.source, b.source) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  if (problems.some((p) => p.severity === "error")) return { problems };

  const accesspoints = sortByIp(
    aps.map((a) => a.ap),
    (a) => a.main_ip,
  );
  resolved.sort((a, b) => a.id - b.id);
  return {
    problems,
    dump: {
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
    },
  };
}

/** The key of a pair of access points, whichever way round a link joins them. */
export function peersKey(a: string, b: string): string {
  return [a, b].sort(compareIp).join(" ");
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
