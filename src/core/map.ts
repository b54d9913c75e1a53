import type { Model } from "./model.ts";

/** Where the map's background tiles come from (`build --tiles`, `--tiles-attribution`). */
export interface MapSettings {
  /** a Leaflet tile URL template, e.g. https://tile.openstreetmap.org/{z}/{x}/{y}.png */
  readonly tiles: string;
  /** HTML shown in the map's corner; the tile server's terms usually require it */
  readonly attribution: string;
}

export const DEFAULT_MAP_SETTINGS: MapSettings = {
  tiles: "https://tile.openstreetmap.org/{z}/{x}/{y}.png",
  attribution: '&copy; <a href="https://www.openstreetmap.org/copyright">OpenStreetMap</a> contributors',
};

/** `/map/index.html`: a static page that draws the network from the API's GeoJSON lists. */
export function mapPage(model: Model, settings: MapSettings): string {
  void model;
  void settings;
  return "<!DOCTYPE html>\n<title>Map</title>\n";
}

/** `/map/map.js`: the page's own script (Leaflet is copied beside it). */
export function mapScript(): string {
  return "";
}
