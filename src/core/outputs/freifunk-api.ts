import { z } from "zod";
import {
  assertFreifunkApi,
  FREIFUNK_API_VERSION,
  freifunkApiDocument,
  type FreifunkApiInput,
  type FreifunkApiSettings,
} from "./freifunk-api-document.ts";
import { statusOf, type Model } from "../model/model.ts";
import { UsageError } from "../problems.ts";
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

const KIND = "freifunk-api";

/** Its settings among the site's (null: not asked for). */
export const freifunkApiSettings = (outputs: Readonly<Record<string, unknown>>): FreifunkApiSettings | null =>
  (outputs[KIND] as FreifunkApiSettings | undefined) ?? null;

/** What the file is made of: the model's settings, instant and online count. */
export function freifunkApiInput(model: Model): FreifunkApiInput | null {
  const settings = freifunkApiSettings(model.settings.outputs);
  if (settings === null) return null;
  return {
    settings,
    takenAt: model.takenAt?.text ?? null,
    online: model.accesspoints.filter((ap) => statusOf(ap.lastseen_timestamp, model.takenAt) === "online").length,
    nodelistPath: NODELIST.files.freifunkNodelist,
  };
}

export const FREIFUNK_API = outputRecord({
  kind: KIND,
  name: "Freifunk API File",
  summary:
    "The community's Freifunk API file (0.5.3) with its live node count, for the Freifunk directory; written with build --freifunk-api",
  files: { freifunkApi: "/freifunk/api.json" },
  file: "freifunkApi",
  rootMember: "freifunk_api",
  landing: "the community's Freifunk API file, with the number of access points online, for the Freifunk directory.",
  schema: { name: "FreifunkApi", zod: FreifunkApi },
  present: (model) => freifunkApiSettings(model.settings.outputs) !== null,
  options: [
    {
      flags: "--freifunk-api <file>",
      description:
        "write the community's Freifunk API file to /freifunk/api.json: your template (name, location, contact) with the live state and the nodelist",
      value: "json-file",
      recorded: (s) => (s as FreifunkApiSettings | null)?.source ?? null,
    },
    {
      flags: "--site-url <url>",
      description: "with --freifunk-api: the address this site is published at (its nodelist goes into nodeMaps)",
      value: "url",
      recorded: (s) => (s as FreifunkApiSettings | null)?.siteUrl ?? null,
    },
  ],
  settings(values): FreifunkApiSettings | null {
    const [template, siteUrl] = [values["--freifunk-api"], values["--site-url"]];
    if (template === undefined) {
      if (siteUrl !== undefined) throw new UsageError("--site-url is for the Freifunk API file: give --freifunk-api <template> too");
      return null;
    }
    if (typeof template !== "object") throw new UsageError("--freifunk-api takes a file");
    return { source: template.source, template: template.object, siteUrl: typeof siteUrl === "string" ? siteUrl : null };
  },
  // A template the build would refuse is refused before any work, with no access point online yet.
  assertSettings: (settings, at) =>
    assertFreifunkApi({
      settings: settings as FreifunkApiSettings,
      takenAt: at,
      online: 0,
      nodelistPath: NODELIST.files.freifunkNodelist,
    }),
  *bodies(model) {
    const input = freifunkApiInput(model);
    if (input) yield { file: "freifunkApi", body: JSON.stringify(freifunkApiDocument(input)) };
  },
});
