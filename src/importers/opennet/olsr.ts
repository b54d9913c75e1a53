import { canonicalIp } from "../../core/ip.ts";
import { located } from "./error.ts";
import { type Ap, type Iface, OLSR_PREFIXLEN, type OpennetModel } from "./model.ts";

/** The first source in the original's order, OLSR txtinfo (`/all`): it makes the access points, interfaces and links. */

const OLSR_COLUMNS = { links: 6, topology: 5, mid: 2, hna: 2 } as const;
type OlsrTable = keyof typeof OLSR_COLUMNS;

interface Row {
  readonly line: number;
  readonly cells: string[];
}

/** The tables of a txtinfo text, each row with its line number; checks the tables the import reads. */
export function parseTxtinfo(text: string, file = "olsr.txt"): Record<OlsrTable, Row[]> {
  const tables: Partial<Record<OlsrTable, Row[]>> = {};
  const names = Object.keys(OLSR_COLUMNS) as OlsrTable[];
  const lines = text.split(/\r?\n/);
  let current: string | undefined;
  let header = false;
  lines.forEach((raw, i) => {
    const line = i + 1;
    if (header) {
      header = false;
      if (raw.trim() === "") throw located(file, line, `the table ${current} has no header line`);
      return;
    }
    if (raw.trim() === "") {
      current = undefined;
      return;
    }
    if (current === undefined) {
      const m = /^Table:\s*(\S.*?)\s*$/.exec(raw);
      if (!m)
        throw located(file, line, `expected a "Table: <name>" line, got ${JSON.stringify(raw.slice(0, 60))}; is this OLSR txtinfo output?`);
      current = m[1];
      const name = names.find((n) => n.toUpperCase() === current!.toUpperCase());
      if (name) tables[name] = [];
      header = true;
      return;
    }
    const name = names.find((n) => n.toUpperCase() === current!.toUpperCase());
    if (name === undefined) return;
    const cells = raw.trim().split(/\s+/);
    if (cells.length !== OLSR_COLUMNS[name])
      throw located(
        file,
        line,
        `a row of the table ${current} has ${cells.length} columns, expected ${OLSR_COLUMNS[name]}; is the file cut short?`,
      );
    tables[name]!.push({ line, cells });
  });
  for (const name of ["topology", "links"] as const) {
    if (tables[name] === undefined)
      throw located(file, undefined, `no table ${name === "links" ? "Links" : "Topology"}; is this OLSR txtinfo output (/all)?`);
  }
  return { links: tables.links!, topology: tables.topology!, mid: tables.mid ?? [], hna: tables.hna ?? [] };
}

function ipv4(file: string, row: Row, text: string): string {
  const ip = canonicalIp(text);
  if (ip?.family !== "inet") throw located(file, row.line, `not an IPv4 address: ${JSON.stringify(text)}`);
  return ip.address;
}

function quality(file: string, row: Row, text: string): number {
  const q = Number(text.replace("INFINITE", "Infinity"));
  if (!Number.isFinite(q) || q < 0 || q > 1) throw located(file, row.line, `not a link quality between 0 and 1: ${JSON.stringify(text)}`);
  return q;
}

/** Applies the txtinfo tables as the original does: MID and HNA first, then Topology and Links. */
export function applyOlsr(model: OpennetModel, text: string, file = "olsr.txt"): void {
  const t = parseTxtinfo(text, file);
  // HNA entries for single hosts in the mesh's private ranges count as further addresses of the gateway
  const mid: { row: Row; main: string; aliases: string[] }[] = t.mid.map((row) => ({
    row,
    main: ipv4(file, row, row.cells[0]),
    aliases: row.cells[1].split(";").map((a) => ipv4(file, row, a)),
  }));
  for (const row of t.hna) {
    const [hna, source] = row.cells;
    if (hna.endsWith("/32") && (hna.startsWith("192.168.") || hna.startsWith("10."))) {
      mid.push({ row, main: ipv4(file, row, source), aliases: [ipv4(file, row, hna.slice(0, -3))] });
    }
  }
  for (const { main, aliases } of mid) {
    let found: Iface | undefined;
    for (const iface of model.holding(main)) {
      if (iface.ap.main_ip !== main) model.deleteIface(iface);
      else found = iface;
    }
    let ap: Ap;
    if (found === undefined) {
      ap = model.ap(main);
      model.addAddress(model.newIface(ap), main, OLSR_PREFIXLEN);
    } else {
      ap = found.ap;
    }
    for (const alias of aliases) {
      if (model.holding(alias, ap).length === 0) model.addAddress(model.newIface(ap), alias, OLSR_PREFIXLEN);
    }
  }
  // Topology rows: destination, last hop, LQ, NLQ, cost; Links rows: local, remote, hysteresis, LQ, NLQ, cost
  const rows = [
    ...t.topology.map((row) => ({ row, dest: row.cells[0], hop: row.cells[1], lq: row.cells[2], nlq: row.cells[3] })),
    ...t.links.map((row) => ({ row, dest: row.cells[0], hop: row.cells[1], lq: row.cells[3], nlq: row.cells[4] })),
  ];
  for (const { row, dest, hop, lq, nlq } of rows) {
    const qualities = [quality(file, row, lq), quality(file, row, nlq)] as const;
    const hopIface = model.ifaceFor(ipv4(file, row, hop));
    const destIface = model.ifaceFor(ipv4(file, row, dest));
    model.link(hopIface, destIface, qualities[0], qualities[1]);
    hopIface.ap.lastseen = true;
    destIface.ap.lastseen = true;
  }
}
