import { FREIFUNK_API } from "./freifunk-api.ts";
import { HISTORY } from "./timeline.ts";
import { METRICS } from "./prometheus.ts";
import { MESHVIEWER } from "./meshviewer.ts";
import { NETJSON } from "./netjson.ts";
import { NODELIST } from "./nodelist.ts";

/**
 * Every output record (output.ts), in the order the API root, the landing page, the route table and
 * the plan list them. A new output is one line here.
 */
export const OUTPUTS = [NETJSON, NODELIST, MESHVIEWER, FREIFUNK_API, HISTORY, METRICS] as const;

type Output = (typeof OUTPUTS)[number];
/** The records with a URL of their own (output.ts OutputRecord), whose kind is a route kind. */
export type WithFile = Extract<Output, { readonly file: string }>;
export type OutputKind = WithFile["kind"];
/** The kinds of the outputs' further routes (output.ts OutputRoute). */
export type OutputRouteKind = NonNullable<Output["routes"]>[number]["kind"];
/** The names of their response schemas (response-schemas.ts, the OpenAPI document's components). */
export type OutputSchemaName = WithFile["schema"]["name"] | keyof NonNullable<Output["schemas"]>;

type Union<T> = (T extends unknown ? (x: T) => void : never) extends (x: infer I) => void ? I : never;
/** The file templates of every record, by name (routes.ts FILES). */
export type OutputFiles = Union<(typeof OUTPUTS)[number]["files"]>;

export type { OutputRecord } from "./output.ts";
