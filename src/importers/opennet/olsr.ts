import { canonicalIp } from "../../core/values/ip.ts";
import { located } from "./error.ts";
import { type Ap, type Iface, OLSR_PREFIXLEN, type OpennetModel } from "./opennet-model.ts";

/** The first source in the original's order, OLSR txtinfo (`/all`): it makes the access points, interfaces and links. */

const OLSR_COLUMNS = { links: 6, topology: 5, mid: 2, hna: 2 } as const;
type OlsrTable = keyof typeof OLSR_COLUMNS;

/**
 * The tables of olsrd's txtinfo `/all`, in the order it writes them, each closed by a blank line (the
 * original's sample, and the recorded live sequence). A file cut short at a line boundary has every
 * row whole, so only a missing table, or a last table without its blank line, shows the cut.
 */
export const TXTINFO_TABLES = ["Links", "Neighbors", "Topology", "HNA", "MID", "Routes"] as const;
type TxtinfoTable = (typeof TXTINFO_TABLES)[number];

/** What the import loses without a table it reads (Links and Topology are not optional: see checkComplete). */
const WITHOUT: Partial<Record<TxtinfoTable, string>> = {
  HNA: "the single addresses gateways announce (HNA) are not added to them",
  MID: "the access points' further addresses (MID) are not updated",
};

interface Row {
  readonly line: number;
  readonly cells: string[];
}

export interface Txtinfo extends Record<OlsrTable, Row[]> {
  /** the tables' names as the file writes them, in its order */
  readonly tables: readonly string[];
  /** what the import should say about a file that lacks tables it reads or looks cut short */
  readonly notes: readonly string[];
}

const joined = (names: readonly string[], last = "and") =>
  names.length < 2 ? names.join("") : `${names.slice(0, -1).join(", ")} ${last} ${names.at(-1)}`;

/** The tables of a txtinfo text, each row with its line number; checks the tables the import reads. */
export function parseTxtinfo(text: string, file = "olsr.txt"): Txtinfo {
  const tables: Partial<Record<OlsrTable, Row[]>> = {};
  const names = Object.keys(OLSR_COLUMNS) as OlsrTable[];
  // the newline that ends the last line starts no line of its own: a blank line is an empty line before it
  const lines = text.replace(/\r?\n$/, "").split(/\r?\n/);
  const seen: string[] = [];
  let current: string | undefined;
  let header = false;
  let closed = true;
  lines.forEach((raw, i) => {
    const line = i + 1;
    if (header) {
      header = false;
      if (raw.trim() === "") throw located(file, line, `the table ${current} has no header line`);
      return;
    }
    if (raw.trim() === "") {
      if (current !== undefined) closed = true;
      current = undefined;
      return;
    }
    if (current === undefined) {
      const m = /^Table:\s*(\S.*?)\s*$/.exec(raw);
      if (!m)
        throw located(file, line, `expected a "Table: <name>" line, got ${JSON.stringify(raw.slice(0, 60))}; is this OLSR txtinfo output?`);
      current = m[1];
      seen.push(current);
      closed = false;
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
  const notes = checkComplete(file, seen, closed, lines.length);
  return { links: tables.links!, topology: tables.topology!, mid: tables.mid ?? [], hna: tables.hna ?? [], tables: seen, notes };
}

/**
 * Refuses a text without its Links or Topology table, or that ends inside Topology, and notes what
 * else is missing. A file cut before the end of Topology holds only some of the mesh's links: an
 * import without memory would make a dump of part of the network, and one with memory would stamp
 * only those as seen, so that the rest turned flapping within 30 minutes while it is up. Refused, the
 * run fails with the file named, the state stays as it was and the next run reads the source anew.
 * Past Topology the links are whole; the note names what the missing tables would have added.
 */
function checkComplete(file: string, seen: readonly string[], closed: boolean, lastLine: number): string[] {
  const order = (name: string) => TXTINFO_TABLES.findIndex((t) => t.toUpperCase() === name.toUpperCase());
  const present = new Set(seen.map(order));
  const missing = TXTINFO_TABLES.filter((_, i) => !present.has(i));
  const all = `olsrd's txtinfo /all has the tables ${joined([...TXTINFO_TABLES])}`;
  if (seen.length === 0) throw located(file, undefined, `no table in it (${all}); is this OLSR txtinfo output (/all)?`);
  const last = seen.at(-1)!;
  // The file stops where /all goes on: its last table is one of /all's, and a later one is missing.
  const stops = !closed || (order(last) >= 0 && missing.some((t) => order(t) > order(last)));
  const ending = closed ? `the file ends after the ${last} table` : `the file ends inside the ${last} table (no blank line closes it)`;
  for (const needed of ["Links", "Topology"] as const) {
    if (!missing.includes(needed)) continue;
    if (!stops) throw located(file, undefined, `no table ${needed}; is this OLSR txtinfo output (/all)?`);
    throw located(
      file,
      lastLine,
      `no table ${needed}: ${ending}, so it is cut short (${all}); not imported: the mesh's links are in Topology`,
    );
  }
  if (!closed && order(last) === order("Topology"))
    throw located(file, lastLine, `${ending}, so it is cut short (${all}); not imported: the links in Topology are not whole`);
  // tables the import reads, and, in a file that stops early, the tables after its end
  const named = missing.filter((t) => WITHOUT[t] !== undefined || (stops && order(t) > order(last)));
  if (named.length === 0 && !stops) return [];
  const lost = [
    ...(!closed && WITHOUT[TXTINFO_TABLES[order(last)]] !== undefined ? [`the ${last} table may lack its last rows`] : []),
    ...named.flatMap((t) => WITHOUT[t] ?? []),
  ];
  return [
    [
      `${file}: ${named.length > 0 ? `no table ${joined(named, "or")}` : ""}`,
      stops ? `${named.length > 0 ? "; " : ""}${ending}: it may be cut short (${all})` : "",
      `; ${lost.length > 0 ? lost.join("; ") : "the tables the import reads are whole"}`,
    ].join(""),
  ];
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

/**
 * Applies the txtinfo tables as the original does: MID and HNA first, then Topology and Links. Returns
 * the notes for the user (parseTxtinfo's: tables missing).
 */
export function applyOlsr(model: OpennetModel, text: string, file = "olsr.txt"): string[] {
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
  return [...t.notes];
}
