import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { request as httpRequest } from "node:http";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, startPreview, type Preview } from "../src/index.ts";
import { synthesize, writeSynthDump } from "../src/gen/synth.ts";
import { sampleSite } from "./support/site.ts";
import { tableRequests } from "./support/requests.ts";
import { API_HEADERS, DOCS_FOLDER, NOT_FOUND_BODY, RULES, TWIN } from "../src/core/routes.ts";
import { mismatch, readExpected } from "./support/expected.ts";
import { pool, rawRequest, rawRequests, type RawAsk, type RawResponse } from "./support/http.ts";
import type { Model } from "../src/core/model/model.ts";
import { cli, cliArgs, cliAsync, tempDir } from "./support/tree.ts";

/** The preview over real HTTP on an ephemeral loopback port, serving the built public sample. */

let preview: Preview;
let port: number;
let model: Model;
let out: string;

beforeAll(async () => {
  const site = await sampleSite();
  ({ out, preview, port } = site);
  model = site.result.model!;
  mkdirSync(path.join(out, "snapshots"), { recursive: true }); // the build holds its placeholder page
  writeFileSync(path.join(out, "snapshots/readme.txt"), "static file");
});

afterAll(() => preview?.close());

const get = (target: string | Buffer, method = "GET", headers: Record<string, string> = {}) => rawRequest(port, method, target, headers);
const answer = (r: RawResponse) => ({ status: r.status, body: r.body.toString("utf8"), location: r.headers.location });

/** The API's Vary, with Accept-Encoding for an answer long enough to have a gzip twin (asked for without one: its length is the file's). */
const varyOf = (r: RawResponse) =>
  r.status === 200 && Number(r.headers["content-length"] ?? r.body.length) >= TWIN.minBytes ? "Accept, Accept-Encoding" : "Accept";

function expectApiHeaders(r: RawResponse) {
  expect(r.headers["content-type"]).toBe("application/json");
  expect(r.headers.allow).toBe("GET, HEAD, OPTIONS");
  expect(r.headers.vary).toBe(varyOf(r));
  expect(r.headers["access-control-allow-origin"]).toBe("*");
}

describe("HTTP conformance: the 4,699 recorded responses through the preview", () => {
  it("answers every one by its match rule, with the API headers on every 200", async () => {
    const expected = readExpected();
    expect(expected).toHaveLength(4699);
    const responses = await rawRequests(
      port,
      expected.map((e) => ({ method: "GET", target: e.path })),
    );
    const failures: string[] = [];
    responses.forEach((r, i) => {
      const m = mismatch(expected[i], answer(r));
      if (m) failures.push(m);
      if (r.status === 200) {
        for (const [name, value] of Object.entries({ "content-type": "application/json", allow: "GET, HEAD, OPTIONS", vary: varyOf(r) })) {
          if (r.headers[name] !== value) failures.push(`${expected[i].path}: ${name} is ${r.headers[name]}`);
        }
      }
    });
    expect(failures.slice(0, 10)).toEqual([]);
    expect(responses.filter((r) => r.status === 200).length).toBeGreaterThan(4500);
  });
});

describe("the tests' HTTP client", () => {
  it("gives over connections kept alive (rawRequests) the answers it gives over a connection a request (rawRequest)", async () => {
    const paths = readExpected()
      .filter((_, i) => i % 20 === 0)
      .map((e) => e.path);
    const methods = ["GET", "HEAD", "OPTIONS", "POST", "DELETE"];
    const asks: RawAsk[] = [
      ...paths.map((target, i) => ({ method: methods[i % methods.length], target })),
      ...paths.slice(0, 40).map((target) => ({ method: "GET", target, headers: { "Accept-Encoding": "gzip" } })),
      { method: "GET", target: "/api/v1/link/%ZZ" },
      { method: "GET", target: "/no/such/file" },
      { method: "GET", target: "/api/v1/accesspoint" },
    ];
    const kept = await rawRequests(port, asks, 3);
    const single = await pool(asks, 8, (a) => rawRequest(port, a.method, a.target, a.headers));
    const same = ({ status, headers, body }: RawResponse) => ({
      status,
      headers: Object.fromEntries(Object.entries(headers).filter(([k]) => !["date", "connection", "keep-alive"].includes(k))),
      body: body.toString("base64"),
    });
    expect(kept.map(same)).toEqual(single.map(same));
    expect(new Set(kept.map((r) => r.status))).toEqual(new Set([200, 301, 400, 404, 405]));
    expect(kept.some((r) => r.headers["content-encoding"] === "gzip")).toBe(true);
  });
});

describe("preview behaviour", () => {
  it("answers every request of the route table's list without a server error, and each rule is hit", async () => {
    const requests = tableRequests(model);
    const responses = await rawRequests(
      port,
      requests.map((q) => ({ method: "GET", target: q.target })),
    );
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
      "/api/v1/link/",
      "/api/v1/link/1",
      "/api/v1/link/10.2.1.1-10.2.0.248",
      "/api/v1/accesspoint/192.168.2.4/links/",
      "/api/v1/site/",
      "/api/v1/accesspoint/",
      "/api/v1/accesspoint/192.168.2.4",
      "/api/v1/interface/",
      "/api/v1/interface/192.168.2.4",
      "/api/v1/interface/192.168.2.4/accesspoint/",
      "/api/v1/site/1",
      "/api/v1/accesspoint/192.168.2.4/interfaces/",
    ]) {
      const plain = await get(target);
      expect(plain.status, target).toBe(200);
      expect((await get(`${target}?format=api`)).body.equals(plain.body)).toBe(true);
    }
    const filtered = await get("/api/v1/accesspoint/?firmware_version=0.4-5&status=online");
    expect((await get("/api/v1/accesspoint/?format=api&firmware_version=0.4-5&status=online")).body.equals(filtered.body)).toBe(true);
    expect(
      (await get("/api/v1/accesspoint/?status=online&unknown=1")).body.equals((await get("/api/v1/accesspoint/?status=online")).body),
    ).toBe(true);
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
      "/api/v1/accesspoint/?firmware_version__before=",
      "/api/v1/accesspoint/?status=sometimes",
      "/api/v1/interface/?wifi_ssid=Z10-Klinikum&if_hwaddress=00:15:6d:80:08:f3",
      "/api/v1/accesspoint/192.168.2.4/links/?status=online",
      "/api/v1/link/?status=",
    ]) {
      const r = await get(target);
      if (target.endsWith("=")) expect(r.status).toBe(200);
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
      expectApiHeaders(r);
    }
    expect((await get("/api/v1/site/1")).status).toBe(200); // still up
  });

  it("serves other files of the build as they are", async () => {
    const r = await get("/snapshots/readme.txt");
    expect(r.status).toBe(200);
    expect(r.body.toString()).toBe("static file");
  });

  it("sends a long answer's gzip twin to a client that accepts gzip, the file to others, with the same headers but Content-Encoding", async () => {
    for (const target of ["/api/v1/accesspoint/?status=online", "/api/v1/link/", "/metrics"]) {
      const plain = await get(target);
      expect(plain.body.length).toBeGreaterThanOrEqual(TWIN.minBytes);
      const api = target.startsWith("/api/");
      expect(plain.headers.vary).toBe(api ? "Accept, Accept-Encoding" : "Accept-Encoding");
      expect(plain.headers["content-encoding"]).toBeUndefined();
      for (const accept of ["gzip", "br, gzip;q=0.5", "*"]) {
        const zipped = await get(target, "GET", { "Accept-Encoding": accept });
        expect(zipped.status).toBe(200);
        expect(zipped.headers["content-encoding"]).toBe("gzip");
        // Buffer.equals: vitest's deep equality takes seconds over a list's bytes
        expect(gunzipSync(zipped.body).equals(plain.body)).toBe(true);
        expect(Number(zipped.headers["content-length"])).toBe(zipped.body.length);
        expect(zipped.body.length).toBeLessThan(plain.body.length / 4);
        const { "content-encoding": _, "content-length": __, etag, "last-modified": ___, date, ...same } = zipped.headers;
        const { "content-length": ____, etag: plainTag, "last-modified": _____, date: ______, ...expected } = plain.headers;
        expect(same).toEqual(expected);
        // another representation, another validator
        expect(etag).not.toBe(plainTag);
        const head = await bodiless(target, "HEAD", { "Accept-Encoding": accept });
        expect([head.status, head.body.length, head.headers["content-length"], head.headers["content-encoding"]]).toEqual([
          200,
          0,
          zipped.headers["content-length"],
          "gzip",
        ]);
        // a cache revalidating what it holds
        const again = await bodiless(target, "GET", { "Accept-Encoding": accept, "If-None-Match": etag! });
        expect([again.status, again.body.length]).toEqual([304, 0]);
        const stale = await get(target, "GET", { "If-None-Match": etag! });
        expect(stale.status).toBe(200);
        expect(stale.body.equals(plain.body)).toBe(true);
      }
      for (const accept of ["identity", "deflate", "br", "gzip;q=0", "*;q=0"]) {
        const r = await get(target, "GET", { "Accept-Encoding": accept });
        expect([r.status, r.headers["content-encoding"], r.headers.vary]).toEqual([200, undefined, plain.headers.vary]);
        expect(r.body.equals(plain.body)).toBe(true);
      }
    }
    // a short answer, OPTIONS and the 404 stay as they were
    const short = await get("/api/v1/site/1", "GET", { "Accept-Encoding": "gzip" });
    expect([short.headers.vary, short.headers["content-encoding"]]).toEqual(["Accept", undefined]);
    const options = await get("/api/v1/link/", "OPTIONS", { "Accept-Encoding": "gzip" });
    expect([options.status, options.headers.vary, options.headers["content-encoding"]]).toEqual([200, "Accept", undefined]);
    expect(JSON.parse(options.body.toString())).toMatchObject({ renders: ["application/json"] });
    const missing = await get("/api/v1/nothing/", "GET", { "Accept-Encoding": "gzip" });
    expect([missing.status, missing.body.toString(), missing.headers["content-encoding"]]).toEqual([
      404,
      '{"detail":"Not found."}',
      undefined,
    ]);
  });

  it("streams a file over 1 MiB whole, and a range of it, with its length; a client that leaves closes the file", async () => {
    const file = path.join(out, "snapshots/long.tar.gz");
    const bytes = Buffer.from(Array.from({ length: 3_000_000 }, (_, i) => (i * 7919) % 251));
    writeFileSync(file, bytes);
    try {
      const whole = await get("/snapshots/long.tar.gz");
      expect([whole.status, whole.headers["content-length"], whole.body.equals(bytes)]).toEqual([200, "3000000", true]);
      const part = await get("/snapshots/long.tar.gz", "GET", { Range: "bytes=1000-2000999" });
      expect([part.status, part.headers["content-range"], part.body.equals(bytes.subarray(1000, 2001000))]).toEqual([
        206,
        "bytes 1000-2000999/3000000",
        true,
      ]);
      const tail = await get("/snapshots/long.tar.gz", "GET", { Range: "bytes=2999990-" });
      expect([tail.status, tail.body.equals(bytes.subarray(2999990))]).toEqual([206, true]);
      // a client that reads the head and goes
      await new Promise<void>((done, fail) => {
        const request = httpRequest({ port, path: "/snapshots/long.tar.gz" }, (response) => {
          response.once("data", () => {
            request.destroy();
            done();
          });
        });
        request.on("error", fail);
        request.end();
      });
      await expect.poll(() => openDescriptors((f) => f === file), { timeout: 5000 }).toEqual([]);
    } finally {
      rmSync(file, { force: true });
    }
  });

  it("revalidates by If-None-Match (a list of tags, compared weakly, or *) before If-Modified-Since", async () => {
    const target = "/api/v1/link/";
    const plain = await get(target);
    const [tag, lastModified] = [plain.headers.etag!, plain.headers["last-modified"]!];
    expect(tag).toMatch(/^W\/"/);
    const longAgo = "Mon, 01 Jan 1990 00:00:00 GMT";
    for (const match of [tag, tag.slice(2), `"other", ${tag}`, "*"]) {
      const r = await bodiless(target, "GET", { "If-None-Match": match, "If-Modified-Since": longAgo });
      expect([r.status, r.body.length, r.headers.etag], match).toEqual([304, 0, tag]);
    }
    const other = await get(target, "GET", { "If-None-Match": '"other"', "If-Modified-Since": lastModified });
    expect([other.status, other.body.equals(plain.body)]).toEqual([200, true]);
    expect((await bodiless(target, "HEAD", { "If-Modified-Since": lastModified })).status).toBe(304);
    for (const since of [longAgo, "not a date"]) expect((await get(target, "GET", { "If-Modified-Since": since })).status).toBe(200);
  });

  it("answers files that another process removes and writes again meanwhile whole, or as the JSON 404, and stays up", async () => {
    // http-server read a text file by its name after its own look: a file removed in between ended the process.
    const files = new Map([
      ["/api/v1/site/1", path.join(out, "api/v1/site/1/index.json")],
      ["/snapshots/readme.txt", path.join(out, "snapshots/readme.txt")],
    ]);
    const bytes = new Map([...files].map(([target, file]) => [target, readFileSync(file)]));
    const churn = spawn(process.execPath, [
      "-e",
      `const fs = require("node:fs"); const files = JSON.parse(process.argv[1]);
       for (;;) for (const [file, text] of files) { try { fs.unlinkSync(file); } catch {} fs.writeFileSync(file, text); }`,
      JSON.stringify([...files].map(([target, file]) => [file, bytes.get(target)!.toString()])),
    ]);
    const closed = new Promise((done) => churn.once("close", done));
    // a hung request must not leave the loop running after the test's time-out
    const guard = setTimeout(() => churn.kill("SIGKILL"), 50_000);
    // the whole file, and (a resumed download) a range of the snapshot file
    const asks = Array.from({ length: 1200 }, (_, i) => ({
      method: "GET",
      target: [...files.keys()][i % 2],
      headers: (i % 3 === 2 ? { Range: "bytes=2-5" } : {}) as Record<string, string>,
    }));
    try {
      const answers = await rawRequests(port, asks);
      const kinds = new Set(
        answers.map((r, i) => {
          const whole = bytes.get(asks[i].target)!;
          const ranged = "Range" in asks[i].headers && asks[i].target.startsWith("/snapshots/");
          if (r.status === 404 && r.body.toString() === NOT_FOUND_BODY) return "404";
          // a file caught while it was written again is shorter, or empty (a range of it not satisfiable)
          if (!ranged && r.status === 200 && whole.subarray(0, r.body.length).equals(r.body)) return "200";
          if (ranged && r.status === 206 && whole.subarray(2, 2 + r.body.length).equals(r.body)) return "206";
          if (ranged && r.status === 416) return "416";
          return `${asks[i].target} ${JSON.stringify(asks[i].headers)}: ${r.status} ${r.body.toString().slice(0, 40)}`;
        }),
      );
      expect([...kinds].filter((k) => !["200", "206", "404", "416"].includes(k))).toEqual([]);
      expect(kinds.has("200")).toBe(true);
    } finally {
      clearTimeout(guard);
      churn.kill("SIGKILL");
      await closed;
      for (const [target, file] of files) writeFileSync(file, bytes.get(target)!);
    }
    for (const [target] of files) expect((await get(target)).body.equals(bytes.get(target)!)).toBe(true);
    // every file it opened is closed again; a descriptor closes just after its answer ends (the close
    // is asynchronous, and the client may already have read the answer), so the test waits a moment
    await expect.poll(() => openDescriptors((f) => f.startsWith(out)), { timeout: 5000 }).toEqual([]);
  });

  it("sends exactly the API headers of the route table", () => {
    expect(API_HEADERS).toEqual({
      "Content-Type": "application/json",
      Allow: "GET, HEAD, OPTIONS",
      Vary: "Accept",
      "Access-Control-Allow-Origin": "*",
    });
  });
});

/** This process's descriptors open on a file `wanted` accepts (by its path). */
function openDescriptors(wanted: (file: string) => boolean): string[] {
  return readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return wanted(readlinkSync(`/proc/self/fd/${fd}`));
    } catch {
      return false;
    }
  });
}

/**
 * An answer without a body (HEAD, 304) through Node's client, which knows there is none: the raw
 * exchange reads until the server closes, which a server keeping the connection does only later.
 */
function bodiless(target: string, method: string, headers: Record<string, string>): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, path: target, method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({ status: res.statusCode!, headers: res.headers as Record<string, string>, body: Buffer.concat(chunks) }),
      );
    });
    req.on("error", reject);
    req.end();
  });
}

/** Every href of a page, its entities undone (the pages escape &, <, >, " and '). */
function hrefs(page: string): string[] {
  const entities: Record<string, string> = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'" };
  return [...page.matchAll(/href="([^"]*)"/g)].map((m) => m[1].replace(/&(amp|lt|gt|quot|#39);/g, (e) => entities[e]));
}

function expectHtml(r: RawResponse) {
  expect(r.status).toBe(200);
  expect(r.headers["content-type"]).toBe("text/html; charset=utf-8");
}

describe("ways in: the landing page, the API root, JSON 404s", () => {
  it("serves / as the landing page, text/html, and every example link on it answers 200 with JSON", async () => {
    const r = await get("/");
    expectHtml(r);
    const page = r.body.toString("utf8");
    expect(page).toBe(readFileSync(path.join(out, "index.html"), "utf8"));
    expect(page).toContain(`taken at <time datetime="${model.takenAt!.text}">`);
    for (const n of [model.accesspoints.length, model.interfaces.length, model.links.length, model.sites.length])
      expect(page).toContain(`<td class="n">${n}</td>`);
    // The API reference's page is no JSON answer: checked below.
    const examples = hrefs(page).filter((h) => h.startsWith("/api/") && h !== DOCS_FOLDER);
    // Every endpoint of the API description has its example on the sample network (it has every kind of item),
    // and the OpenAPI document and the NetJSON graph are linked.
    expect(examples.length).toBe(20);
    expect(examples).toEqual(expect.arrayContaining(["/api/v1/openapi.json", "/api/v1/netjson/networkgraph.json"]));
    expect(examples).toEqual(expect.arrayContaining(["/api/v1/", "/api/v1/accesspoint/?status=online", "/api/v1/link/?status=online"]));
    expect(examples.some((h) => h.startsWith("/api/v1/interface/?wifi_ssid="))).toBe(true);
    const answers = await pool(examples, 8, (h) => get(h));
    answers.forEach((a, i) => {
      expect(a.status, examples[i]).toBe(200);
      expectApiHeaders(a);
      expect(() => JSON.parse(a.body.toString()), examples[i]).not.toThrow();
    });
    expect(hrefs(page)).toContain("/snapshots/");
    expect(hrefs(page)).toContain("/map/");
    expectHtml(await get("/map/"));
    expect(hrefs(page)).toContain(DOCS_FOLDER);
    expectHtml(await get(DOCS_FOLDER));
    // The map's own files, typed by their extension as a static host types them.
    expect((await get("/map/map.js")).headers["content-type"]).toMatch(/^(application|text)\/javascript\b/);
    expect((await get("/map/leaflet/leaflet.css")).headers["content-type"]).toMatch(/^text\/css\b/);
    expect((await get("/map/leaflet/images/layers.png")).headers["content-type"]).toBe("image/png");
    const head = await get("/", "HEAD");
    expectHtml(head);
    expect(head.body.length).toBe(0);
    expectHtml(await get("/index.html"));
  });

  it("answers /api/v1/ with the API root: every endpoint it lists answers 200", async () => {
    const r = await get("/api/v1/");
    expect(r.status).toBe(200);
    expectApiHeaders(r);
    const root = JSON.parse(r.body.toString());
    expect(root.taken_at).toBe(model.takenAt!.text);
    const links = Object.entries(root).filter(([, v]) => typeof v === "string" && v.startsWith("/"));
    expect(links.map(([k]) => k)).toEqual([
      "accesspoint",
      "interface",
      "link",
      "site",
      "openapi",
      "netjson",
      "freifunk_nodelist",
      "meshviewer",
      "freifunk_api", // the sample site is built with a Freifunk API template
      "changes",
      "feed",
      "map",
      "docs",
    ]);
    for (const [name, target] of links.slice(4)) expect((await get(target as string)).status, name).toBe(200);
    const endpoints = links.slice(0, 4);
    for (const [name, endpoint] of endpoints) {
      const e = await get(endpoint as string);
      expect(e.status, name).toBe(200);
      expect(Array.isArray(JSON.parse(e.body.toString()))).toBe(true);
      for (const filter of root.filters[name] as string[])
        expect((await get(`${endpoint}?${filter}=`)).status, `${name} ${filter}`).toBe(200);
    }
    expect((await get("/api/v1")).headers.location).toBe("/api/v1/");
    expect((await get("/api/v1/?format=api")).body.equals(r.body)).toBe(true);
    expect(JSON.parse((await get("/api/v1/", "OPTIONS")).body.toString())).toMatchObject({ name: "Api Root" });
  });

  it.each([
    "/nope",
    "/nope/",
    "/snapshots/missing.tar.gz",
    "/missing.html",
    "/index.htm",
    "/api/nope",
    "/api/v1/nothing",
    "/api/v1/index.json",
    "/api/v2/",
  ])("answers the unknown path %s with the JSON 404, as application/json", async (target) => {
    for (const method of ["GET", "HEAD"]) {
      const r = await get(target, method);
      expect(r.status).toBe(404);
      expectApiHeaders(r);
      expect(r.body.toString()).toBe(method === "HEAD" ? "" : '{"detail":"Not found."}');
    }
  });

  it("serves the 404 page itself as JSON, as Netlify does with its header rule", async () => {
    const r = await get("/404.html");
    expect(r.status).toBe(200);
    expectApiHeaders(r);
    expect(r.body.toString()).toBe('{"detail":"Not found."}');
  });

  it("answers a folder without an index.html with the JSON 404, and one with it without its slash by a redirect", async () => {
    // a folder of files without a page (the snapshots folder has one: its placeholder)
    mkdirSync(path.join(out, "files"));
    writeFileSync(path.join(out, "files/readme.txt"), "static file");
    const r = await get("/files/");
    expect(r.status).toBe(404);
    expectApiHeaders(r);
    mkdirSync(path.join(out, "pages"));
    writeFileSync(path.join(out, "pages/index.html"), "<!DOCTYPE html><title>x</title>");
    const redirect = await get("/pages?x=1");
    expect([redirect.status, redirect.headers.location]).toEqual([301, "/pages/?x=1"]);
    expect((await get("//pages")).headers.location).toBe("/pages/");
    expectHtml(await get("/pages/"));
  });
});

async function dumpOf(day: number, seed: number): Promise<string> {
  const dir = tempDir();
  const dump = synthesize({ aps: 30, seed });
  await writeSynthDump(dir, { ...dump, network: { ...dump.network, taken_at: `2026-11-${String(day).padStart(2, "0")}T03:00:00Z` } });
  return dir;
}

describe("ways in: /snapshots/ after builds with snapshots", () => {
  let site: Preview;
  let sitePort: number;
  let dist: string;

  beforeAll(async () => {
    dist = path.join(tempDir(), "dist");
    await build({ data: await dumpOf(1, 3), out: dist, snapshot: {} });
    await build({ data: await dumpOf(2, 4), out: dist, snapshot: {} });
    site = await startPreview({ dir: dist, port: 0 });
    sitePort = Number(new URL(site.url).port);
  });
  afterAll(() => site?.close());

  it("lists every archive kept as a page, and each of its links answers 200 with the file", async () => {
    const index = JSON.parse(readFileSync(path.join(dist, "snapshots/index.json"), "utf8")) as {
      snapshots: { date: string; files: { file: string; sha256: string }[] }[];
    };
    expect(index.snapshots.map((s) => s.date)).toEqual(["2026-11-02", "2026-11-01"]);
    const r = await rawRequest(sitePort, "GET", "/snapshots/");
    expectHtml(r);
    const page = r.body.toString("utf8");
    const links = hrefs(page);
    const archives = index.snapshots.flatMap((s) => s.files);
    expect(archives).toHaveLength(4);
    for (const f of archives) {
      expect(links).toContain(f.file);
      expect(page).toContain(f.sha256);
    }
    expect(links).toEqual(expect.arrayContaining(["SHA256SUMS", "index.json"]));
    for (const link of links) {
      const target = new URL(link, "http://x/snapshots/");
      const a = await rawRequest(sitePort, "GET", target.pathname + target.search);
      expect(a.status, link).toBe(200);
      if (target.pathname.startsWith("/snapshots/") && !target.pathname.endsWith("/")) {
        expect(a.body.equals(readFileSync(path.join(dist, decodeURIComponent(target.pathname)))), link).toBe(true);
      }
    }
    // The landing page's link to the downloads answers too, now that the site publishes them.
    const landing = (await rawRequest(sitePort, "GET", "/")).body.toString();
    expect(hrefs(landing)).toContain("/snapshots/");
    expect((await rawRequest(sitePort, "GET", "/snapshots")).headers.location).toBe("/snapshots/");
  });
});

describe("the preview command", () => {
  it("prints a URL that answers 200: the landing page", async () => {
    const child = spawn(process.execPath, [...cliArgs(), "preview", "--dir", out, "--port", "0", "--quiet"]);
    try {
      const line = await new Promise<string>((ok, fail) => {
        let text = "";
        child.stdout.on("data", (c) => {
          text += c;
          if (text.includes("\n")) ok(text);
        });
        child.on("close", (code) => fail(new Error(`preview exited ${code}`)));
      });
      const url = /at (http:\/\/\S+)/.exec(line)![1];
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      const r = await rawRequest(Number(new URL(url).port), "GET", new URL(url).pathname);
      expectHtml(r);
      expect(line).toContain(`${url}api/v1/`);
    } finally {
      child.kill("SIGTERM");
    }
  });

  it("says there is nothing to serve when --dir is not a folder (exit 2)", () => {
    const r = cli(["preview", "--dir", path.join(tempDir(), "nothing"), "--port", "0"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^mesh-api: nothing to serve: .*nothing is not a folder; run build first/);
  });

  it("says which port is in use and exits 2, without a stack trace", async () => {
    const holder = createServer();
    await new Promise<void>((ok) => holder.listen(0, "127.0.0.1", ok));
    const busy = (holder.address() as AddressInfo).port;
    try {
      const r = await cliAsync(["preview", "--dir", out, "--port", String(busy)]);
      expect(r.status).toBe(2);
      expect(r.stderr).toBe(`mesh-api: port ${busy} is in use; choose another with --port, or --port 0 for any free port\n`);
      expect(r.stdout).toBe("");
    } finally {
      await new Promise((ok) => holder.close(ok));
    }
  });
});
