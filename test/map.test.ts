import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { crc32, deflateSync } from "node:zlib";
import fg from "fast-glob";
import { DomUtils, parseDocument } from "htmlparser2";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, startPreview, type Preview } from "../src/index.ts";
import { DEFAULT_MAP_SETTINGS, mapConfig, mapPage, type MapSettings } from "../src/core/documents/map.ts";
import { fileFor, parseRequest, resolve, type FileName } from "../src/core/routes.ts";
import { STATUSES } from "../src/core/model/model.ts";
import { model as modelOf, ap, at } from "./support/dump.ts";
import { PUBLIC_SAMPLE } from "./support/expected.ts";
import { command, ROOT, tempDir, TSC } from "./support/tree.ts";

/**
 * The map at /map/ in a real browser: Debian's chromium driven by playwright-core (no browser is
 * downloaded), on builds served by the preview. Tiles never come from the internet: their requests
 * are answered here, or refused to show the map works without them.
 */

const CHROMIUM = process.env.MESH_API_CHROMIUM ?? "/usr/bin/chromium";
const TILE_HOST = "https://tiles.example.test";
const SETTINGS: MapSettings = {
  tiles: `${TILE_HOST}/{z}/{x}/{y}.png`,
  attribution: "Test tiles: a plain background &amp; <b>no map data</b>",
};
/** Tiles of one colour (OpenStreetMap's land): a plain background, for the screenshots too. */
const TILE = plainPng(256, "f2efe9");
/** Screenshots, for CI to keep as artifacts (gitignored). */
const SHOTS = path.join(ROOT, "test-results", "map");
const HOSTILE = `<img src=x onerror="window.__pwned=1">`;

let browser: Browser;
/** One context for every page: a page of its own opens faster than a context of its own. */
let context: BrowserContext;
const sites: { out: string; preview: Preview }[] = [];

interface Site {
  readonly out: string;
  readonly url: string;
}

async function site(data: string): Promise<Site> {
  const out = path.join(tempDir(), "dist");
  await build({ data, out, map: SETTINGS });
  const preview = await startPreview({ dir: out, port: 0 });
  sites.push({ out, preview });
  return { out, url: preview.url };
}

/** A PNG of one colour: 8-bit RGB rows, each with filter byte 0. */
function plainPng(size: number, rgb: string): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const typed = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(typed));
    return Buffer.concat([length, typed, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(rgb.repeat(size), "hex")]);
  const pixels = deflateSync(Buffer.concat(Array.from({ length: size }, () => row)));
  return Buffer.concat([
    Buffer.from("89504e470d0a1a0a", "hex"),
    chunk("IHDR", header),
    chunk("IDAT", pixels),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** A small dump on disk, in the format `build` reads. */
function writeDump(aps: unknown[], links: unknown[] = []): string {
  const dir = path.join(tempDir(), "dump");
  mkdirSync(path.join(dir, "accesspoints"), { recursive: true });
  mkdirSync(path.join(dir, "links"));
  const network = { format: "mesh-topology-dump/1", name: "map test", taken_at: "2026-01-01T12:00:00Z" };
  writeFileSync(path.join(dir, "network.json"), JSON.stringify(network));
  writeFileSync(path.join(dir, "accesspoints/a.json"), JSON.stringify(aps));
  writeFileSync(path.join(dir, "links/l.json"), JSON.stringify(links));
  return dir;
}

interface Features {
  features: { geometry: unknown; properties: Record<string, unknown> }[];
}
const readJson = <T>(out: string, file: string) => JSON.parse(readFileSync(path.join(out, file), "utf8")) as T;
const positioned = (c: Features) => c.features.filter((f) => f.geometry !== null);

interface Opened {
  readonly page: Page;
  /** console errors and uncaught exceptions, with the URL they name */
  readonly errors: { text: string; url: string }[];
  /** every URL the page asked for */
  readonly requests: string[];
  tiles: number;
}

/** Opens a page of a site with tiles answered by `tiles` (a plain background by default), until the map says it is done. */
async function open(url: string, tiles: "plain" | "fail" = "plain", prepare?: (page: Page) => Promise<void>): Promise<Opened> {
  const page = await context.newPage();
  const opened: Opened = { page, errors: [], requests: [], tiles: 0 };
  page.on("console", (m) => {
    if (m.type() === "error") opened.errors.push({ text: m.text(), url: m.location().url });
  });
  page.on("pageerror", (e) => opened.errors.push({ text: `uncaught: ${e.message}`, url: "" }));
  page.on("request", (r) => opened.requests.push(r.url()));
  await page.route(`${TILE_HOST}/**`, (route) => {
    opened.tiles++;
    return tiles === "plain" ? route.fulfill({ body: TILE, contentType: "image/png" }) : route.abort("failed");
  });
  await prepare?.(page);
  await page.goto(url);
  await page.waitForSelector("html[data-map]", { timeout: 15_000 });
  return opened;
}

const state = (page: Page) => page.getAttribute("html", "data-map");
const count = (page: Page, selector: string) => page.locator(selector).count();

/** `tsc -p assets/map`, in a process of its own: it runs while the builds and the browser start. */
let typecheck: Promise<{ code: number; output: string }>;
let sample: Site;
let hostile: Site;
let unplaced: Site;

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `test/map.test.ts needs a Chromium at ${CHROMIUM}: install Debian's with "apt-get install chromium" ` +
        `(or set MESH_API_CHROMIUM to a Chromium binary). playwright-core drives it and downloads no browser.`,
    );
  mkdirSync(SHOTS, { recursive: true });
  typecheck = new Promise((done) =>
    execFile(process.execPath, [TSC, "-p", path.join(ROOT, "assets/map")], (err, stdout, stderr) =>
      done({ code: err ? Number(err.code ?? 1) : 0, output: stdout + stderr }),
    ),
  );
  // Independent, so at once: the browser starts while the builds run.
  const [a, b, c] = [
    { ...ap("10.9.0.1"), position: at(12.1, 54.1), owner: HOSTILE, post_address: "<script>window.__pwned=2</script>" },
    { ...ap("10.9.0.2"), position: at(12.2, 54.2), owner: "Verein" },
    ap("10.9.0.3"),
  ];
  const interfaceOf = (record: Record<string, unknown>) => (record.interfaces as { id: number }[])[0].id;
  const link = {
    id: 7,
    timestamp: "2026-01-01T11:59:00Z",
    endpoints: [
      { interface: interfaceOf(a), quality: 0.5 },
      { interface: interfaceOf(b), quality: 1 },
    ],
  };
  [browser, sample, hostile, unplaced] = await Promise.all([
    chromium.launch({ executablePath: CHROMIUM }),
    site(`${PUBLIC_SAMPLE}dump`),
    site(writeDump([a, b, c], [link])),
    site(writeDump([ap("10.8.0.1"), ap("10.8.0.2")])),
  ]);
  context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
});

afterAll(async () => {
  await browser?.close();
  await Promise.all(sites.map((s) => s.preview.close()));
});

describe("the map page (core/documents/map.ts)", () => {
  it("carries the settings as JSON that no value can end early, and escapes them in HTML", () => {
    const settings: MapSettings = {
      tiles: `https://x.test/{z}/{x}/{y}.png?</script><script>alert(1)</script>`,
      attribution: "<!-- </SCRIPT ",
    };
    const page = mapPage(modelOf([ap("10.0.0.1", { position: at(12, 54) })]), settings);
    expect(page).not.toMatch(/<\/script><script>alert|<!--/i);
    const scripts = DomUtils.getElementsByTagName("script", parseDocument(page));
    expect(scripts.map((s) => s.attribs.src ?? s.attribs.type)).toEqual([
      "application/json",
      fileFor("leaflet", { asset: "leaflet.js" }),
      fileFor("mapScript"),
    ]);
    expect(JSON.parse(DomUtils.textContent(scripts[0]))).toEqual(mapConfig(settings));
  });

  it("loads each list by the API's URL, and the file behind it answers that very URL", () => {
    const config = mapConfig(SETTINGS);
    expect(config.statuses.map((s) => s.status).sort()).toEqual([...STATUSES].sort());
    for (const [api, file] of [...config.statuses.map((s) => s.source), config.links]) {
      const r = resolve(parseRequest(api)!);
      expect(r.type === "file" && r.file).toBe(file);
    }
  });

  it("has a script that type-checks (assets/map: the DOM and Leaflet's declarations)", async () => {
    const { code, output } = await typecheck;
    expect(output).toBe("");
    expect(code).toBe(0);
  });
});

// Each test has a page of its own: they run at once.
describe.concurrent("the map in chromium", () => {
  const positionedIn = (site: Site, name: FileName, values: Record<string, string> = {}) =>
    positioned(readJson<Features>(site.out, fileFor(name, values)));

  it("is built with Leaflet's files and the page's script beside the page", async ({ expect }) => {
    const files = (await fg("map/**", { cwd: sample.out })).sort();
    expect(files).toEqual([
      "map/index.html",
      "map/leaflet/LICENSE",
      "map/leaflet/images/layers-2x.png",
      "map/leaflet/images/layers.png",
      "map/leaflet/images/marker-icon-2x.png",
      "map/leaflet/images/marker-icon.png",
      "map/leaflet/images/marker-shadow.png",
      "map/leaflet/leaflet.css",
      "map/leaflet/leaflet.js",
      // its gzip twin: Leaflet's script is longer than TWIN.minBytes
      "map/leaflet/leaflet.js.gz",
      "map/map.js",
    ]);
    expect(readFileSync(path.join(sample.out, fileFor("mapScript")))).toEqual(readFileSync(path.join(ROOT, "assets/map/map.js")));
  });

  it("draws every positioned access point by status and every positioned link, with the configured tiles and nothing else from elsewhere; a click opens a popup with a working link to the API detail", async ({
    expect,
  }) => {
    const { url } = sample;
    const { page, errors, requests, tiles } = await open(`${url}/map/`);
    const aps = positionedIn(sample, "accesspointListGeojson").length;
    const links = positionedIn(sample, "linkListGeojson").length;
    expect(await state(page)).toBe("ready");
    expect(aps).toBeGreaterThan(300);
    expect(await count(page, "path.mesh-ap")).toBe(aps);
    for (const status of STATUSES)
      expect(await count(page, `path.mesh-ap-${status}`)).toBe(positionedIn(sample, "accesspointListGeojsonByStatus", { status }).length);
    expect(links).toBeGreaterThan(300);
    expect(await count(page, "path.mesh-link")).toBe(links);
    expect(await page.textContent("#map-status")).toContain(`${aps} access points and ${links} links drawn`);
    const all = readJson<Features>(sample.out, fileFor("accesspointListGeojson")).features.length;
    const allLinks = readJson<Features>(sample.out, fileFor("linkListGeojson")).features.length;
    expect(await page.textContent("header p")).toContain(
      `${all} access points, ${aps} of them with a position, and ${allLinks} links, from the topology dump taken at 2026-11-22T11:28:02.756363Z.`,
    );
    // Leaflet, its stylesheet and the script come from the build; only tiles come from the tile server, by its template.
    expect(tiles).toBeGreaterThan(0);
    const elsewhere = requests.filter((r) => !r.startsWith(`${url}/`));
    expect(elsewhere.length).toBe(tiles);
    expect(elsewhere.filter((r) => !/^https:\/\/tiles\.example\.test\/\d+\/\d+\/\d+\.png$/.test(r))).toEqual([]);
    expect(await page.locator(".leaflet-control-attribution").innerHTML()).toContain(SETTINGS.attribution);
    await page.screenshot({ path: path.join(SHOTS, "sample.png") });

    // Online access points are drawn last, so the last of them lies on top of every other marker: it takes the click.
    const online = positionedIn(sample, "accesspointListGeojsonByStatus", { status: "online" });
    const last = online[online.length - 1].properties;
    await page.locator("path.mesh-ap").last().click();
    const popup = page.locator(".leaflet-popup-content .mesh-popup");
    await popup.waitFor();
    expect(await popup.locator("h2").textContent()).toBe(last.main_ip);
    const text = await popup.textContent();
    for (const field of ["owner", "post_address", "lastseen_timestamp"] as const)
      if (typeof last[field] === "string") expect(text).toContain(last[field]);
    expect(text).toContain("online");
    const href = await popup.locator("a").getAttribute("href");
    expect(href).toBe(`/api/v1/accesspoint/${last.main_ip}`);
    const detail = await page.request.get(`${url}${href}`);
    expect(detail.status()).toBe(200);
    expect((await detail.json()).main_ip).toBe(last.main_ip);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("draws the network on a plain background when no tile loads, and says so; only the tiles fail", async ({ expect }) => {
    const { page, errors, tiles } = await open(`${sample.url}/map/`, "fail");
    expect(await state(page)).toBe("ready");
    expect(await count(page, "path.mesh-ap")).toBe(positionedIn(sample, "accesspointListGeojson").length);
    expect(await count(page, "path.mesh-link")).toBe(positionedIn(sample, "linkListGeojson").length);
    expect(tiles).toBeGreaterThan(0);
    await expect.poll(() => page.locator("#map-tiles").isVisible()).toBe(true);
    expect(await page.textContent("#map-tiles")).toMatch(/background map could not be loaded/);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.filter((e) => !(e.url.startsWith(`${TILE_HOST}/`) && /Failed to load resource/.test(e.text)))).toEqual([]);
    await page.screenshot({ path: path.join(SHOTS, "sample-without-tiles.png") });
    await page.close();
  });

  it("reads the lists from their files on a host that does not route query strings", async ({ expect }) => {
    const { url, out } = sample;
    // Such a host (Cloudflare Pages, GitHub Pages) answers a list URL with the unfiltered list, whatever the query.
    const { page, errors, requests } = await open(`${url}/map/`, "plain", async (p) => {
      await p.route(`${url}/api/**`, async (route) => {
        const target = new URL(route.request().url());
        const r = target.search === "" ? { type: "file" as const, file: target.pathname } : resolve(parseRequest(target.pathname)!);
        const file = r.type === "file" ? path.join(out, r.file) : "";
        const found = file !== "" && existsSync(file);
        return route.fulfill({ status: found ? 200 : 404, contentType: "application/json", body: found ? readFileSync(file) : "" });
      });
    });
    expect(errors).toEqual([]);
    expect(requests.filter((r) => r.includes("/_q/"))).toHaveLength(4);
    expect(await count(page, "path.mesh-ap")).toBe(positionedIn(sample, "accesspointListGeojson").length);
    expect(await count(page, "path.mesh-link")).toBe(positionedIn(sample, "linkListGeojson").length);
    await page.close();
  });

  it("shows the view named in the address, and keeps the address on the view", async ({ expect }) => {
    const { page, errors } = await open(`${sample.url}/map/#map=13/54.0900/12.1200`);
    expect(await state(page)).toBe("ready");
    await page.screenshot({ path: path.join(SHOTS, "sample-rostock.png") });
    await page.locator(".leaflet-control-zoom-in").click();
    await expect.poll(() => page.evaluate("location.hash")).toMatch(/^#map=14\/54\.09\d*\/12\.12\d*$/);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("shows data strings as text: a hostile owner is neither markup nor script", async ({ expect }) => {
    const { url } = hostile;
    const { page, errors } = await open(`${url}/map/`);
    expect(await count(page, "path.mesh-ap")).toBe(2);
    expect(await page.textContent("#map-status")).toBe(
      "2 access points and 1 link drawn. Not on the map for want of a position: 1 access point.",
    );
    // Far apart: the click lands on the marker it aims at.
    await page.locator("path.mesh-ap").first().click();
    const popup = page.locator(".leaflet-popup-content .mesh-popup");
    await popup.waitFor();
    expect(await popup.locator("h2").textContent()).toBe("10.9.0.1");
    const text = await popup.textContent();
    expect(text).toContain(HOSTILE);
    expect(text).toContain("<script>window.__pwned=2</script>");
    expect(await popup.locator("img, script").count()).toBe(0);
    expect(await page.evaluate("window.__pwned")).toBeUndefined();
    await page.screenshot({ path: path.join(SHOTS, "hostile-popup.png") });

    // The link's popup, from the middle of its line.
    await page.locator("path.mesh-link").click();
    await expect.poll(() => popup.locator("h2").textContent()).toBe("Link 7");
    expect(await popup.textContent()).toContain("10.9.0.1 – 10.9.0.2");
    const href = await popup.locator("a").getAttribute("href");
    expect(href).toBe("/api/v1/link/7");
    expect((await page.request.get(`${url}${href}`)).status()).toBe(200);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("says so, without an error, when no access point has a position", async ({ expect }) => {
    const { page, errors } = await open(`${unplaced.url}/map/`);
    expect(await state(page)).toBe("empty");
    expect(await page.textContent("#map-status")).toBe("None of the 2 access points has a position: there is nothing to place on the map.");
    expect(await count(page, "path.mesh-ap")).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe("build --tiles", () => {
  /** The settings a built map page carries, read back from its JSON block. */
  const settingsOf = (out: string) => {
    const page = readFileSync(path.join(out, fileFor("map")), "utf8");
    const block = /<script type="application\/json" id="map-config">([^<]*)<\/script>/.exec(page)![1];
    return JSON.parse(block) as { tiles: string; attribution: string };
  };

  it("takes a tile URL template and its credit; OpenStreetMap's, with its credit, by default; anything else is a usage error", async () => {
    const custom = path.join(tempDir(), "dist");
    const tiles = "https://tiles.example.org/{z}/{x}/{y}.png?key=a&b=c";
    const ok = await command([
      "build",
      "--data",
      `${PUBLIC_SAMPLE}dump`,
      "--out",
      custom,
      "-q",
      "--tiles",
      tiles,
      "--tiles-attribution",
      "© Example",
    ]);
    expect(ok.status, ok.stderr).toBe(0);
    expect(settingsOf(custom)).toMatchObject({ tiles, attribution: "© Example" });
    const plain = path.join(tempDir(), "dist");
    expect((await command(["build", "--data", `${PUBLIC_SAMPLE}dump`, "--out", plain, "-q"])).status).toBe(0);
    expect(settingsOf(plain)).toMatchObject({ tiles: DEFAULT_MAP_SETTINGS.tiles, attribution: DEFAULT_MAP_SETTINGS.attribution });
    for (const bad of [
      "tiles.example.org/{z}/{x}/{y}.png",
      "ftp://tiles.example.org/{z}/{x}/{y}.png",
      "https://tiles.example.org/{z}/{x}.png",
      "javascript:{z}{x}{y}",
    ]) {
      const out = path.join(tempDir(), "dist");
      const r = await command(["build", "--data", `${PUBLIC_SAMPLE}dump`, "--out", out, "--tiles", bad]);
      expect(r.status, bad).toBe(2);
      expect(r.stderr, bad).toContain("a tile URL is http(s) with {z}, {x} and {y}");
      expect(existsSync(out), bad).toBe(false);
    }
  });
});
