import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import { FREIFUNK_API_SCHEMA, FREIFUNK_API_VERSION } from "./freifunk-api-schema.ts";
import { UsageError } from "../problems.ts";

export { FREIFUNK_API_SCHEMA, FREIFUNK_API_VERSION } from "./freifunk-api-schema.ts";

/**
 * The Freifunk API file of a community (github freifunk/api.freifunk.net, `specs/0.5.3.json`): who
 * the community is (the operator's template: name, location, contact) and its live state, which the
 * directory (api.freifunk.net) and freifunk-karte.de read: `state.nodes`, `state.lastchange` and a
 * `nodeMaps` entry for the nodelist. The original published one per city, its node count fixed in its
 * configuration; the build writes it from the data (docs/freifunk.md).
 */

export interface FreifunkApiSettings {
  /** where the template came from, for messages */
  readonly source: string;
  /** the operator's file: the community's name, location, contact (everything but the live state) */
  readonly template: Readonly<Record<string, unknown>>;
  /** where the site is published: the nodelist's address in `nodeMaps` (null: the template names it) */
  readonly siteUrl: string | null;
}

export interface FreifunkApiInput {
  readonly settings: FreifunkApiSettings;
  /** the data's instant (taken_at) */
  readonly takenAt: string | null;
  /** the access points online at that instant */
  readonly online: number;
  /** the nodelist's path on the site */
  readonly nodelistPath: string;
}

/** The file as written: the template with the live state, and the nodelist among its maps. */
export function freifunkApiDocument(input: FreifunkApiInput): Record<string, unknown> {
  const { template, siteUrl } = input.settings;
  const maps = Array.isArray(template.nodeMaps) ? (template.nodeMaps as unknown[]) : [];
  const isNodelist = (m: unknown) => (m as { technicalType?: unknown } | null)?.technicalType === "nodelist";
  const interval = (maps.find(isNodelist) as { interval?: unknown } | undefined)?.interval;
  const nodeMaps =
    siteUrl === null
      ? maps
      : [
          ...maps.filter((m) => !isNodelist(m)),
          {
            url: new URL(input.nodelistPath, siteUrl).href,
            ...(interval === undefined ? {} : { interval }),
            technicalType: "nodelist",
            mapType: "list/status",
          },
        ];
  const state = (template.state ?? {}) as Record<string, unknown>;
  return {
    api: FREIFUNK_API_VERSION,
    ...template,
    state: { ...state, nodes: input.online, ...(input.takenAt === null ? {} : { lastchange: input.takenAt }) },
    nodeMaps,
  };
}

let validator: ReturnType<Ajv["compile"]> | undefined;

/** What is wrong with the file against the published schema, each with its JSON path; empty when nothing is. */
export function freifunkApiProblems(input: FreifunkApiInput): string[] {
  const problems: string[] = [];
  const { template } = input.settings;
  if (template.api !== undefined && template.api !== FREIFUNK_API_VERSION)
    problems.push(
      `$.api: ${JSON.stringify(template.api)}, but the build writes and checks version ${FREIFUNK_API_VERSION}; set it to "${FREIFUNK_API_VERSION}" or leave it out`,
    );
  if (input.takenAt === null) problems.push("$.state.lastchange: the dump has no taken_at, the instant the file's state is of");
  const doc = freifunkApiDocument(input);
  if (!(doc.nodeMaps as unknown[]).some((m) => (m as { technicalType?: unknown } | null)?.technicalType === "nodelist"))
    problems.push('$.nodeMaps: no entry with "technicalType": "nodelist"; give --site-url <the site\'s address>, or add the entry');
  if (problems.length > 0) return problems;
  if (!validator) {
    const ajv = new Ajv({ allErrors: true, strict: true });
    addFormats.default(ajv);
    validator = ajv.compile(FREIFUNK_API_SCHEMA);
  }
  if (!validator(doc))
    for (const e of validator.errors ?? []) {
      const where =
        "$" +
        e.instancePath.replace(/\/([^/]*)/g, (_, key: string) =>
          /^\d+$/.test(key) ? `[${key}]` : `.${key.replace(/~1/g, "/").replace(/~0/g, "~")}`,
        );
      const extra = e.keyword === "additionalProperties" ? ` (${(e.params as { additionalProperty: string }).additionalProperty})` : "";
      problems.push(`${where}: ${e.message}${extra}`);
    }
  return problems;
}

/** Refuses, before any work, a template whose file would not fit the schema. */
export function assertFreifunkApi(input: FreifunkApiInput): void {
  const problems = freifunkApiProblems(input);
  if (problems.length > 0)
    throw new UsageError(
      `--freifunk-api ${input.settings.source}: the file it makes does not fit the Freifunk API ${FREIFUNK_API_VERSION} schema:\n` +
        problems.map((p) => `  ${p}`).join("\n"),
    );
}
