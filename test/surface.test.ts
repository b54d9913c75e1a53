import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { getIssues } from "@placemarkio/check-geojson";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, startPreview, type Preview } from "../src/index.ts";
import { fileFor, IS_WIRELESS_VALUES, parseRequest, parseRouting, resolve, type Routing } from "../src/core/routes.ts";
import { rawRequest, type RawResponse } from "./support/http.ts";
import { tempDir } from "./support/tree.ts";

/**
 * The surface beyond the API description that the original also answered (issue 12): GeoJSON lists,
 * firmware_version__after, is_wireless, with_redundant_site_links, and the refused in_bbox. A small
 * network made for it is built, then every request is answered twice: from the files through the
 * route table, and over HTTP through the preview (with the API headers). Both must agree.
 */

const TAKEN = "2026-11-22T12:00:00Z";
const ONLINE = "2026-11-22T11:59:00Z";
const OFFLINE = "2026-01-01T00:00:00Z";

function node(main_ip: string, id: number, extra: Record<string, unknown>, iface: Record<string, unknown> = {}) {
  return { main_ip, ...extra, interfaces: [{ id, addresses: [{ id, address: main_ip, netmask_prefixlen: 16 }], ...iface }] };
}

const ACCESSPOINTS = [
  node("10.0.1.1", 11, { site: 1, position: { type: "Point", coordinates: [12, 54] }, mesh_version: "0.4-5", lastseen_timestamp: ONLINE }),
  node(
    "10.0.1.2",
    12,
    { site: 1, position: { type: "Point", coordinates: [12.001, 54] }, mesh_version: "0.5.1-unstable-845" },
    { if_name: "wlan0", wifi: { wifi_ssid: "mesh-A" } },
  ),
  node("10.0.2.1", 21, { site: 2, position: { type: "Point", coordinates: [12.1, 54.1] }, mesh_version: "" }, { if_name: "wlan0" }),
  node("10.0.2.2", 22, { site: 2, firmware_type: null, lastseen_timestamp: ONLINE }, { if_name: "ath0", wifi: { wifi_ssid: "mesh-B" } }),
  node("10.0.3.1", 31, { site: 3, position: { type: "Point", coordinates: [12.2, 54.2] }, mesh_version: "opennet0.10.sdk" }),
  node("10.0.4.1", 41, { site: 4, mesh_version: "opennet0.6.sdk" }),
  node("10.0.9.1", 91, { position: { type: "Point", coordinates: [12.3, 54.3] } }),
];

const link = (id: number, a: number, b: number, timestamp: string) => ({
  id,
  timestamp,
  endpoints: [
    { interface: a, quality: 0.5 },
    { interface: b, quality: 1 },
  ],
});

const LINKS = [
  link(1, 11, 21, ONLINE), // sites 1 and 2 are joined by two online links: 1, 2 and 3 go with with_redundant_site_links=0
  link(2, 12, 22, ONLINE),
  link(3, 11, 22, OFFLINE),
  link(4, 11, 31, ONLINE), // sites 1 and 3: one link
  link(5, 31, 21, OFFLINE), // sites 3 and 2: two links, neither online
  link(6, 31, 22, OFFLINE),
  link(7, 11, 12, ONLINE), // within site 1
  link(8, 91, 11, ONLINE), // 10.0.9.1 has no site
];

let out: string;
let routing: Routing;
let preview: Preview;
let port: number;

beforeAll(async () => {
  const data = tempDir();
  mkdirSync(path.join(data, "accesspoints"));
  mkdirSync(path.join(data, "links"));
  writeFileSync(path.join(data, "network.json"), JSON.stringify({ format: "mesh-topology-dump/1", taken_at: TAKEN }));
  writeFileSync(path.join(data, "accesspoints/a.json"), JSON.stringify(ACCESSPOINTS));
  writeFileSync(path.join(data, "links/l.json"), JSON.stringify(LINKS));
  out = path.join(tempDir(), "dist");
  await build({ data, out });
  routing = parseRouting(readFileSync(out + fileFor("aliases"), "utf8"));
  preview = await startPreview({ dir: out, port: 0 });
  port = Number(new URL(preview.url).port);
});

afterAll(() => preview?.close());

/** The answer from the files, through the route table: the body, or undefined for a 404. */
function fromFiles(target: string): string | undefined {
  const req = parseRequest(target);
  const r = req && resolve(req, routing);
  if (r?.type !== "file") return undefined;
  try {
    return readFileSync(out + r.file, "utf8");
  } catch {
    return undefined;
  }
}

function expectApiHeaders(r: RawResponse) {
  expect(r.headers["content-type"]).toBe("application/json");
  expect(r.headers.allow).toBe("GET, HEAD, OPTIONS");
  expect(r.headers.vary).toBe("Accept");
  expect(r.headers["access-control-allow-origin"]).toBe("*");
}

/** The body of a 200 (undefined for the JSON 404), the same from the files and over HTTP. */
async function get(target: string): Promise<string | undefined> {
  const r = await rawRequest(port, "GET", target);
  expectApiHeaders(r);
  const file = fromFiles(target);
  if (r.status === 404) {
    expect(r.body.toString(), target).toBe('{"detail":"Not found."}');
    expect(file, `${target}: a file answers what HTTP refuses`).toBeUndefined();
    return undefined;
  }
  expect(r.status, target).toBe(200);
  expect(r.body.toString("utf8"), `${target}: HTTP and files differ`).toBe(file);
  return file;
}

/** Two requests answered alike: each a 200 (two 404s would read alike too), the same body. */
async function expectSame(target: string, like: string): Promise<void> {
  const [answer, reference] = [await get(target), await get(like)];
  expect(answer, `${target}: 404`).toBeDefined();
  expect(reference, `${like}: 404`).toBeDefined();
  expect(answer, `${target} answers as ${like}`).toBe(reference);
}

const json = (text: string | undefined) => JSON.parse(text!);
const mainIps = async (target: string) => (json(await get(target)) as { main_ip: string }[]).map((a) => a.main_ip);
const linkIds = async (target: string) => (json(await get(target)) as { id: number }[]).map((l) => l.id);
type Collection = { type: string; features: { type: string; geometry: unknown; properties: Record<string, unknown> }[] };

describe("data_format=geojson", () => {
  it("answers the access point, link and site lists with valid GeoJSON (RFC 7946), alone and with status", async () => {
    for (const [list, statuses] of [
      ["accesspoint", ["", "all", "online", "flapping", "offline"]],
      ["link", ["", "all", "online", "flapping", "offline"]],
      ["site", [""]],
    ] as const) {
      for (const status of statuses) {
        const target = `/api/v1/${list}/?data_format=geojson${status ? `&status=${status}` : ""}`;
        const body = await get(target);
        expect(getIssues(body!), target).toEqual([]);
        expect(json(body).type).toBe("FeatureCollection");
      }
    }
  });

  it("access points: position as geometry (null without one), every other field and site as properties", async () => {
    const c = json(await get("/api/v1/accesspoint/?data_format=geojson")) as Collection;
    const plain = json(await get("/api/v1/accesspoint/")) as Record<string, unknown>[];
    expect(c.features.map((f) => f.properties.main_ip)).toEqual(plain.map((a) => a.main_ip));
    c.features.forEach((f, i) => {
      const { position, ...rest } = plain[i];
      expect(f.geometry).toEqual(position);
      expect(f.properties).toEqual(rest);
    });
    expect(c.features.find((f) => f.properties.main_ip === "10.0.2.2")!.geometry).toBeNull();
    const online = json(await get("/api/v1/accesspoint/?data_format=geojson&status=online")) as Collection;
    expect(online.features.map((f) => f.properties.main_ip)).toEqual(["10.0.1.1", "10.0.2.2"]);
  });

  it("links: a LineString through the endpoints' positions (null under two), endpoints as main_ips", async () => {
    const c = json(await get("/api/v1/link/?data_format=geojson")) as Collection;
    const byId = new Map(c.features.map((f) => [f.properties.id, f]));
    expect(byId.get(1)).toEqual({
      type: "Feature",
      geometry: {
        type: "LineString",
        coordinates: [
          [12, 54],
          [12.1, 54.1],
        ],
      },
      properties: {
        endpoints: ["10.0.1.1", "10.0.2.1"],
        id: 1,
        timestamp: "2026-11-22T11:59:00Z",
        quality: 0.5,
        is_wireless: true,
        wifi_ssid: null,
      },
    });
    expect(byId.get(2)!.geometry).toBeNull(); // 10.0.2.2 has no position
    expect(byId.get(2)!.properties.wifi_ssid).toBe("mesh-A");
  });

  it("sites: the Point of the site position (null without one), members and id", async () => {
    const c = json(await get("/api/v1/site/?data_format=geojson")) as Collection;
    expect(c.features.map((f) => f.properties)).toEqual([
      { accesspoints: ["10.0.1.1", "10.0.1.2"], id: 1 },
      { accesspoints: ["10.0.2.1", "10.0.2.2"], id: 2 },
      { accesspoints: ["10.0.3.1"], id: 3 },
      { accesspoints: ["10.0.4.1"], id: 4 },
    ]);
    expect(c.features[1].geometry).toEqual({ type: "Point", coordinates: [12.1, 54.1] });
    expect(c.features[3].geometry).toBeNull();
  });

  it("is ignored in any other spelling and on every other endpoint; not precomputed with a firmware filter", async () => {
    await expectSame("/api/v1/accesspoint/?data_format=GeoJSON&status=all", "/api/v1/accesspoint/");
    await expectSame("/api/v1/link/?data_format=json", "/api/v1/link/");
    for (const path of [
      "/api/v1/interface/",
      "/api/v1/accesspoint/10.0.1.1",
      "/api/v1/accesspoint/10.0.1.1/links/",
      "/api/v1/accesspoint/10.0.1.1/interfaces/",
      "/api/v1/interface/10.0.1.1",
      "/api/v1/interface/10.0.1.1/accesspoint/",
      "/api/v1/link/1",
      "/api/v1/link/10.0.1.1-10.0.2.1",
      "/api/v1/site/1",
    ])
      await expectSame(`${path}?data_format=geojson`, path);
    await expectSame("/api/v1/accesspoint/?data_format=geojson&format=api", "/api/v1/accesspoint/?data_format=geojson");
    expect(await get("/api/v1/accesspoint/?data_format=geojson&firmware_version=0.4-5")).toBeUndefined();
    expect(await get("/api/v1/accesspoint/?data_format=geojson&firmware_version__after=0.5")).toBeUndefined();
    await expectSame("/api/v1/accesspoint/?data_format=geojson&firmware_version__before=", "/api/v1/accesspoint/?data_format=geojson");
  });
});

describe("firmware_version__after", () => {
  it("keeps non-null versions not before the bound, alone and with status; empty means no filter", async () => {
    expect(await mainIps("/api/v1/accesspoint/?firmware_version__after=0.4-5")).toEqual(["10.0.1.1", "10.0.1.2", "10.0.2.1"]);
    expect(await mainIps("/api/v1/accesspoint/?firmware_version__after=0.4-5&status=online")).toEqual(["10.0.1.1"]);
    expect(await mainIps("/api/v1/accesspoint/?firmware_version__after=0.4-5&status=all")).toEqual(["10.0.1.1", "10.0.1.2", "10.0.2.1"]);
    expect(await mainIps("/api/v1/accesspoint/?firmware_version__after=opennet0.6.sdk")).toEqual([
      "10.0.1.1",
      "10.0.1.2",
      "10.0.2.1",
      "10.0.4.1",
    ]);
    // opennet0.10.sdk is unparseable: as a bound it keeps every non-null version
    expect(await mainIps("/api/v1/accesspoint/?firmware_version__after=opennet0.10.sdk")).toEqual([
      "10.0.1.1",
      "10.0.1.2",
      "10.0.2.1",
      "10.0.3.1",
      "10.0.4.1",
    ]);
    expect(await mainIps("/api/v1/accesspoint/?firmware_version__after=")).toHaveLength(ACCESSPOINTS.length);
    await expectSame("/api/v1/accesspoint/?firmware_version__after=0.5.1-unstable-845", "/api/v1/accesspoint/?firmware_version__after=0.5");
    // so does any other unparseable bound, present or not: one answer for all of them
    await expectSame(
      "/api/v1/accesspoint/?firmware_version__after=garbage",
      "/api/v1/accesspoint/?firmware_version__after=opennet0.10.sdk",
    );
    await expectSame(
      "/api/v1/accesspoint/?firmware_version__after=garbage&status=online",
      "/api/v1/accesspoint/?firmware_version__after=opennet0.10.sdk&status=online",
    );
    // a parseable bound the data does not hold answers as the first bound there is at or after it
    await expectSame("/api/v1/accesspoint/?firmware_version__after=0.4.7", "/api/v1/accesspoint/?firmware_version__after=0.5");
    await expectSame(
      "/api/v1/accesspoint/?firmware_version__after=0.5.0.9",
      "/api/v1/accesspoint/?firmware_version__after=0.5.1-unstable-845",
    );
    expect(await get("/api/v1/accesspoint/?firmware_version__after=0.5&firmware_version__before=1.0")).toBeUndefined();
  });
});

describe("is_wireless", () => {
  it("every accepted spelling answers, by wifi attributes; empty is no filter; other values and combinations are refused", async () => {
    const wireless = await get("/api/v1/interface/?is_wireless=true");
    const wired = await get("/api/v1/interface/?is_wireless=false");
    expect((json(wireless) as { accesspoint: string }[]).map((i) => i.accesspoint)).toEqual(["10.0.1.2", "10.0.2.2"]);
    // 10.0.2.1's wlan0 has no wifi attributes: the filter lists it as not wireless, as the original did.
    expect((json(wired) as { accesspoint: string; is_wireless: boolean }[]).find((i) => i.accesspoint === "10.0.2.1")?.is_wireless).toBe(
      true,
    );
    expect(IS_WIRELESS_VALUES.true).toHaveLength(17);
    expect(IS_WIRELESS_VALUES.false).toHaveLength(33);
    for (const v of IS_WIRELESS_VALUES.true) await expectSame(`/api/v1/interface/?is_wireless=${v}`, "/api/v1/interface/?is_wireless=true");
    for (const v of IS_WIRELESS_VALUES.false)
      await expectSame(`/api/v1/interface/?is_wireless=${v}`, "/api/v1/interface/?is_wireless=false");
    await expectSame("/api/v1/interface/?is_wireless=", "/api/v1/interface/");
    for (const v of ["maybe", "yes", "2", "tru", "true "])
      expect(await get(`/api/v1/interface/?is_wireless=${encodeURIComponent(v)}`), v).toBeUndefined();
    expect(await get("/api/v1/interface/?is_wireless=true&wifi_ssid=mesh-A")).toBeUndefined();
    expect(await get("/api/v1/interface/?if_hwaddress=aa:bb:cc:dd:ee:ff&is_wireless=0")).toBeUndefined();
  });
});

describe("with_redundant_site_links", () => {
  it("0 leaves out the links between sites joined by more than one online link; status filters the rest", async () => {
    expect(await linkIds("/api/v1/link/?with_redundant_site_links=0")).toEqual([4, 5, 6, 7, 8]);
    expect(await linkIds("/api/v1/link/?with_redundant_site_links=0&status=online")).toEqual([4, 7, 8]);
    expect(await linkIds("/api/v1/link/?with_redundant_site_links=0&status=offline")).toEqual([5, 6]);
    expect(await linkIds("/api/v1/link/?with_redundant_site_links=0&status=all")).toEqual([4, 5, 6, 7, 8]);
    const geo = json(await get("/api/v1/link/?with_redundant_site_links=0&data_format=geojson&status=online")) as Collection;
    expect(geo.features.map((f) => f.properties.id)).toEqual([4, 7, 8]);
  });

  it("1 (the default) and every other value change nothing", async () => {
    for (const v of ["1", "", "true", "00"]) await expectSame(`/api/v1/link/?with_redundant_site_links=${v}`, "/api/v1/link/");
    await expectSame("/api/v1/link/?with_redundant_site_links=1&data_format=geojson", "/api/v1/link/?data_format=geojson");
  });
});

describe("in_bbox", () => {
  it("is ignored on every list with any value and beside any other filter, over HTTP", async () => {
    for (const list of ["accesspoint", "link", "site", "interface"])
      for (const [withBox, without] of [
        ["in_bbox=12.0,54.0,12.2,54.2", ""],
        ["in_bbox=garbage", ""],
        ["status=all&in_bbox=12.0,54.0,12.2,54.2", "status=all"],
        ["in_bbox=12.0,54.0,12.2,54.2&data_format=geojson", "data_format=geojson"],
        ["firmware_version__after=0.4-5&in_bbox=1,2,3,4", "firmware_version__after=0.4-5"],
        ["is_wireless=true&in_bbox=1,2,3,4", "is_wireless=true"],
        ["with_redundant_site_links=0&in_bbox=1,2,3,4", "with_redundant_site_links=0"],
      ]) {
        await expectSame(`/api/v1/${list}/?${withBox}`, `/api/v1/${list}/?${without}`);
      }
  });
});
