import { OUTPUTS } from "../outputs/index.ts";
import type { OutputBase, Places } from "../outputs/output.ts";
import { fileFor, type FileName } from "./files.ts";
import { urlFor } from "./requests.ts";
import type { RouteKind } from "./responses.ts";

/** The route table's names for the places of the site, as the output records ask for them (outputs/output.ts Places). */
export const PLACES: Places = {
  file: (name, values) => fileFor(name as FileName, values),
  url: (kind, values) => urlFor(kind as RouteKind, values),
};

/** The outputs' further members of the API root (after every record's own), with the URL or path each names. */
export const OUTPUT_ROOT_LINKS: readonly { readonly member: string; readonly url: string; readonly description?: string }[] =
  OUTPUTS.flatMap((o) =>
    ((o as OutputBase).rootLinks ?? []).map((l) => ({
      member: l.member,
      url: l.route !== undefined ? urlFor(l.route as RouteKind) : fileFor(l.file as FileName),
      ...(l.description !== undefined && { description: l.description }),
    })),
  );
