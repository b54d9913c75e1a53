import type { z } from "zod";
import type { Body } from "../body.ts";
import type { Model } from "../model.ts";

/**
 * One output of a build that is not a resource of the API: a file (or a file per status) with one
 * record that everything else reads. The route table (routes.ts) takes its kind, name, files and URL
 * forms; the plan its bodies; the OpenAPI document its summary and response schema; the API root and
 * the landing page its link; the preview, every host, `check` and snapshots follow from the route
 * table. Adding an output is a file in this folder exporting one record, and its line in `index.ts`.
 */
export interface OutputRecord<Kind extends string = string, Name extends string = string, Schema extends string = string> {
  /** the route kind (routes.ts RouteKind): OpenAPI's operation ids and tags, check's rows */
  readonly kind: Kind;
  /** the route's name in its answer to OPTIONS */
  readonly name: string;
  /** the OpenAPI operation's summary */
  readonly summary: string;
  /** the files it writes, as templates of the route table (routes.ts FILES; `:status` filled by the plan) */
  readonly files: Readonly<Record<Name, string>>;
  /** the file whose path is the URL (no slash: a file name), answered whatever the query says but `status` */
  readonly file: Name;
  /** the file answering `?status=<status>`, when the output has one per status; `all` and empty answer `file` */
  readonly byStatus?: Name;
  /** its member in the API root (`/api/v1/`), whose value is the URL */
  readonly rootMember: string;
  /** the landing page's words after the link: HTML, no data in it */
  readonly landing: string;
  /** the response body's schema, named in the OpenAPI document's components */
  readonly schema: { readonly name: Schema; readonly zod: z.ZodType };
  /**
   * whether this build writes it, for an output the operator asks for (the Freifunk API file): the API
   * root and the landing page name it only then; the route table always routes it (a 404 without it)
   */
  present?(model: Model): boolean;
  /** its bodies, from the model: written as they come, each list rendered as it is written (body.ts) */
  bodies(model: Model): Iterable<{ readonly file: Name; readonly values?: Readonly<Record<string, string>>; readonly body: Body }>;
}

/** A record, with its kind and file names kept as literal types (routes.ts derives RouteKind and FILES from them). */
export const outputRecord = <Kind extends string, Name extends string, Schema extends string>(
  record: OutputRecord<Kind, Name, Schema>,
): OutputRecord<Kind, Name, Schema> => record;
