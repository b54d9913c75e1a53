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
  lastseen: boolean;
}

export interface Link {
  readonly id: number;
  readonly ends: [Iface, Iface];
  readonly quality: [number, number];
}

/** The network as the original's database holds it while the sources are applied. */
export class OpennetModel {
  readonly aps = new Map<string, Ap>();
  readonly ifaces: Iface[] = [];
  readonly links: Link[] = [];
  private nextIface = 1;
  private nextAddress = 1;
  private nextLink = 1;

  ap(mainIp: string): Ap {
    let ap = this.aps.get(mainIp);
    if (ap === undefined) {
      ap = { main_ip: mainIp, fields: {}, lastseen: false };
      this.aps.set(mainIp, ap);
    }
    return ap;
  }

  newIface(ap: Ap): Iface {
    const iface: Iface = { id: this.nextIface++, ap, if_name: null, if_hwaddress: null, addresses: [], wifi: null, deleted: false };
    this.ifaces.push(iface);
    return iface;
  }

  addAddress(iface: Iface, address: string, prefix: number): Address {
    const a = { id: this.nextAddress++, address, prefix };
    iface.addresses.push(a);
    return a;
  }

  /** Live interfaces holding the address, lowest id first. */
  holding(address: string, ap?: Ap): Iface[] {
    return this.ifaces.filter((f) => !f.deleted && (ap === undefined || f.ap === ap) && f.addresses.some((a) => a.address === address));
  }

  /** The interface holding the address, else a new access point (or the existing one) with a new /16 interface. */
  ifaceFor(address: string): Iface {
    const found = this.holding(address)[0];
    if (found) return found;
    const iface = this.newIface(this.ap(address));
    this.addAddress(iface, address, OLSR_PREFIXLEN);
    return iface;
  }

  link(a: Iface, b: Iface, qa: number, qb: number): void {
    let link = this.links.find((l) => (l.ends[0] === a && l.ends[1] === b) || (l.ends[0] === b && l.ends[1] === a));
    if (link === undefined) {
      link = { id: this.nextLink++, ends: [a, b], quality: [0, 0] };
      this.links.push(link);
    }
    // each end takes its own quality, whichever order the link was made in
    if (link.ends[0] === a) link.quality[0] = qa;
    else link.quality[1] = qa;
    if (link.ends[1] === b) link.quality[1] = qb;
    else link.quality[0] = qb;
  }

  deleteIface(iface: Iface): void {
    iface.deleted = true;
    for (let i = this.links.length - 1; i >= 0; i--) if (this.links[i].ends.includes(iface)) this.links.splice(i, 1);
  }
}
