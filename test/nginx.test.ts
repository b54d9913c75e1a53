import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, startPreview } from "../src/index.ts";
import { placeholderValues } from "../src/core/plan.ts";
import { tableRequests } from "../src/core/requests.ts";
import { API, API_HEADERS, fileFor, NOT_FOUND_BODY } from "../src/core/routes.ts";
import { NGINX_LIMITS, nginxLimits } from "../src/hosts/nginx.ts";
import { EXPECTED_OPENNET, mismatch, PUBLIC_SAMPLE, readExpected, type Expected } from "./support/expected.ts";
import { hostileDump, hostileTargets } from "./support/hostile.ts";
import { pool, rawRequest, type RawResponse } from "./support/http.ts";
import { startNginx } from "./support/nginx.ts";
import { ROOT, tempDir } from "./support/tree.ts";

/**
 * Debian's nginx, started as a child process with the configuration `host-config nginx --standalone`
 * prints for the build it serves, answers every request like the preview: status, body bytes and
 * the API's headers, compared request by request. A difference is a failure unless it is one of
 * nginx's listed limits (NGINX_LIMITS, docs/hosting.md), recognised by the request and counted.
 */

const HEADERS = Object.keys(API_HEADERS).map((h) => h.toLowerCase());
type Limit = keyof typeof NGINX_LIMITS | "assetType";
const ASSET_TYPE =
  "a non-API file other than HTML: nginx types it by its mime.types, the preview as http-server does (charset spelled differently)";

type Site = Awaited<ReturnType<typeof site>>;

const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
});

async function site(data: string, settings?: Parameters<typeof build>[0]["settings"]) {
  const out = path.join(tempDir(), "dist");
  const result = await build({ data, out, ...(settings && { settings }) });
  const preview = await startPreview({ dir: out, port: 0 });
  const nginx = await startNginx(out, placeholderValues(result.model!));
  const s = { out, result, preview, previewPort: Number(new URL(preview.url).port), nginx };
  closers.push(() => Promise.all([nginx.stop(), preview.close()]));
  return s;
}

interface Request {
  readonly method: string;
  readonly target: string;
}

interface Comparison {
  readonly requests: number;
  readonly failures: string[];
  readonly limits: Partial<Record<Limit, number>>;
  readonly nginx: RawResponse[];
}

/** Which limit explains a difference, from the request alone; undefined if none does. */
function limitOf(r: Request, p: RawResponse, n: RawResponse): Limit | undefined {
  const q = r.target.indexOf("?");
  const rawPath = q < 0 ? r.target : r.target.slice(0, q);
  const query = q < 0 ? "" : r.target.slice(q + 1);
  const onlyType =
    p.status === n.status && p.body.equals(n.body) && HEADERS.every((h) => h === "content-type" || p.headers[h] === n.headers[h]);
  if (onlyType && !rawPath.startsWith("/api") && !/\.html?$|\/$/.test(rawPath) && p.status === 200) return "assetType";
  if (p.status === 400) return "malformed";
  if (query.split("&").some((part) => part.split("=")[0].includes("%"))) return "paramNames";
  if (/%(?:[46][1-9a-f]|[57][0-9a]|3[0-9]|2[de]|5f|7e)/i.test(query) && n.status === 404) return "escapedUnreserved";
  return undefined;
}

async function compare(s: Site, requests: readonly Request[]): Promise<Comparison> {
  const both = await pool(requests, 8, (r) =>
    Promise.all([rawRequest(s.previewPort, r.method, r.target), rawRequest(s.nginx.port, r.method, r.target)]),
  );
  const failures: string[] = [];
  const limits: Partial<Record<Limit, number>> = {};
  for (const [i, r] of requests.entries()) {
    const [p, n] = both[i];
    const same =
      p.status === n.status &&
      p.body.equals(n.body) &&
      HEADERS.every((h) => p.headers[h] === n.headers[h]) &&
      (p.status !== 301 || p.headers.location === n.headers.location);
    if (same) continue;
    const limit = limitOf(r, p, n);
    if (limit) limits[limit] = (limits[limit] ?? 0) + 1;
    else
      failures.push(
        `${r.method} ${r.target}: preview ${p.status} ${JSON.stringify(HEADERS.map((h) => p.headers[h]))}, nginx ${n.status} ${JSON.stringify(HEADERS.map((h) => n.headers[h]))} ${n.body.toString().slice(0, 80)}`,
      );
  }
  console.log(`${requests.length} requests, ${failures.length} unexplained differences, limits ${JSON.stringify(limits)}`);
  if (process.env.NGINX_DEBUG) console.log(failures.join("\n"));
  return { requests: requests.length, failures, limits, nginx: both.map(([, n]) => n) };
}

const GET = (target: string): Request => ({ method: "GET", target });

/** Every expected answer by its match rule over nginx, and each the preview's exactly. */
async function replayExpected(s: Site, expected: readonly Expected[], count: number): Promise<void> {
  expect(expected).toHaveLength(count);
  const c = await compare(
    s,
    expected.map((e) => GET(e.path)),
  );
  const wrong = expected.flatMap((e, i) => {
    const n = c.nginx[i];
    return mismatch(e, { status: n.status, body: n.body.toString(), location: n.headers.location }) ?? [];
  });
  expect(wrong.slice(0, 10)).toEqual([]);
  expect(c.failures.slice(0, 10)).toEqual([]);
  expect(c.limits).toEqual({});
}

/** Requests beyond the route table's: methods, unknown and hidden paths, the pages, slashes. */
function otherRequests(s: Site): Request[] {
  const ap = s.result.model!.accesspoints[0];
  const ipv6 = s.result.model!.accesspoints.find((a) => a.main_ipv6)?.main_ipv6;
  const paths = [
    "/",
    "/index.html",
    "/api",
    "/api/",
    "/api/v1",
    "/api/v1/",
    `${API}/?format=api`,
    `${API}/?format=json`,
    `${API}//accesspoint/${ap.main_ip}`,
    `${API}//link/`,
    `//api/v1/link`,
    `${API}/accesspoint/${ap.main_ip}/links?status=all`,
    `${API}/accesspoint/?in_bbox=12.0,54.0,12.2,54.2`,
    `${API}/link/?in_bbox=garbage&status=online`,
    `${API}/accesspoint/?status=online&status=offline`,
    `${API}/accesspoint/?status`,
    `${API}/accesspoint/?STATUS=online`,
    fileFor("openapi"),
    fileFor("netjson"),
    `${fileFor("netjson")}?status=online`,
    "/map",
    "/map/",
    "/map/map.js",
    "/map/leaflet/leaflet.css",
    "/map/leaflet/",
    "/snapshots/",
    "/nope",
    "/nope/",
    fileFor("notFoundPage"),
    fileFor("aliases"),
    fileFor("marker"),
    fileFor("buildRecord"),
    fileFor("redirectRules"),
    `${API}/index.json`,
    `${API}/nothing`,
    "/api/v2/",
    `${API}/link/%ZZ`,
    `${API}/interface/?wifi_ssid=%E9`,
    `${API}/accesspoint/?firmware_version=%`,
    `${API}/accesspoint/?status=%6Fnline`,
    `${API}/accesspoint/?%73tatus=online`,
    ...(ipv6 ? [`${API}/accesspoint/${ipv6}`, `${API}/accesspoint/${ipv6.replace(/:/g, "%3A")}`, `${API}/accesspoint/${ipv6}/links`] : []),
  ];
  return [...paths.map(GET), ...paths.flatMap((target) => ["HEAD", "OPTIONS", "POST", "DELETE"].map((method) => ({ method, target })))];
}

describe("nginx on the public sample, default options", () => {
  let s: Site;
  beforeAll(async () => {
    s = await site(`${PUBLIC_SAMPLE}dump`);
  }, 120_000);

  it("answers all 4,699 expected requests by their match rules, each exactly as the preview does", async () => {
    await replayExpected(s, readExpected(), 4699);
  });

  it("answers every request of the route table's list like the preview", async () => {
    const targets = tableRequests(s.result.model!).map((r) => r.target);
    expect(targets.length).toBeGreaterThan(500);
    const c = await compare(s, targets.map(GET));
    expect(c.failures.slice(0, 10)).toEqual([]);
    expect(c.limits).toEqual({});
  });

  it("answers HEAD, OPTIONS, other methods, unknown and hidden paths, the pages and slashes like the preview, but for its listed limits", async () => {
    const c = await compare(s, otherRequests(s));
    expect(c.failures.slice(0, 10)).toEqual([]);
    // Malformed encoding (3 targets, 5 methods); an escaped letter in a value (GET, HEAD, OPTIONS; other methods are refused alike), in a name (GET: HEAD and OPTIONS answer alike); two asset types (GET, HEAD).
    expect(c.limits).toEqual({ malformed: 15, escapedUnreserved: 3, paramNames: 1, assetType: 4 });
  });

  it("would notice a wrong answer (the comparison can fail)", async () => {
    const c = await compare(s, [GET(`${API}/site/1`)]);
    const other = await rawRequest(s.previewPort, "GET", `${API}/site/2`);
    expect(c.nginx[0].status).toBe(200);
    expect(c.nginx[0].body.equals(other.body)).toBe(false);
    expect(c.nginx[0].body.toString()).not.toBe(NOT_FOUND_BODY);
  });
});

describe("nginx on the public sample, --brand opennet --default-status online", () => {
  let s: Site;
  beforeAll(async () => {
    s = await site(`${PUBLIC_SAMPLE}dump`, { brand: "opennet", defaultStatus: "online" });
  }, 120_000);

  it("answers all 4,701 expected requests by their match rules, each exactly as the preview does", async () => {
    await replayExpected(s, readExpected(EXPECTED_OPENNET), 4701);
  });

  it("answers the route table's requests and the others like the preview", async () => {
    const c = await compare(s, [...tableRequests(s.result.model!).map((r) => GET(r.target)), ...otherRequests(s)]);
    expect(c.failures.slice(0, 10)).toEqual([]);
    expect(Object.keys(c.limits).sort()).toEqual(["assetType", "escapedUnreserved", "malformed"]);
  });
});

describe("nginx on the repository's data/", () => {
  it("answers every request of the route table's list like the preview", async () => {
    const s = await site(path.join(ROOT, "data"));
    const c = await compare(
      s,
      tableRequests(s.result.model!).map((r) => GET(r.target)),
    );
    expect(c.failures.slice(0, 10)).toEqual([]);
    expect(c.limits).toEqual({});
  }, 120_000);
});

describe("nginx on hostile filter values", () => {
  let s: Site;
  beforeAll(async () => {
    s = await site(hostileDump());
  }, 120_000);

  it("answers every value in every spelling like the preview, also with reserved characters sent raw", async () => {
    const targets = hostileTargets();
    // Characters a query may hold raw, sent raw (":" of a MAC, "=" inside a value, "/" and "?"), and hex in lower case.
    const raw = targets.map((t) => t.replace(/%3A/g, ":").replace(/%2F/g, "/").replace(/%3F/g, "?").replace(/%3D/g, "="));
    const lower = targets.map((t) => t.replace(/%[0-9A-F]{2}/g, (x) => x.toLowerCase()));
    const c = await compare(s, [...targets, ...raw, ...lower].map(GET));
    expect(c.failures.slice(0, 10)).toEqual([]);
    expect(c.limits).toEqual({});
    expect(c.nginx.filter((n) => n.status === 200).length).toBeGreaterThan(targets.length);
  });

  it("answers the route table's requests like the preview", async () => {
    const c = await compare(
      s,
      tableRequests(s.result.model!).map((r) => GET(r.target)),
    );
    expect(c.failures.slice(0, 10)).toEqual([]);
    expect(c.limits).toEqual({});
  });

  it("warns of no value: every hostile value folds letter by letter", () => {
    expect(nginxLimits(placeholderValues(s.result.model!))).toEqual([]);
    // A letter whose case folds to two letters is warned of: nginx matches letter by letter.
    const values = placeholderValues(s.result.model!);
    const strasse = { ...values, values: { ...values.values, mac: ["straße"] } };
    expect(nginxLimits(strasse).map((w) => w.message)).toEqual([`if_hwaddress="straße": ${NGINX_LIMITS.caseFolding}`]);
  });
});
