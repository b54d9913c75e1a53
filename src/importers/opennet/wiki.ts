import { Parser } from "htmlparser2";
import { canonicalIp } from "../../core/values/ip.ts";
import { parseFloatPy } from "./convert.ts";
import { located } from "./error.ts";
import type { OpennetModel } from "./opennet-model.ts";

/** The second source, the wiki's node table: what people wrote about their nodes (address, owner, antenna, position). */

const NODE_COLUMNS = ["main_ip", "lastseen", "post_address", "antenna", "device", "owner", "notes", "latlon"] as const;

export interface WikiNode {
  readonly main_ip: string;
  readonly post_address: string | null;
  readonly antenna: string | null;
  readonly device: string | null;
  readonly owner: string | null;
  readonly notes: string | null;
  readonly latlon: string | null;
}

/** The rows of every table of the page, each a list of cell texts (the text pieces of a cell, trimmed, joined by spaces). */
function tableRows(html: string): string[][] {
  const rows: string[][] = [];
  let row: string[] | undefined;
  let cell: string[] | undefined;
  let text = "";
  const flush = () => {
    const piece = text.trim();
    if (cell !== undefined && piece !== "") cell.push(piece);
    text = "";
  };
  const parser = new Parser(
    {
      onopentag(name) {
        flush();
        if (name === "tr") row = [];
        else if (name === "td") cell = [];
      },
      ontext(data) {
        text += data;
      },
      onclosetag(name) {
        flush();
        if (name === "td" && row !== undefined && cell !== undefined) {
          const joined = cell.join(" ").trim().replace(/\n+$/, "");
          row.push(joined.replaceAll(" , ", ", ").replaceAll("( ", "(").replaceAll(" )", ")"));
          cell = undefined;
        } else if (name === "tr" && row !== undefined) {
          rows.push(row);
          row = undefined;
        }
      },
    },
    { decodeEntities: true },
  );
  parser.write(html);
  parser.end();
  return rows;
}

/**
 * The node rows of the wiki page: rows of 8 cells (the access point table), without free slots and rows
 * with nothing but a name. The server table (7 cells) is not read: the original's sample import reads only
 * the access point table.
 */
export function parseWikiNodes(html: string, file = "wiki_nodes.html"): WikiNode[] {
  const rows = tableRows(html);
  const nodes: WikiNode[] = [];
  for (const cells of rows) {
    if (cells.length !== NODE_COLUMNS.length) continue;
    const c = Object.fromEntries(NODE_COLUMNS.map((k, i) => [k, cells[i]])) as Record<(typeof NODE_COLUMNS)[number], string>;
    if (c.post_address.toLowerCase() === "frei") continue;
    if (!NODE_COLUMNS.slice(2).some((k) => c[k].trim() !== "")) continue;
    nodes.push({
      main_ip: c.main_ip,
      post_address: c.post_address,
      antenna: c.antenna,
      device: c.device,
      owner: c.owner,
      notes: c.notes,
      latlon: c.latlon,
    });
  }
  if (nodes.length === 0)
    throw located(
      file,
      undefined,
      "no node table (a table of 8 columns: Nr., zuletzt gesehen, Standort, Antenne, Typ, Eigentümer, Kommentar, Position) on the page; is this the wiki's Opennet_Nodes page?",
    );
  return nodes;
}

/** A wiki node name (`AP1.89`, `AP89`, `AP2-5`) or address as an IPv4 address. */
export function parseNodeIp(text: string): string | undefined {
  if (text.toUpperCase().startsWith("AP")) {
    const parts = text.slice(2).replace(/[-_.]/g, " ").trim().split(/\s+/);
    if (!parts.every((p) => /^[+-]?\d+$/.test(p))) return undefined;
    const octets = parts.map(Number);
    if (octets.length === 1) octets.unshift(1);
    if (octets.length !== 2) return undefined;
    return canonicalIp(`192.168.${octets[0]}.${octets[1]}`)?.address;
  }
  const single = /^(.*)\/32$/.exec(text);
  const ip = canonicalIp(single ? single[1] : text);
  return ip?.family === "inet" ? ip.address : undefined;
}

export function applyWiki(model: OpennetModel, html: string, file = "wiki_nodes.html"): string[] {
  const notes: string[] = [];
  for (const node of parseWikiNodes(html, file)) {
    const candidates = node.main_ip.split(/\s+/).filter((c) => c !== "");
    const ips = candidates.map((c) => {
      const ip = parseNodeIp(c);
      if (ip === undefined) throw located(file, undefined, `the node ${JSON.stringify(node.main_ip)} is neither an address nor an AP name`);
      return ip;
    });
    if (ips.length === 0) throw located(file, undefined, `a node row without a node name (${JSON.stringify(node.post_address)})`);
    const ap = model.ap(ips.find((ip) => model.aps.has(ip)) ?? ips[0]);
    ap.fields.post_address = node.post_address;
    ap.fields.antenna = node.antenna;
    ap.fields.device_model = node.device;
    ap.fields.owner = node.owner;
    if (node.latlon) {
      const parts = node.latlon.trim().split(/\s+/);
      const lat = parts.length === 2 ? parseFloatPy(parts[0].replaceAll("N", "+").replaceAll("S", "-")) : undefined;
      const lon = parts.length === 2 ? parseFloatPy(parts[1].replaceAll("E", "+").replaceAll("W", "-")) : undefined;
      if (lat === undefined || lon === undefined)
        notes.push(`${file}: the position of ${ap.main_ip} is not understood: ${JSON.stringify(node.latlon)}`);
      else if (lat && lon) ap.fields.position = { type: "Point", coordinates: [lon, lat] };
    }
  }
  return notes;
}
