import type { z } from "zod";
import type { Body } from "../body.ts";
import type { Model } from "../model.ts";

/**
 * An option an output adds to `build` and `cycle`, as data: the command line makes commander's option
 * of it and reads its value (cli/options.ts siteOptions), the cycle records it among its settings.
 */
export interface OutputOption {
  /** the long flag and its value as commander spells them: "--freifunk-api <file>" */
  readonly flags: string;
  readonly description: string;
  /** how the value is read: a JSON object from a file (read before any work), an http(s) address, a whole number from 1 */
  readonly value: "json-file" | "url" | "count";
  /** its value in the output's settings, as the cycle records and compares it (null: not given) */
  recorded(settings: unknown): string | null;
}

/** A value as the command line read it: a json-file's path and object, a url, a count. */
export type OptionValue = string | number | { readonly source: string; readonly object: Record<string, unknown> };

/**
 * What an output may read of what came before this build, for the state it carries (io/earlier.ts):
 * the build this one replaces (the one served, for a cycle) and the dump being built.
 */
export interface Earlier {
  /** a file of the build being replaced, by its path in the build; undefined when absent, or without one */
  buildText(file: string): Promise<string | undefined>;
  /** a file of the dump, by its path in the dump; undefined when absent */
  dumpText(file: string): Promise<string | undefined>;
}

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
  /** options it adds to `build` and `cycle` (both read one group: cli/options.ts siteOptions) */
  readonly options?: readonly OutputOption[];
  /**
   * its settings from its options' values (by long flag, undefined when not given), or null when it is
   * not asked for; kept in the site settings' `outputs` under its kind. A combination that makes no
   * sense is a UsageError naming the options.
   */
  settings?(values: Readonly<Record<string, OptionValue | undefined>>): unknown;
  /** its settings checked before any work, at the data's instant (or the cycle's, before its state is touched) */
  assertSettings?(settings: unknown, at: string | null): void;
  /** the state it carries from the build it replaces or the dump (as the original's database kept it); in the model's `carried` */
  carry?(earlier: Earlier): Promise<unknown>;
  /** its bodies, from the model: written as they come, each list rendered as it is written (body.ts) */
  bodies(model: Model): Iterable<{ readonly file: Name; readonly values?: Readonly<Record<string, string>>; readonly body: Body }>;
}

/** A record, with its kind and file names kept as literal types (routes.ts derives RouteKind and FILES from them). */
export const outputRecord = <Kind extends string, Name extends string, Schema extends string>(
  record: OutputRecord<Kind, Name, Schema>,
): OutputRecord<Kind, Name, Schema> => record;
