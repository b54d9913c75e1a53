import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { OutputFile } from "../../core/plan.ts";
import { fileFor } from "../../core/routes.ts";

/** assets/map/map.js: two folders up from src/io/ and from lib/io/ alike. */
export const MAP_SCRIPT = new URL("../../../assets/map/map.js", import.meta.url);

/**
 * The map page's static files, copied into every build beside the page (src/core/documents/map.ts): Leaflet's
 * script, stylesheet, images and licence, and the page's own script. The map loads nothing from a
 * CDN. Leaflet is resolved through the package system, so the compiled package (lib/io/) finds the
 * leaflet it depends on as the sources (src/io/) do. Read when the build asks, in a fixed order
 * (images by name), so builds stay byte-identical.
 */
export function* mapAssets(): Generator<OutputFile> {
  const leaflet = path.dirname(createRequire(import.meta.url).resolve("leaflet/package.json"));
  const dist = path.join(leaflet, "dist");
  for (const asset of ["leaflet.js", "leaflet.css"])
    yield { path: fileFor("leaflet", { asset }), body: readFileSync(path.join(dist, asset)) };
  // Its BSD licence asks for the notice and conditions beside copies like this one.
  yield { path: fileFor("leaflet", { asset: "LICENSE" }), body: readFileSync(path.join(leaflet, "LICENSE")) };
  for (const image of readdirSync(path.join(dist, "images")).sort())
    if (image.endsWith(".png")) yield { path: fileFor("leafletImage", { image }), body: readFileSync(path.join(dist, "images", image)) };
  yield { path: fileFor("mapScript"), body: readFileSync(MAP_SCRIPT) };
}
