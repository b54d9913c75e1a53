import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { OutputFile } from "../core/plan.ts";
import { fileFor } from "../core/routes.ts";

/**
 * Leaflet's files, copied into every build beside the map page: the map loads nothing from a CDN.
 * Resolved through the package system, so the compiled package finds the leaflet it depends on.
 * Read when the build asks, in a fixed order (images by name), so builds stay byte-identical.
 */
export function* mapAssets(): Generator<OutputFile> {
  const dist = path.join(path.dirname(createRequire(import.meta.url).resolve("leaflet/package.json")), "dist");
  for (const asset of ["leaflet.js", "leaflet.css"])
    yield { path: fileFor("leaflet", { asset }), body: readFileSync(path.join(dist, asset)) };
  for (const image of readdirSync(path.join(dist, "images")).sort())
    if (image.endsWith(".png")) yield { path: fileFor("leafletImage", { image }), body: readFileSync(path.join(dist, "images", image)) };
}
