import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPreview, type Preview } from "../src/index.ts";
import { placeholderValues } from "../src/core/plan.ts";
import { EXPECTED_OPENNET, mismatch, netlifyLimit, readExpected, type Expected } from "./support/expected.ts";
import { rawRequest, rawRequests, type RawResponse } from "./support/http.ts";
import { loadNetlify, type NetlifySite } from "./support/netlify.ts";
import { previewAnswersOnce } from "./support/answers.ts";
import { sharedBuild } from "./support/shared.ts";
import { tempDir } from "./support/tree.ts";
import { netlifyRules } from "../src/hosts/netlify.ts";
import { TWIN } from "../src/core/routes.ts";

/**
 * The programs that call the running original today, pointed at a build made for them
 * (`--brand opennet --default-status online` of the public sample: the run's shared build of it,
 * test/support/shared.ts), over HTTP on the preview and through Netlify's engine on the deploy's rules. The request shapes are those of the clients'
 * public code (cited per test); the assertions are what each client reads.
 */

const API_HEADERS = { "content-type": "application/json", allow: "GET, HEAD, OPTIONS", vary: "Accept", "access-control-allow-origin": "*" };

let out: string;
let preview: Preview;
let port: number;
let netlify: NetlifySite;

beforeAll(async () => {
  const shared = await sharedBuild("public-opennet");
  out = shared.out;
  preview = await startPreview({ dir: out, port: 0 });
  port = Number(new URL(preview.url).port);
  // What the operator deploys with: `netlify-config --data <dump> --default-status online --write`.
  const config = path.join(tempDir(), "netlify.toml");
  writeFileSync(config, netlifyRules(placeholderValues(shared.model)).config());
  netlify = await loadNetlify(config, out);
}, 120_000);

afterAll(() => preview?.close());

const get = (target: string) => rawRequest(port, "GET", target);
const json = (r: RawResponse) => JSON.parse(r.body.toString("utf8")) as unknown;
type Props = Record<string, unknown>;
type Collection = { type: string; features: { geometry: unknown; properties: Props }[] };

/** Both hosts answer a client's request: the preview over HTTP, Netlify by its engine; same status and bytes. */
async function onBothHosts(target: string): Promise<RawResponse> {
  const p = await get(target);
  const n = netlify.answer(target);
  if ("error" in n) throw new Error(`${target}: ${n.error}`);
  expect([n.status, n.body!.equals(p.body)], `${target} on Netlify`).toEqual([p.status, true]);
  if (p.status === 200) expect(n.headers["Content-Type"], target).toBe("application/json");
  return p;
}

describe("the original's own recordings, with its field names and list defaults (expected-opennet.ndjson.gz)", () => {
  let expected: Expected[];
  beforeAll(() => {
    expected = readExpected(EXPECTED_OPENNET);
  });

  it("answers all 4,701 over the preview by their match rules, with the API headers", async () => {
    expect(expected).toHaveLength(4701);
    // The preview's answers on the shared build, as the server files ask them (support/answers.ts): the
    // first file of the run to ask keeps them, the others compare the same bytes without asking again.
    const requests = expected.map((e) => ({ method: "GET", target: e.path }));
    const responses = await previewAnswersOnce("public-opennet", requests, () => rawRequests(port, requests));
    const failures: string[] = [];
    responses.forEach((r, i) => {
      const e = expected[i];
      const m = mismatch(e, { status: r.status, body: r.body.toString("utf8"), location: r.headers.location });
      if (m) failures.push(m);
      // a long answer has a gzip twin, so it varies with Accept-Encoding too (asked without it: its length is the file's)
      const headers = { ...API_HEADERS, vary: r.body.length >= TWIN.minBytes ? "Accept, Accept-Encoding" : "Accept" };
      if (r.status === 200)
        for (const [name, value] of Object.entries(headers))
          if (r.headers[name] !== value) failures.push(`${e.path}: ${name} ${r.headers[name]}`);
    });
    expect(failures.slice(0, 10)).toEqual([]);
    expect(failures).toHaveLength(0);
  });

  it("answers all 4,701 through Netlify's engine by their match rules, with its headers, but for its one documented limit", () => {
    const failures: string[] = [];
    const limits: string[] = [];
    for (const e of expected) {
      const n = netlify.answer(e.path);
      if ("error" in n) {
        failures.push(`${e.path}: ${n.error}`);
        continue;
      }
      const a = { status: n.status, body: n.body?.toString("utf8") };
      const m = mismatch(e, a);
      if (m && netlifyLimit(e, a)) limits.push(e.path);
      else if (m) failures.push(m);
      if (n.status === 200 || n.status === 404)
        for (const name of ["Content-Type", "Vary", "Access-Control-Allow-Origin"])
          if (n.headers[name] === undefined) failures.push(`${e.path}: no ${name} on Netlify`);
    }
    expect(failures.slice(0, 10)).toEqual([]);
    // Netlify cannot test a bound against the version pattern: "garbage" is its 404, counted here.
    expect(limits).toEqual(["/api/v1/accesspoint/?firmware_version__after=garbage"]);
  });
});

describe("the Opennet map (opennet-initiative/map, html/static/onimaps.js)", () => {
  // Its layers ask `<list>?[status=<s>&]data_format=geojson&in_bbox=<minLon,minLat,maxLon,maxLat>` on every pan and zoom.
  const box = "11.9,53.9,12.3,54.3";
  const layers = [
    "/api/v1/link/?",
    "/api/v1/accesspoint/?status=online&",
    "/api/v1/accesspoint/?status=flapping&",
    "/api/v1/accesspoint/?status=offline&",
    "/api/v1/site/?",
  ];

  it("gets every layer as a GeoJSON FeatureCollection with a box, the same as without it", async () => {
    for (const layer of layers) {
      const withBox = await onBothHosts(`${layer}data_format=geojson&in_bbox=${box}`);
      expect(withBox.status, layer).toBe(200);
      expect((json(withBox) as Collection).type).toBe("FeatureCollection");
      expect(withBox.body.equals((await get(`${layer}data_format=geojson`)).body), layer).toBe(true);
      // A box far away still gets everything: a superset, never a cut.
      expect(withBox.body.equals((await get(`${layer}data_format=geojson&in_bbox=-1,-1,0,0`)).body), layer).toBe(true);
    }
  });

  it("styles access points by the brand's fields and the links by is_wireless and quality", async () => {
    const online = json(await get(`/api/v1/accesspoint/?status=online&data_format=geojson&in_bbox=${box}`)) as Collection;
    expect(online.features.length).toBe(280);
    for (const f of online.features) {
      expect(f.properties).toHaveProperty("opennet_captive_portal_enabled");
      expect(f.properties).toHaveProperty("opennet_service_relay_enabled");
      expect(f.properties).not.toHaveProperty("mesh_captive_portal_enabled");
      expect(Number.isNaN(new Date(String(f.properties.lastseen_timestamp)).getTime())).toBe(false);
    }
    expect(online.features.some((f) => typeof f.properties.opennet_captive_portal_enabled === "boolean")).toBe(true);
    const links = json(await get(`/api/v1/link/?data_format=geojson&in_bbox=${box}`)) as Collection;
    expect(links.features.length).toBe(625);
    for (const f of links.features) expect(typeof f.properties.is_wireless).toBe("boolean");
  });

  it("centres on an access point by its GeoJSON detail (getAccessPointPosition)", async () => {
    const r = await onBothHosts("/api/v1/accesspoint/192.168.2.4?data_format=geojson");
    expect((json(r) as { position: { coordinates: number[] } }).position.coordinates).toEqual([12.120377, 54.072339]);
  });
});

describe("the router firmware (opennet-initiative/firmware, on-core): double slashes after /api/v1", () => {
  it("gets an access point and an interface's access point as by the single-slash path, on both hosts", async () => {
    const aps = json(await get("/api/v1/accesspoint/?status=all")) as Props[];
    for (const ap of aps.slice(0, 25)) {
      for (const [double, single] of [
        [`/api/v1//accesspoint/${String(ap.main_ip)}`, `/api/v1/accesspoint/${String(ap.main_ip)}`],
        [`/api/v1//interface/${String(ap.main_ip)}/accesspoint/`, `/api/v1/interface/${String(ap.main_ip)}/accesspoint/`],
      ]) {
        const a = await onBothHosts(double);
        const b = await get(single);
        expect([a.status, a.body.equals(b.body)], double).toEqual([b.status, true]);
      }
    }
    expect((await get("/api/v1//accesspoint/192.168.2.4")).status).toBe(200);
  });
});

describe("monitoring and DNS scripts (opennet-initiative/ansible: smokeping, munin, DNS zone)", () => {
  it("smokeping's targets: the opennet_id of the access points (7 in the sample)", async () => {
    for (const list of ["/api/v1/accesspoint/", "/api/v1/accesspoint/?status=online"]) {
      const aps = json(await onBothHosts(list)) as Props[];
      const ids = aps.map((a) => a.opennet_id).filter((id) => id !== null);
      expect(ids, list).toHaveLength(7);
      expect(aps.every((a) => !("mesh_id" in a))).toBe(true);
    }
  });

  it("munin's firmware versions: opennet_version (7 access points carry one)", async () => {
    const aps = json(await onBothHosts("/api/v1/accesspoint/")) as Props[];
    expect(aps.filter((a) => typeof a.opennet_version === "string" && a.opennet_version !== "")).toHaveLength(7);
  });

  it("the DNS generator's addresses: main_ip (and main_ipv6 where set) of every default-listed access point", async () => {
    const aps = json(await onBothHosts("/api/v1/accesspoint/")) as Props[];
    expect(aps.every((a) => typeof a.main_ip === "string" && /^\d+\.\d+\.\d+\.\d+$/.test(a.main_ip))).toBe(true);
    expect(aps.every((a) => a.main_ipv6 === null || typeof a.main_ipv6 === "string")).toBe(true);
  });
});

describe("the original's Freifunk nodelist generator (opennet-initiative/api, freifunk-api/geronimo_freifunknodelist.py)", () => {
  it("parses the lastseen_timestamp of every access point of the default list (280, the online ones)", async () => {
    const aps = json(await onBothHosts("/api/v1/accesspoint/")) as Props[];
    expect(aps).toHaveLength(280);
    for (const a of aps) expect(String(a.lastseen_timestamp)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{6})?Z$/);
    // status=all still gives everything, the never-seen ones with null.
    const all = json(await onBothHosts("/api/v1/accesspoint/?status=all")) as Props[];
    expect(all).toHaveLength(423);
    expect(all.filter((a) => a.lastseen_timestamp === null)).toHaveLength(143);
  });

  it("an access point's links follow the default too; status=all gives all of them", async () => {
    const links = json(await onBothHosts("/api/v1/accesspoint/192.168.2.4/links/")) as Props[];
    const all = json(await onBothHosts("/api/v1/accesspoint/192.168.2.4/links/?status=all")) as Props[];
    expect(links.length).toBeGreaterThan(0);
    expect(all.length).toBeGreaterThanOrEqual(links.length);
    expect((await get("/api/v1/accesspoint/192.168.2.4/links/?status=flapping")).status).toBe(404);
  });
});
