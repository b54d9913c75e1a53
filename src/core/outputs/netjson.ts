import { z } from "zod";
import { API } from "../base.ts";
import { STATUSES } from "../model/model.ts";
import { deferred } from "../body.ts";
import { networkGraphBody } from "./netjson-graph.ts";
import { outputRecord } from "./output.ts";

/** NetJSON NetworkGraph members a graph module may fill as it likes. */
const freeObject = z.record(z.string(), z.unknown());

/**
 * NetJSON NetworkGraph (netjson.org, draft 1), generically: the spec's members and no others. The
 * graph module may fill `properties` as it likes; everything else is the spec's.
 */
export const NetworkGraph = z.strictObject({
  type: z.literal("NetworkGraph"),
  protocol: z.string(),
  version: z.string(),
  revision: z.string().optional(),
  metric: z.string().nullable(),
  router_id: z.string().optional(),
  topology_id: z.string().optional(),
  label: z.string().optional(),
  nodes: z.array(
    z.strictObject({
      id: z.string(),
      label: z.string().optional(),
      local_addresses: z.array(z.string()).optional(),
      properties: freeObject.optional(),
    }),
  ),
  links: z.array(
    z.strictObject({
      source: z.string(),
      target: z.string(),
      cost: z.number(),
      cost_text: z.string().optional(),
      properties: freeObject.optional(),
    }),
  ),
  properties: freeObject.optional(),
});

/** The network as a NetJSON NetworkGraph (netjson.ts), all of it and by status. */
export const NETJSON = outputRecord({
  kind: "netjson",
  name: "NetJSON Network Graph",
  summary: "The network as a NetJSON NetworkGraph",
  files: {
    netjson: `${API}/netjson/networkgraph.json`,
    netjsonByStatus: `${API}/netjson/_q/status/:status/networkgraph.json`,
  },
  file: "netjson",
  byStatus: "netjsonByStatus",
  rootMember: "netjson",
  landing: "the network as a NetJSON NetworkGraph (OpenWISP, netdiff, netjsongraph.js); <code>?status=online</code> for one status.",
  schema: { name: "NetworkGraph", zod: NetworkGraph },
  *bodies(model) {
    yield { file: "netjson", body: deferred(() => networkGraphBody(model)) };
    for (const status of STATUSES)
      yield { file: "netjsonByStatus", values: { status }, body: deferred(() => networkGraphBody(model, status)) };
  },
});
