import { ACCESSPOINT_FIELDS } from "../../core/model/fields.ts";

/** The prefix length the original gives the addresses it learns from OLSR. */
export const OLSR_PREFIXLEN = 16;

export interface Address {
  readonly id: number;
  readonly address: string;
  readonly prefix: number;
}

export interface Iface {
  readonly id: number;
  readonly ap: Ap;
  if_name: string | null;
  if_hwaddress: string | null;
  addresses: Address[];
  wifi: Record<string, unknown> | null;
  deleted: boolean;
}

export interface Ap {
  readonly main_ip: string;
  readonly fields: Record<string, unknown>;
  /** seen in this import's OLSR data: its lastseen_timestamp becomes the import's instant */
  lastseen: boolean;
  /** lastseen_timestamp of the previous state, kept when this import does not see it */
  lastseenBefore: string | null;
  /** the site of the previous state (or of this import's site update) */
  site: number | null;
  /** first_seen of the previous state (schema.ts) */
  firstSeen: string | null;
}

export interface Link {
  readonly id: number;
  readonly ends: [Iface, Iface];
  readonly quality: [number, number];
  /** in this import's OLSR data: its timestamp becomes the import's instant */
  seen: boolean;
  /** timestamp of the previous state, kept when this import does not see it */
  timestampBefore: string | null;
  deleted: boolean;
}

/**
 * The highest id each kind of record was ever given. The original's database never gives an id twice
 * (a deleted interface's or dissolved site's id stays used), so the state carries these beside its
 * records: the greatest id still present can be lower.
 */
export interface LastIds {
  interface: number;
  address: number;
  link: number;
  site: number;
}

/**
 * An access point's fields, every one absent (undefined) until a source sets it. Made with all their
 * names at once, each access point's copy keeps V8's compact object layout (about 0.4 KB); given its
 * 44 names one by one, it became a hash table (about 3 KB: 110 MB at 40,000 access points).
 */
const NO_FIELDS: Readonly<Record<string, unknown>> = Object.fromEntries(
  ["main_ipv6", ...ACCESSPOINT_FIELDS.map(([name]) => name)].map((name) => [name, undefined]),
);

/**
 * The network as the original's database holds it while the sources are applied: either empty, or the
 * state of a previous import (previous.ts) that this import updates in place.
 */
export class OpennetModel {
  readonly aps = new Map<string, Ap>();
  /** in id order */
  readonly ifaces: Iface[] = [];
  /** in id order */
  readonly links: Link[] = [];
  readonly lastIds: LastIds = { interface: 0, address: 0, link: 0, site: 0 };
  /** live interfaces by each address they hold, in id order: the lookups OLSR makes for every row */
  private readonly byAddress = new Map<string, Iface[]>();
  /** links by the ids of their two interfaces, smaller first */
  private readonly byEnds = new Map<string, Link>();
  private readonly linksOf = new Map<Iface, Link[]>();

  ap(mainIp: string): Ap {
    let ap = this.aps.get(mainIp);
    if (ap === undefined) {
      ap = { main_ip: mainIp, fields: { ...NO_FIELDS }, lastseen: false, lastseenBefore: null, site: null, firstSeen: null };
      this.aps.set(mainIp, ap);
    }
    return ap;
  }

  newIface(ap: Ap): Iface {
    return this.restoreIface(ap, ++this.lastIds.interface, {});
  }

  /** An interface of the previous state, with its id. */
  restoreIface(ap: Ap, id: number, values: Partial<Pick<Iface, "if_name" | "if_hwaddress" | "wifi">>): Iface {
    const iface: Iface = {
      id,
      ap,
      if_name: values.if_name ?? null,
      if_hwaddress: values.if_hwaddress ?? null,
      addresses: [],
      wifi: values.wifi ?? null,
      deleted: false,
    };
    this.ifaces.push(iface);
    this.lastIds.interface = Math.max(this.lastIds.interface, id);
    return iface;
  }

  addAddress(iface: Iface, address: string, prefix: number, id = ++this.lastIds.address): Address {
    const a = { id, address, prefix };
    this.lastIds.address = Math.max(this.lastIds.address, id);
    iface.addresses.push(a);
    this.index(iface, address);
    return a;
  }

  /** Sets an interface's addresses (ondataservice reports them whole); new ones get ids in their order. */
  setAddresses(iface: Iface, kept: readonly Address[], fresh: readonly { address: string; prefix: number }[]): void {
    for (const a of iface.addresses) this.unindex(iface, a.address);
    iface.addresses = [];
    for (const a of kept) this.addAddress(iface, a.address, a.prefix, a.id);
    for (const a of fresh) this.addAddress(iface, a.address, a.prefix);
  }

  private index(iface: Iface, address: string): void {
    if (iface.deleted) return;
    const list = this.byAddress.get(address);
    if (list === undefined) this.byAddress.set(address, [iface]);
    else if (!list.includes(iface)) {
      list.push(iface);
      list.sort((x, y) => x.id - y.id);
    }
  }

  private unindex(iface: Iface, address: string): void {
    const list = this.byAddress.get(address);
    if (list === undefined) return;
    const rest = list.filter((f) => f !== iface);
    if (rest.length === 0) this.byAddress.delete(address);
    else this.byAddress.set(address, rest);
  }

  /** Live interfaces holding the address, lowest id first. */
  holding(address: string, ap?: Ap): Iface[] {
    const list = this.byAddress.get(address) ?? [];
    return ap === undefined ? [...list] : list.filter((f) => f.ap === ap);
  }

  /** The interface holding the address, else a new access point (or the existing one) with a new /16 interface. */
  ifaceFor(address: string): Iface {
    const found = this.holding(address)[0];
    if (found) return found;
    const iface = this.newIface(this.ap(address));
    this.addAddress(iface, address, OLSR_PREFIXLEN);
    return iface;
  }

  private static endsKey(a: Iface, b: Iface): string {
    return a.id < b.id ? `${a.id} ${b.id}` : `${b.id} ${a.id}`;
  }

  /** A link of the previous state, with its id, qualities and timestamp. */
  restoreLink(id: number, ends: [Iface, Iface], quality: [number, number], timestamp: string | null): Link {
    const link: Link = { id, ends, quality, seen: false, timestampBefore: timestamp, deleted: false };
    this.links.push(link);
    this.lastIds.link = Math.max(this.lastIds.link, id);
    const key = OpennetModel.endsKey(ends[0], ends[1]);
    // two links between the same interfaces (a hand-made state): OLSR updates the lower id, as the original's first()
    if (!this.byEnds.has(key)) this.byEnds.set(key, link);
    for (const end of new Set(ends)) {
      const list = this.linksOf.get(end);
      if (list === undefined) this.linksOf.set(end, [link]);
      else list.push(link);
    }
    return link;
  }

  /** The link between the two interfaces (made when new) takes each end's quality and counts as seen. */
  link(a: Iface, b: Iface, qa: number, qb: number): void {
    let link = this.byEnds.get(OpennetModel.endsKey(a, b));
    if (link === undefined) link = this.restoreLink(++this.lastIds.link, [a, b], [0, 0], null);
    // each end takes its own quality, whichever order the link was made in
    if (link.ends[0] === a) link.quality[0] = qa;
    else link.quality[1] = qa;
    if (link.ends[1] === b) link.quality[1] = qb;
    else link.quality[0] = qb;
    link.seen = true;
  }

  /**
   * Deletes an interface, and with it its links. (The original keeps a link whose endpoint row went
   * with the interface, a link with one end; a dump's link has two, so the link goes too.)
   */
  deleteIface(iface: Iface): void {
    iface.deleted = true;
    for (const a of iface.addresses) this.unindex(iface, a.address);
    for (const link of this.linksOf.get(iface) ?? []) {
      if (link.deleted) continue;
      link.deleted = true;
      const key = OpennetModel.endsKey(link.ends[0], link.ends[1]);
      if (this.byEnds.get(key) === link) this.byEnds.delete(key);
    }
  }

  liveLinks(): Link[] {
    return this.links.filter((l) => !l.deleted);
  }
}
