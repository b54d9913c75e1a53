/**
 * The part of Leaflet 1.9 (the global `L` of leaflet.js) that map.js uses, so `tsc -p assets/map`
 * can check the script without a types package. test/map.test.ts checks the real thing in a browser.
 */
declare namespace L {
  type LatLng = [lat: number, lng: number];

  interface Layer {
    addTo(map: Map): this;
    /** content made when the popup opens; an element is inserted as it is, never parsed as HTML */
    bindPopup(content: () => HTMLElement): this;
    on(event: string, handler: (event: unknown) => void): this;
  }

  interface Map {
    on(event: string, handler: (event: unknown) => void): this;
    getZoom(): number;
    getCenter(): { lat: number; lng: number };
    setView(center: LatLng, zoom: number): this;
    fitBounds(bounds: LatLngBounds, options?: { padding?: [number, number]; maxZoom?: number }): this;
  }

  interface LatLngBounds {
    contains(latlng: LatLng): boolean;
  }

  interface PathOptions {
    color?: string;
    weight?: number;
    opacity?: number;
    fillColor?: string;
    fillOpacity?: number;
    /** added to the SVG element's class */
    className?: string;
  }

  function map(id: string): Map;
  function tileLayer(urlTemplate: string, options?: { attribution?: string; maxZoom?: number }): Layer;
  function polyline(latlngs: LatLng[], options?: PathOptions): Layer;
  function circleMarker(latlng: LatLng, options?: PathOptions & { radius?: number }): Layer;
  function latLngBounds(latlngs: LatLng[]): LatLngBounds;
}
