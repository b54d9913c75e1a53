// @ts-check
// The map page's script (/map/map.js, copied into every build by src/io/map-assets.ts). It reads its
// settings from the page (src/core/map.ts, mapConfig), loads the API's GeoJSON lists and draws them
// with Leaflet. Every string of the data is untrusted: it only ever becomes a text node.
"use strict";

(function () {
  /** @typedef {readonly [api: string, file: string]} Source */
  /**
   * @typedef {object} MapConfig
   * @property {string} tiles
   * @property {string} attribution
   * @property {{ status: string, color: string, source: Source }[]} statuses
   * @property {Source} links
   * @property {{ min: number, label: string, color: string }[]} quality
   * @property {string} accesspointDetail
   * @property {string} linkDetail
   * @property {string} [versionField]
   */
  /** @typedef {{ geometry: unknown, properties: Record<string, unknown> }} Feature */

  const statusLine = /** @type {HTMLElement} */ (document.getElementById("map-status"));
  const tilesLine = /** @type {HTMLElement} */ (document.getElementById("map-tiles"));
  const config = /** @type {MapConfig} */ (
    JSON.parse(/** @type {HTMLElement} */ (document.getElementById("map-config")).textContent || "")
  );

  /** What the page shows when it is done; `data-map` on <html> lets tests and scripts wait for it. */
  function finish(/** @type {"ready" | "empty" | "error"} */ state, /** @type {string} */ message) {
    statusLine.textContent = message;
    statusLine.classList.toggle("problem", state === "error");
    document.documentElement.dataset.map = state;
  }

  const map = L.map("map");
  const tiles = L.tileLayer(config.tiles, { attribution: config.attribution, maxZoom: 19 });
  // Tiles are a background only: without them the network is still drawn, and the page says why it looks bare.
  let tilesLoaded = 0;
  let tilesFailed = 0;
  tiles.on("tileload", () => tilesLoaded++);
  tiles.on("tileerror", () => {
    tilesFailed++;
    if (tilesLoaded > 0) return;
    tilesLine.hidden = false;
    tilesLine.textContent = `The background map could not be loaded (${counted(tilesFailed, "tile")} failed); the network is drawn without it.`;
  });
  tiles.addTo(map);

  /**
   * The first source that answers with a FeatureCollection: the API's URL, else the file behind it
   * (hosts that do not route query strings answer the URL with another list or a 404).
   * @param {Source} source
   * @returns {Promise<Feature[]>}
   */
  async function load(source) {
    const failures = [];
    for (const url of source) {
      try {
        const response = await fetch(url, { headers: { Accept: "application/json" } });
        if (!response.ok) {
          failures.push(`${url}: HTTP ${response.status}`);
          continue;
        }
        const body = await response.json();
        if (body && body.type === "FeatureCollection" && Array.isArray(body.features)) return body.features.filter(isFeature);
        failures.push(`${url}: not a GeoJSON FeatureCollection`);
      } catch (err) {
        failures.push(`${url}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    throw new Error(failures.join("; "));
  }

  /** @returns {item is Feature} */
  function isFeature(/** @type {any} */ item) {
    return item !== null && typeof item === "object" && item.properties !== null && typeof item.properties === "object";
  }

  /** [lat, lon] of a GeoJSON position, or null when it is not one. */
  function latLng(/** @type {unknown} */ position) {
    if (!Array.isArray(position) || position.length < 2) return null;
    const [lon, lat] = position;
    if (typeof lon !== "number" || typeof lat !== "number" || !(Math.abs(lat) <= 90) || !(Math.abs(lon) <= 180)) return null;
    return /** @type {[number, number]} */ ([lat, lon]);
  }

  /**
   * A view in the address, `#map=<zoom>/<lat>/<lon>` as openstreetmap.org writes it: a link can show
   * one part of a network that spans a country. Without one the view fits the whole network.
   */
  function viewInAddress() {
    const m = /^#map=(\d{1,2})\/(-?\d+(?:\.\d+)?)\/(-?\d+(?:\.\d+)?)$/.exec(location.hash);
    const at = m && latLng([Number(m[3]), Number(m[2])]);
    return m && at ? { zoom: Math.min(Number(m[1]), 19), at } : null;
  }

  /** Keeps the address on the view the reader chose, so it can be shared or reloaded. */
  function followView() {
    map.on("moveend", () => {
      const c = map.getCenter();
      history.replaceState(null, "", `#map=${map.getZoom()}/${c.lat.toFixed(5)}/${c.lng.toFixed(5)}`);
    });
  }

  function pointOf(/** @type {Feature} */ feature) {
    const g = /** @type {any} */ (feature.geometry);
    return g && g.type === "Point" ? latLng(g.coordinates) : null;
  }

  function lineOf(/** @type {Feature} */ feature) {
    const g = /** @type {any} */ (feature.geometry);
    if (!g || g.type !== "LineString" || !Array.isArray(g.coordinates)) return null;
    const points = g.coordinates.map(latLng);
    return points.length >= 2 && points.every(Boolean) ? /** @type {[number, number][]} */ (points) : null;
  }

  /** A value of the data as text; null, absent and empty values are not shown. */
  function text(/** @type {unknown} */ value) {
    if (value === null || value === undefined) return "";
    return typeof value === "string" ? value : JSON.stringify(value);
  }

  /**
   * @template {keyof HTMLElementTagNameMap} K
   * @param {K} tag
   * @param {string} [content]
   */
  function element(tag, content) {
    const node = document.createElement(tag);
    if (content !== undefined) node.textContent = content;
    return node;
  }

  /** A popup's content: a heading, the fields that have a value, and the item's API URL. */
  function popup(/** @type {string} */ title, /** @type {[string, unknown][]} */ fields, /** @type {string} */ detail) {
    const box = element("div");
    box.className = "mesh-popup";
    box.append(element("h2", title));
    const list = element("dl");
    for (const [label, value] of fields) {
      const shown = text(value);
      if (shown === "") continue;
      list.append(element("dt", label), element("dd", shown));
    }
    box.append(list);
    const link = element("a", detail);
    link.href = detail;
    box.append(link);
    return box;
  }

  /** Details are addressed by path segment; `:` stays as it is, as the API writes IPv6 paths. */
  function segment(/** @type {unknown} */ value) {
    return encodeURIComponent(text(value)).replace(/%3A/gi, ":");
  }

  function accesspointPopup(/** @type {Record<string, unknown>} */ p, /** @type {string} */ status) {
    const firmware = [p.firmware_type, p.firmware_release_name, p.firmware_release_version].map(text).filter(Boolean).join(" ");
    return popup(
      text(p.main_ip),
      [
        ["status", status],
        ["IPv6", p.main_ipv6],
        ["owner", p.owner],
        ["address", p.post_address],
        ["device", p.device_model],
        ["firmware", firmware],
        ["mesh firmware", p[config.versionField || "mesh_version"]],
        ["last seen", p.lastseen_timestamp],
      ],
      config.accesspointDetail + segment(p.main_ip),
    );
  }

  function linkPopup(/** @type {Record<string, unknown>} */ p) {
    const endpoints = Array.isArray(p.endpoints) ? p.endpoints.map(text).join(" – ") : "";
    return popup(
      `Link ${text(p.id)}`,
      [
        ["between", endpoints],
        ["quality", p.quality],
        ["wireless", p.is_wireless],
        ["SSID", p.wifi_ssid],
        ["seen", p.timestamp],
      ],
      config.linkDetail + segment(p.id),
    );
  }

  function qualityColor(/** @type {unknown} */ quality) {
    if (typeof quality === "number") for (const band of config.quality) if (quality >= band.min) return band.color;
    return "#495057";
  }

  async function draw() {
    const [links, ...byStatus] = await Promise.all([load(config.links), ...config.statuses.map((s) => load(s.source))]);
    const points = byStatus.map((features) => features.map((f) => ({ feature: f, at: pointOf(f) })));
    const lines = links.map((f) => ({ feature: f, at: lineOf(f) }));
    const placed = points.flat().filter((p) => p.at !== null);
    const total = points.flat().length;
    const view = viewInAddress();
    if (view) map.setView(view.at, view.zoom);
    if (placed.length === 0) {
      if (!view) map.setView([0, 0], 2);
      followView();
      const none =
        total === 0
          ? "This network has no access points"
          : total === 1
            ? "Its one access point has no position"
            : `None of the ${total} access points has a position`;
      finish("empty", `${none}: there is nothing to place on the map.`);
      return;
    }
    if (!view) map.fitBounds(L.latLngBounds(placed.map((p) => /** @type {[number, number]} */ (p.at))), { padding: [24, 24], maxZoom: 17 });
    followView();

    let drawnLinks = 0;
    for (const { feature, at } of lines) {
      if (at === null) continue;
      const color = qualityColor(feature.properties.quality);
      L.polyline(at, { color, weight: 3, opacity: 0.85, className: "mesh-link" })
        .bindPopup(() => linkPopup(feature.properties))
        .addTo(map);
      drawnLinks++;
    }
    config.statuses.forEach(({ status, color }, i) => {
      for (const { feature, at } of points[i]) {
        if (at === null) continue;
        L.circleMarker(at, {
          radius: 6,
          color: "#fff",
          weight: 1.5,
          fillColor: color,
          fillOpacity: 1,
          className: `mesh-ap mesh-ap-${status}`,
        })
          .bindPopup(() => accesspointPopup(feature.properties, status))
          .addTo(map);
      }
    });
    const unplaced = total - placed.length;
    finish(
      "ready",
      `${counted(placed.length, "access point")} and ${counted(drawnLinks, "link")} drawn.` +
        (unplaced > 0 ? ` Not on the map for want of a position: ${counted(unplaced, "access point")}.` : ""),
    );
  }

  function counted(/** @type {number} */ n, /** @type {string} */ thing) {
    return `${n} ${thing}${n === 1 ? "" : "s"}`;
  }

  draw().catch((err) => {
    map.setView([0, 0], 2);
    finish("error", `The network could not be loaded from the API: ${err instanceof Error ? err.message : String(err)}`);
  });
})();
