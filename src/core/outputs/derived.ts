import { OUTPUTS, type OutputRouteKind, type WithFile } from "./index.ts";
import type { OutputBase, OutputRoute } from "./output.ts";

/** What the route table, the OpenAPI document and the pages read of the registry (index.ts), derived once. */

/** The records with a URL of their own, in the registry's order. */
export const OUTPUT_RECORDS = OUTPUTS.filter((o): o is WithFile => "file" in o);

/** Every output's further routes, with the output's files, in the registry's order. */
export const OUTPUT_ROUTES: readonly (OutputRoute<OutputRouteKind> & { readonly template: string })[] = OUTPUTS.flatMap((o) =>
  ((o as OutputBase).routes ?? []).map((r) => ({
    ...r,
    kind: r.kind as OutputRouteKind,
    template: (o.files as Record<string, string>)[r.file],
  })),
);
