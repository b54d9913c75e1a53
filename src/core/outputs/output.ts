import type { z } from "zod";
import type { Body } from "../body.ts";
import type { Model } from "../model/model.ts";

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
  /** its value in the output's settings, as the cycle records and compares it (null: not given); without it, a run may change it */
  recorded?(settings: unknown): string | null;
}

/** A value as the command line read it: a json-file's path and object, a url, a count. */
export type OptionValue = string | number | { readonly source: string; readonly object: Record<string, unknown> };

/**
 * What an output may read of what came before this build, for the state it carries (io/read/earlier.ts):
 * the build this one replaces (the one served, for a cycle) and the dump being built.
 */
export interface Earlier {
  /** a file of the build being replaced, by its path in the build; undefined when absent, or without one */
  buildText(file: string): Promise<string | undefined>;
  /** a file of the build being replaced, read when it is written (never held with the others); undefined when absent */
  buildBody(file: string): Body | undefined;
  /** a file of the dump, by its path in the dump; undefined when absent (another error of the machine's passes) */
  dumpText(file: string): Promise<string | undefined>;
}

/**
 * A route of an output beside the one its `file` names: a folder URL of the API (`/api/v1/changes/`),
 * answered by one of its files whatever the query says (as a detail: `status=all` or empty, nothing
 * else precomputed), under the API's prefix or beside an access point's detail.
 */
export interface OutputRoute<Kind extends string = string, Name extends string = string> {
  /** the route kind (routes.ts RouteKind) */
  readonly kind: Kind;
  /** its name in the answer to OPTIONS */
  readonly name: string;
  /** the OpenAPI operation's summary */
  readonly summary: string;
  /** the body's schema: a name among the OpenAPI components (the record's `schemas`, or one of the API's) */
  readonly body: string;
  /** its path form after the API's prefix (`changes/`, `netjson/history/:day/`), or with `beside` after an access point's detail (`changes/`) */
  readonly path: string;
  readonly beside?: "accesspoint";
  /** the file answering it */
  readonly file: Name;
  /** the landing page's row for it, saying what it answers (none: no row) */
  readonly about?: string;
}

/** The way to name the site's places, which the plan gives the records (a record does not import the route table, which reads the records). */
export interface Places {
  /** a file's path, by its name in the route table (routes.ts fileFor) */
  file(name: string, values?: Readonly<Record<string, string>>): string;
  /** a route's URL, by its kind (routes.ts urlFor) */
  url(kind: string, values?: Readonly<Record<string, string>>): string;
}

/** A body of an output at one of its files. */
export interface OutputBody<Name extends string = string> {
  readonly file: Name;
  readonly values?: Readonly<Record<string, string>>;
  readonly body: Body;
}

/**
 * What every output declares: its files and bodies, the routes and schemas it adds to the API, what
 * it adds to the commands (options, settings), and the state it carries. An output with one URL of
 * its own is an OutputRecord (below); a group of several answers (the history) is an OutputGroup.
 */
export interface OutputBase<Kind extends string = string, Name extends string = string, RouteKind extends string = string> {
  /** the output's name among the records: its settings' and carried state's key */
  readonly kind: Kind;
  /** the files it writes, as templates of the route table (routes.ts FILES; placeholders filled by the plan) */
  readonly files: Readonly<Record<Name, string>>;
  /** its routes beside its own file's: folder URLs of the API, each answered by one of its files */
  readonly routes?: readonly OutputRoute<RouteKind, Name>[];
  /** further schemas its answers have, among the OpenAPI components (before the records' own schemas) */
  readonly schemas?: Readonly<Record<string, z.ZodType>>;
  /** what its routes' placeholders beyond the API's mean (`:day`), for OpenAPI */
  readonly pathParameters?: Readonly<Record<string, { readonly description: string; readonly schema: Record<string, unknown> }>>;
  /** its files served as the site's (not with the API's headers: feeds, pages), outside the API */
  readonly siteFiles?: readonly Name[];
  /** the Content-Type of a site file whose name says none (routes/files.ts TYPED_FILES) */
  readonly types?: Partial<Readonly<Record<Name, string>>>;
  /** further members of the API root, after every record's own: the route or file each names */
  readonly rootLinks?: readonly {
    readonly member: string;
    readonly route?: RouteKind;
    readonly file?: Name;
    readonly description?: string;
  }[];
  /** further lines of the landing page's list, after every record's own: HTML made with the site's places */
  landingLinks?(places: Places): readonly string[];
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
  carry?(earlier: Earlier, settings: unknown): Promise<unknown>;
  /** its bodies, from the model: written as they come, each list rendered as it is written (body.ts) */
  bodies(model: Model, places: Places): Iterable<OutputBody<Name>>;
}

/**
 * One output of a build that is not a resource of the API: a file (or a file per status) with one
 * record that everything else reads. The route table (routes.ts) takes its kind, name, files and URL
 * forms; the plan its bodies; the OpenAPI document its summary and response schema; the API root and
 * the landing page its link; the preview, every host, `check` and snapshots follow from the route
 * table. Adding an output is a file in this folder exporting one record, and its line in `index.ts`.
 */
export interface OutputRecord<
  Kind extends string = string,
  Name extends string = string,
  Schema extends string = string,
  RouteKind extends string = never,
> extends OutputBase<Kind, Name, RouteKind> {
  /** the route's name in its answer to OPTIONS */
  readonly name: string;
  /** the OpenAPI operation's summary */
  readonly summary: string;
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
}

/** An output of several answers and no URL of its own (the history): its routes, files and links are all it has. */
export type OutputGroup<Kind extends string = string, Name extends string = string, RouteKind extends string = string> = OutputBase<
  Kind,
  Name,
  RouteKind
>;

/** A record, with its kind and file names kept as literal types (routes.ts derives RouteKind and FILES from them). */
export const outputRecord = <Kind extends string, Name extends string, Schema extends string, RouteKind extends string = never>(
  record: OutputRecord<Kind, Name, Schema, RouteKind>,
): OutputRecord<Kind, Name, Schema, RouteKind> => record;

/** A group, with its kind, file names and route kinds kept as literal types. */
export const outputGroup = <Kind extends string, Name extends string, RouteKind extends string>(
  group: OutputGroup<Kind, Name, RouteKind>,
): OutputGroup<Kind, Name, RouteKind> => group;
