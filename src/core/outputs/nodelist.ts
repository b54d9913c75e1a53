import { z } from "zod";
import { deferred, rendered, type EnclosedList } from "../body.ts";
import { statusOf, type AccesspointEntry, type Model } from "../model/model.ts";
import { firstSeenOf } from "./meshviewer.ts";
import { formatMicros } from "../values/timestamp.ts";
import { str } from "../model/render-json.ts";
import { outputRecord } from "./output.ts";

/**
 * `/freifunk/dynamic/nodelist.json`: the network as a Freifunk API nodelist (format 1.0.1, the
 * maintained schema of github ffansbach/nodelist, which yanic writes), what the Freifunk community
 * map and directory read; the
 * original deployment served it at this path from a cron job. Every access point is a node named by
 * its main_ip; `online` is the build's own status at `taken_at`. How it differs from the original's
 * generator, and why: docs/freifunk.md.
 */
export const NODELIST_VERSION = "1.0.1";
/** What every node is, as the original's generator called it. */
export const NODE_TYPE = "AccessPoint";

const Node = z.strictObject({
  id: z.string(),
  name: z.string(),
  node_type: z.literal(NODE_TYPE),
  status: z.strictObject({
    online: z.boolean(),
    firstcontact: z
      .string()
      .optional()
      .meta({ description: "when the network first saw it (the meshviewer file's firstseen); left out when it was never seen" }),
    lastcontact: z.string().optional().meta({ description: "the access point's lastseen_timestamp; left out when it was never seen" }),
  }),
  position: z.strictObject({ lat: z.number(), long: z.number() }).optional().meta({ description: "left out without a position" }),
});

/** The nodelist as this build writes it: a subset of the published schema (draft-03), which requires only `version`. */
const FreifunkNodelist = z.strictObject({
  version: z.literal(NODELIST_VERSION),
  updated_at: z.string().optional().meta({ description: "the dump's taken_at; left out when the dump has no time" }),
  community: z.strictObject({ href: z.string().optional(), name: z.string().optional() }).optional(),
  nodes: z.array(Node),
});

export const NODELIST = outputRecord({
  kind: "freifunk-nodelist",
  name: "Freifunk Nodelist",
  summary: "The network as a Freifunk API nodelist (format 1.0.1), for the Freifunk community map and directory",
  files: { freifunkNodelist: "/freifunk/dynamic/nodelist.json" },
  file: "freifunkNodelist",
  rootMember: "freifunk_nodelist",
  landing: "every access point as a Freifunk API nodelist (format 1.0.1), for the Freifunk community map and directory.",
  schema: { name: "FreifunkNodelist", zod: FreifunkNodelist },
  *bodies(model) {
    yield { file: "freifunkNodelist", body: deferred(() => nodelistBody(model)) };
  },
});

function nodelistBody(model: Model): EnclosedList {
  const { communityName, communityUrl } = model.settings;
  const community = [
    ...(communityUrl === null ? [] : [`"href":${str(communityUrl)}`]),
    ...(communityName === null ? [] : [`"name":${str(communityName)}`]),
  ];
  const head =
    `{"version":"${NODELIST_VERSION}",` +
    (model.takenAt === null ? "" : `"updated_at":"${model.takenAt.text}",`) +
    (community.length === 0 ? "" : `"community":{${community.join(",")}},`) +
    `"nodes":`;
  return { head, items: rendered(model.accesspoints, (ap) => node(ap, model)), tail: "}" };
}

function node(ap: AccesspointEntry, model: Model): string {
  const online = statusOf(ap.lastseen_timestamp, model.takenAt) === "online";
  const first = firstSeenOf(ap, model);
  const seen =
    (first === null ? "" : `,"firstcontact":"${formatMicros(first)}"`) +
    (ap.lastseen_timestamp === null ? "" : `,"lastcontact":"${ap.lastseen_timestamp.text}"`);
  const position = ap.positionText === null ? "" : `,"position":{"lat":${ap.positionText[1]},"long":${ap.positionText[0]}}`;
  return `{"id":${str(ap.main_ip)},"name":${str(ap.main_ip)},"node_type":"${NODE_TYPE}","status":{"online":${online}${seen}}${position}}`;
}
