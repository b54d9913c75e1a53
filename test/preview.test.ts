import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Preview } from "../src/index.ts";
import { sampleSite } from "./support/site.ts";
import { tableRequests } from "../src/core/requests.ts";
import { API_HEADERS, RULES } from "../src/core/routes.ts";
import { mismatch, readExpected } from "./support/expected.ts";
import { pool, rawRequest, type RawResponse } from "./support/http.ts";
import type { Model } from "../src/core/model.ts";

/** The preview over real HTTP on an ephemeral loopback port, serving the built public sample. */

let preview: Preview;
let port: number;
let model: Model;
let out: string;

beforeAll(async () => {
  const site = await sampleSite();
  ({ out, preview, port } = site);
  model = site.result.model!;
  mkdirSync(path.join(out, "snapshots"));
  writeFileSync(path.join(out, "snapshots/readme.txt"), "static file");
});

afterAll(() => preview?.close());

const get = (target: string | Buffer, method = "GET", headers: Record<string, string> = {}) => rawRequest(port, method, target, headers);
const answer = (r: RawResponse) => ({ status: r.status, body: r.body.toString("utf8"), location: r.headers.location });

function expectApiHeaders(r: RawResponse) {
  expect(r.headers["content-type"]).toBe("application/json");
  expect(r.headers.allow).toBe("GET, HEAD, OPTIONS");
  expect(r.headers.vary).toBe("Accept");
  expect(r.headers["access-control-allow-origin"]).toBe("*");
}

describe("HTTP conformance: the 4,640 recorded responses through the preview", () => {
  it("answers every one by its match rule, with the API headers on every 200", async () => {
    const expected = readExpected();
    expect(expected).toHaveLength(4640);
    const responses = await pool(expected, 8, (e) => get(e.path));
    const failures: string[] = [];
    responses.forEach((r, i) => {
      const m = mismatch(expected[i], answer(r));
      if (m) failures.push(m);
      if (r.status === 200) {
        for (const [name, value] of Object.entries({ "content-type": "application/json", allow: "GET, HEAD, OPTIONS", vary: "Accept" })) {
          if (r.headers[name] !== value) failures.push(`${expected[i].path}: ${name} is ${r.headers[name]}`);
        }
      }
    });
    expect(failures.slice(0, 10)).toEqual([]);
    expect(responses.filter((r) => r.status === 200).length).toBeGreaterThan(4500);
  });
});

describe("preview behaviour", () => {
  it("answers every request of the route table's list without a server error, and each rule is hit", async () => {
    const requests = tableRequests(model);
    const responses = await pool(requests, 8, (q) => get(q.target));
    expect(responses.filter((r) => r.status >= 500)).toEqual([]);
    for (const r of responses) if (r.status !== 301) expectApiHeaders(r);
    const hit = new Set(requests.filter((_, i) => responses[i].status === 200).map((q) => q.rule));
    const answering = RULES.filter((r) => r.to !== null && r.kind !== "not-found");
    expect(answering.filter((r) => !hit.has(r)).map((r) => `${r.from} ${JSON.stringify(r.query)}`)).toEqual([]);
  });

  it("HEAD gives the status and headers of GET, without a body", async () => {
    for (const target of ["/api/v1/site/1", "/api/v1/link/", "/api/v1/nothing", "/api/v1/accesspoint/?status=online"]) {
      const [g, h] = [await get(target), await get(target, "HEAD")];
      expect(h.status).toBe(g.status);
      expect(h.body.length).toBe(0);
      expect(h.headers["content-length"]).toBe(g.headers["content-length"]);
      expectApiHeaders(h);
    }
  });

  it("OPTIONS answers 200 with Allow and a JSON description; unknown paths 404", async () => {
    const r = await get("/api/v1/accesspoint/192.168.2.4/links/", "OPTIONS");
    expect(r.status).toBe(200);
    expectApiHeaders(r);
    expect(JSON.parse(r.body.toString())).toMatchObject({ name: "Accesspoint Link List", renders: ["application/json"] });
    expect((await get("/api/v1/nothing/", "OPTIONS")).status).toBe(404);
  });

  it.each(["POST", "PUT", "PATCH", "DELETE", "TRACE", "PROPFIND"])("%s is 405 with a JSON detail", async (method) => {
    const r = await get("/api/v1/link/", method, { "Content-Length": "0" });
    expect(r.status).toBe(405);
    expectApiHeaders(r);
    expect(r.body.toString()).toBe(JSON.stringify({ detail: `Method "${method}" not allowed.` }));
  });

  it("answers a method Node's parser does not know with a JSON 400", async () => {
    const r = await get("/api/v1/link/", "FOO");
    expect(r.status).toBe(400);
    expectApiHeaders(r);
    expect(JSON.parse(r.body.toString())).toEqual({ detail: "Malformed request." });
  });

  it("accepts format=api on every endpoint form, alone or with filters", async () => {
    for (const target of [
      "/api/v1/link/", "/api/v1/link/1", "/api/v1/link/10.2.1.1-10.2.0.248", "/api/v1/accesspoint/192.168.2.4/links/", "/api/v1/site/",
      "/api/v1/accesspoint/", "/api/v1/accesspoint/192.168.2.4", "/api/v1/interface/", "/api/v1/interface/192.168.2.4",
      "/api/v1/interface/192.168.2.4/accesspoint/", "/api/v1/site/1", "/api/v1/accesspoint/192.168.2.4/interfaces/",
    ]) {
      const plain = await get(target);
      expect(plain.status, target).toBe(200);
      expect((await get(`${target}?format=api`)).body.equals(plain.body)).toBe(true);
    }
    const filtered = await get("/api/v1/accesspoint/?firmware_version=0.4-5&status=online");
    expect((await get("/api/v1/accesspoint/?format=api&firmware_version=0.4-5&status=online")).body.equals(filtered.body)).toBe(true);
    expect((await get("/api/v1/accesspoint/?status=online&unknown=1")).body.equals((await get("/api/v1/accesspoint/?status=online")).body)).toBe(true);
  });

  it("serves firmware_version__before bounds with the same result from one file (aliases)", async () => {
    const dir = path.join(out, "api/v1/accesspoint/_q/firmware_version__before");
    expect(existsSync(path.join(dir, "0.5"))).toBe(true);
    expect(existsSync(path.join(dir, "0.5.1-unstable-845"))).toBe(false);
    for (const status of ["", "&status=online", "&status=all"]) {
      const a = await get(`/api/v1/accesspoint/?firmware_version__before=0.5${status}`);
      const b = await get(`/api/v1/accesspoint/?firmware_version__before=0.5.1-unstable-845${status}`);
      expect(a.status).toBe(200);
      expect(b.body.equals(a.body)).toBe(true);
    }
  });

  it("redirects list and sub-resource paths without their slash, keeping the query", async () => {
    const r = await get("/api/v1/accesspoint?status=online&format=api");
    expect(r.status).toBe(301);
    expect(r.headers.location).toBe("/api/v1/accesspoint/?status=online&format=api");
    expect((await get("/api/v1/interface/192.168.12.4/accesspoint")).headers.location).toBe("/api/v1/interface/192.168.12.4/accesspoint/");
    // The location comes from the normalised path, never a scheme-relative "//api/...".
    expect((await get("//api/v1/link?format=api")).headers.location).toBe("/api/v1/link/?format=api");
  });

  it("never answers a filter it did not precompute with another result", async () => {
    for (const target of [
      "/api/v1/accesspoint/?firmware_version=0.4-5&firmware_version__before=0.5",
      "/api/v1/accesspoint/?firmware_version__before=0.4.7",
      "/api/v1/accesspoint/?status=sometimes",
      "/api/v1/interface/?wifi_ssid=Z10-Klinikum&if_hwaddress=00:15:6d:80:08:f3",
      "/api/v1/accesspoint/192.168.2.4/links/?status=online",
      "/api/v1/link/?status=",
    ]) {
      const r = await get(target);
      if (target.endsWith("status=")) expect(r.status).toBe(200);
      else expect([r.status, r.body.toString()], target).toEqual([404, '{"detail":"Not found."}']);
    }
  });

  it("answers malformed and hostile requests with 400 or a JSON 404, never a file outside the folder", async () => {
    const cases: [string | Buffer, number[]][] = [
      ["/api/v1/link/%E0%A4%A", [400]],
      ["/api/v1/interface/?wifi_ssid=%ZZ", [400]],
      ["/api/v1/accesspoint/../../../../etc/passwd", [404]],
      ["/api/v1/accesspoint/..%2f..%2f..%2fetc%2fpasswd", [404]],
      ["/api/v1/accesspoint/%2e%2e/%2e%2e/index.json", [404]],
      ["/api/v1/link/1%00", [400]],
      ["/../../../etc/passwd", [400, 404]],
      ["/api/" + "a".repeat(8200), [414]],
      ["/api/v1/link/" + "9".repeat(7000), [404]],
      [Buffer.from("/api/v1/interface/?wifi_ssid=\xff\xfe", "latin1"), [400, 404]],
      ["/_redirects", [404]],
    ];
    for (const [target, statuses] of cases) {
      const r = await get(target);
      expect(statuses, String(target).slice(0, 60)).toContain(r.status);
      expect(r.body.toString()).not.toContain("root:");
      if (r.status !== 404 || String(target).startsWith("/api")) expectApiHeaders(r);
    }
    expect((await get("/api/v1/site/1")).status).toBe(200); // still up
  });

  it("serves other files of the build as they are", async () => {
    const r = await get("/snapshots/readme.txt");
    expect(r.status).toBe(200);
    expect(r.body.toString()).toBe("static file");
  });

  it("sends exactly the API headers of the route table", () => {
    expect(API_HEADERS).toEqual({ "Content-Type": "application/json", Allow: "GET, HEAD, OPTIONS", Vary: "Accept", "Access-Control-Allow-Origin": "*" });
  });
});
