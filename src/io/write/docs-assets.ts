import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { SWAGGER_UI_ASSETS } from "../../core/documents/docs.ts";
import type { OutputFile } from "../../core/plan.ts";
import { fileFor } from "../../core/routes.ts";

/** assets/docs/docs.js: two folders up from src/io/ and from lib/io/ alike. */
export const DOCS_SCRIPT = new URL("../../../assets/docs/docs.js", import.meta.url);

/**
 * The API reference's static files, copied into every build beside its page (src/core/documents/docs.ts):
 * Swagger UI's browser bundle and stylesheet with its licence, its notice and the bundle's
 * third-party licences (Apache-2.0 asks for the licence and NOTICE with copies), and the page's own
 * script; nothing from a CDN. Resolved through the package system like Leaflet (io/write/map-assets.ts),
 * read in a fixed order so builds stay byte-identical.
 */
export function* docsAssets(): Generator<OutputFile> {
  const dist = path.dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
  for (const asset of SWAGGER_UI_ASSETS) yield { path: fileFor("swaggerUi", { asset }), body: readFileSync(path.join(dist, asset)) };
  yield { path: fileFor("docsScript"), body: readFileSync(DOCS_SCRIPT) };
}
