import { brandField } from "../settings.ts";
import { compareIp } from "../values/ip.ts";
import { statusOf, type AccesspointEntry, type Model, type Status } from "../model/model.ts";
import { pyFloat } from "../values/pyfloat.ts";
import { instant, list, str } from "../model/render-json.ts";
import { linkFacts } from "../model/resources.ts";
import type { ResolvedLink } from "../model/validator.ts";
import { bodyText, rendered, type EnclosedList } from "../body.ts";

/**
 * `/api/v1/netjson/networkgraph.json` (and one per status): the network as a NetJSON NetworkGraph,
 * what OpenWISP network topology, netdiff and netjsongraph.js read. The rules are in docs/api.md
 * ("NetJSON NetworkGraph"); in short: a node per access point, a link per API link with a finite
 * cost between two different access points of the graph, one link per pair of access points.
 */
export function networkGraph(model: Model, status?: Status): string {
  return bodyText(networkGraphBody(model, status));
}

/** The graph as the build writes it: nodes and links rendered as they are written, never the whole text at once. */
export function networkGraphBody(model: Model, status?: Status): EnclosedList {
  const nodes =
    status === undefined
      ? model.accesspoints
      : model.accesspoints.filter((ap) => statusOf(ap.lastseen_timestamp, model.takenAt) === status);
  const { links, leftOut } = graphLinks(model, nodes, status);
  const addresses = localAddresses(model);
  const properties =
    `"properties":{"taken_at":${instant(model.takenAt)},"status":${str(status ?? null)},` +
    `"links_left_out":{${Object.entries(leftOut)
      .map(([reason, n]) => `"${reason}":${n}`)
      .join(",")}}}}`;
  return {
    head: `{"type":"NetworkGraph","protocol":"olsr","version":"1","metric":"etx","nodes":`,
    items: rendered(nodes, (ap) => node(ap, addresses.get(ap.main_ip) ?? [], model)),
    tail: { head: ',"links":', items: rendered(links, (l) => linkJson(l, model)), tail: `,${properties}` },
  };
}

/** Why an API link of the graph's selection is not a NetJSON link; each counts once, under the first reason that applies. */
interface LeftOut {
  /** a status graph: the link has that status, one of its access points has another */
  endpoint_of_other_status: number;
  /** both endpoints on interfaces of one access point: a loop, which consumers refuse (OpenWISP) or cannot route over */
  same_access_point: number;
  /** quality 0, or so small that 1/quality overflows: an infinite ETX, which JSON cannot hold */
  infinite_cost: number;
  /** another link of the selection joins the same two access points at a lower cost, or the same cost and a lower id */
  parallel: number;
}

interface Kept {
  readonly link: ResolvedLink;
  readonly source: string;
  readonly target: string;
  readonly cost: number;
}

function graphLinks(model: Model, nodes: readonly AccesspointEntry[], status: Status | undefined): { links: Kept[]; leftOut: LeftOut } {
  const inGraph = new Set(nodes.map((ap) => ap.main_ip));
  const leftOut: LeftOut = { endpoint_of_other_status: 0, same_access_point: 0, infinite_cost: 0, parallel: 0 };
  const byPair = new Map<string, Kept>();
  for (const link of model.links) {
    if (status !== undefined && statusOf(link.timestamp, model.takenAt) !== status) continue;
    const facts = linkFacts(link, model);
    // The dump format holds exactly two endpoints a link (validation refuses others): one NetJSON link each.
    if (facts.entries.length !== 2) throw new Error(`link ${link.id} has ${facts.entries.length} endpoints, not 2`);
    const [source, target] = facts.entries.map((e) => e.ap.main_ip);
    if (!inGraph.has(source) || !inGraph.has(target)) {
      leftOut.endpoint_of_other_status++;
      continue;
    }
    if (source === target) {
      leftOut.same_access_point++;
      continue;
    }
    // The quality text round-trips to the very number the API writes, so cost is 1/quality of the
    // API's link exactly, and a reader can check it.
    const cost = 1 / Number(facts.quality);
    if (!Number.isFinite(cost)) {
      leftOut.infinite_cost++;
      continue;
    }
    const pair = source < target ? `${source} ${target}` : `${target} ${source}`;
    const held = byPair.get(pair);
    if (held !== undefined) {
      leftOut.parallel++;
      if (held.cost < cost || (held.cost === cost && held.link.id < link.id)) continue;
    }
    // No status among the properties: OpenWISP keeps its own up/down there.
    byPair.set(pair, { link, source, target, cost });
  }
  return { links: [...byPair.values()].sort((a, b) => a.link.id - b.link.id), leftOut };
}

/**
 * By main_ip: the addresses that the API resolves to one of the access point's interfaces
 * (`/interface/<ip>`) and that are no access point's main_ip. Consumers find a node by any of its
 * addresses, so no address may name two nodes: one several access points hold is listed only at the
 * access point the API answers with, and never when it is another one's main_ip (the public sample
 * has two such).
 */
function localAddresses(model: Model): Map<string, string[]> {
  const byAp = new Map<string, string[]>();
  for (const [address, iface] of model.interfaceByAddress) {
    if (isMainIp(model, address)) continue;
    const owner = iface.ap.main_ip;
    const held = byAp.get(owner);
    if (held) held.push(address);
    else byAp.set(owner, [address]);
  }
  for (const addresses of byAp.values()) addresses.sort(compareIp);
  return byAp;
}

function isMainIp(model: Model, address: string): boolean {
  return model.accesspointByIp.get(address)?.main_ip === address;
}

function linkJson({ link, source, target, cost }: Kept, model: Model): string {
  const facts = linkFacts(link, model);
  return (
    `{"source":${str(source)},"target":${str(target)},"cost":${pyFloat(cost)},` +
    `"properties":{"id":${link.id},"quality":${facts.quality},"is_wireless":${facts.wireless},` +
    `"wifi_ssid":${str(facts.ssid)},"timestamp":${instant(link.timestamp)}}}`
  );
}

function node(ap: AccesspointEntry, addresses: readonly string[], model: Model): string {
  // netjsongraph.js places a node on its map by properties.location; a node without one is left off the map only.
  const location = ap.positionText === null ? "" : `"location":{"lat":${ap.positionText[1]},"lng":${ap.positionText[0]}},`;
  return (
    `{"id":${str(ap.main_ip)},"label":${str(ap.main_ip)},` +
    (addresses.length > 0 ? `"local_addresses":${list(addresses.map((a) => str(a)))},` : "") +
    `"properties":{${location}"status":"${statusOf(ap.lastseen_timestamp, model.takenAt)}","main_ipv6":${str(ap.main_ipv6)},` +
    `"${brandField("mesh_version", model.settings.brand)}":${str(ap.mesh_version)},"site":${ap.site === null ? "null" : ap.site},"post_address":${str(ap.post_address)},` +
    `"lastseen_timestamp":${instant(ap.lastseen_timestamp)}}}`
  );
}
