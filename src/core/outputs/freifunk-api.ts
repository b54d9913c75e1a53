import { z } from "zod";
import { FREIFUNK_API_VERSION, freifunkApiDocument, type FreifunkApiInput } from "../freifunk-api.ts";
import { statusOf, type Model } from "../model.ts";
import { outputRecord } from "./output.ts";
import { NODELIST } from "./nodelist.ts";

/**
 * `/freifunk/api.json`: the community's Freifunk API file (freifunk-api.ts), with `build --freifunk-api
 * <template>`: the operator's template with the live state. Register its address in the Freifunk
 * directory (docs/freifunk.md).
 */
const FreifunkApi = z
  .looseObject({
    api: z.literal(FREIFUNK_API_VERSION),
    state: z.looseObject({
      nodes: z.number().int().meta({ description: "the access points online at taken_at" }),
      lastchange: z.string().meta({ description: "the dump's taken_at" }),
    }),
    nodeMaps: z.array(z.looseObject({})),
  })
  .meta({ description: "the operator's template (name, location, contact, …) with the live state; Freifunk API 0.5.3" });

/** What the file is made of: the model's settings, instant and online count. */
export function freifunkApiInput(model: Model): FreifunkApiInput | null {
  const settings = model.settings.freifunkApi;
  if (settings === null) return null;
  return {
    settings,
    takenAt: model.takenAt?.text ?? null,
    online: model.accesspoints.filter((ap) => statusOf(ap.lastseen_timestamp, model.takenAt) === "online").length,
    nodelistPath: NODELIST.files.freifunkNodelist,
  };
}

export const FREIFUNK_API = outputRecord({
  kind: "freifunk-api",
  name: "Freifunk API File",
  summary:
    "The community's Freifunk API file (0.5.3) with its live node count, for the Freifunk directory; written with build --freifunk-api",
  files: { freifunkApi: "/freifunk/api.json" },
  file: "freifunkApi",
  rootMember: "freifunk_api",
  landing: "the community's Freifunk API file, with the number of access points online, for the Freifunk directory.",
  schema: { name: "FreifunkApi", zod: FreifunkApi },
  present: (model) => model.settings.freifunkApi !== null,
  *bodies(model) {
    const input = freifunkApiInput(model);
    if (input) yield { file: "freifunkApi", body: JSON.stringify(freifunkApiDocument(input)) };
  },
});
