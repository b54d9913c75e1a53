import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { setFlagsFromString } from "node:v8";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fg from "fast-glob";
import { build, startPreview } from "../src/index.ts";
import { BRAND_RULE } from "../src/core/settings.ts";
import { ACCESSPOINT_FIELDS } from "../src/core/model/fields.ts";
import { apiToDump, detectBrand, detectDefaultStatus, importApi, type ImportApiOptions } from "../src/importers/api.ts";
import { answerFromBuild, canonical, EXPECTED_OPENNET, mismatch, PUBLIC_SAMPLE, readExpected, type Answer } from "./support/expected.ts";
import { command, ROOT, tempDir } from "./support/tree.ts";

/**
 * `import api` against a replay of the original server: every recorded GET of the public sample is
 * answered with its recorded status, Content-Type and body. The imported dump must build into an API
 * that gives the original's answers; faults (a list answering 500, a cut body, HTML, an endless
 * body) must end in exit 1 with the URL named and no dump written.
 *
 * The command runs where what is tested is the command (its exit codes, what it prints, a second run,
 * a folder it refuses); the faults' messages and what is left on disk are the importer's, so most
 * faults run through the library in this process (the command turns its error into exit 1 and "no
 * dump was written", shown once with a fault).
 */

const RESPONSES = path.join(ROOT, "test/fixtures/public-sample/responses.ndjson.gz");
const TAKEN_AT = "2026-11-22T11:28:02.756363Z"; // the hand-made sample dump's taken_at

interface Recorded {
  readonly seq: number;
  readonly method: string;
  readonly path: string;
  readonly request_headers: Record<string, string>;
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body_kind: string;
  readonly body: unknown;
}

const recorded = new Map<string, { status: number; type: string; body: string }>();
let htmlPage = "";
for (const line of gunzipSync(readFileSync(RESPONSES)).toString("utf8").split("\n")) {
  if (line.trim() === "") continue;
  const r = JSON.parse(line) as Recorded;
  if (r.method !== "GET") continue;
  const body = r.body_kind === "json" ? JSON.stringify(r.body) : typeof r.body === "string" ? r.body : "";
  if (r.path === "/api/v1/site/?format=api") htmlPage = body;
  // The plain request (no Accept header) is what a client that asks for JSON gets.
  if (Object.keys(r.request_headers).length > 0 || recorded.has(r.path)) continue;
  recorded.set(r.path, { status: r.status, type: r.headers["Content-Type"] ?? "", body });
}

/** What the replay server does instead of the recording, by path. */
type Fault = "500" | "cut" | "html" | "endless" | "wrong-shape" | "hang" | "invalid" | "status=all" | "status=offline";
const faults = new Map<string, Fault>();
const hits = new Map<string, number>();
let server: http.Server;
let base: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const target = req.url ?? "/";
    hits.set(target, (hits.get(target) ?? 0) + 1);
    const fault = faults.get(target);
    const rec = recorded.get(target);
    if (fault === "500") {
      res.writeHead(500, { "content-type": "text/html" }).end("<h1>Server Error (500)</h1>");
    } else if (fault === "html") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(htmlPage);
    } else if (fault === "wrong-shape") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ detail: "Not found." }));
    } else if (fault === "endless") {
      res.writeHead(200, { "content-type": "application/json" });
      res.write("[");
      const more = () => {
        while (res.write('{"main_ip": "10.0.0.1"},' + " ".repeat(1000))) {}
      };
      res.on("drain", more);
      res.on("close", () => res.off("drain", more));
      more();
    } else if (fault === "hang") {
      // never answers; the client's time-out ends it
    } else if (fault === "invalid" && rec) {
      const list = JSON.parse(rec.body) as object[];
      list[2] = { ...list[2], position: { type: "Point", coordinates: [12.1, 95] } };
      res.writeHead(200, { "content-type": rec.type }).end(JSON.stringify(list));
    } else if (fault === "status=all" || fault === "status=offline") {
      // a server whose list without status answers what the recorded one gave for this status
      const other = recorded.get(`${target}?${fault}`)!;
      res.writeHead(other.status, { "content-type": other.type }).end(other.body);
    } else if (fault === "cut" && rec) {
      const bytes = Buffer.from(rec.body);
      res.writeHead(200, { "content-type": rec.type, "content-length": bytes.length });
      res.write(bytes.subarray(0, bytes.length >> 1), () => res.destroy());
    } else if (rec) {
      res.writeHead(rec.status, { "content-type": rec.type }).end(rec.body);
    } else {
      res.writeHead(404, { "content-type": "text/html" }).end("<h1>Not Found</h1>");
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const FAST = ["--retries", "2", "--retry-delay", "10", "--timeout", "5000", "--at", TAKEN_AT];
/** FAST for the library */
const FAST_OPTIONS = { retries: 2, retryDelayMs: 10, timeoutMs: 5000, at: TAKEN_AT } as const;

/** The library's import into a new folder while one path of the server answers with a fault: its error (none: undefined). */
async function libraryWithFault(target: string, fault: Fault, options: ImportApiOptions = {}, root = base) {
  faults.set(target, fault);
  const dir = `${tempDir()}/dump`;
  try {
    const error = await importApi(root, dir, { ...FAST_OPTIONS, ...options }).then(
      () => undefined,
      (err: unknown) => err as Error,
    );
    return { dir, error };
  } finally {
    faults.clear();
  }
}

/** `import api` into a new folder while one path of the server answers with a fault. */
async function importWithFault(target: string, fault: Fault, extra: string[] = []) {
  faults.set(target, fault);
  const dir = `${tempDir()}/dump`;
  try {
    return { dir, ...(await command(["import", "api", base, "--out", dir, ...FAST, ...extra])) };
  } finally {
    faults.clear();
  }
}

describe("import api: the public sample through a replay of the original server", () => {
  let dump: string;
  let out: string;
  let answer: (target: string) => Answer;

  beforeAll(async () => {
    dump = `${tempDir()}/dump`;
    const r = await importApi(base, dump, { at: TAKEN_AT, retries: 0 });
    expect(r).toMatchObject({ accesspoints: 423, interfaces: 492, links: 625, brand: "opennet", defaultStatus: "online" });
    out = `${tempDir()}/dist`;
    await build({ data: dump, out });
    answer = answerFromBuild(out);
  }, 120_000);

  it("builds, with the brand and list default it recorded, into an API that answers the original's clients (expected-opennet)", () => {
    const expected = readExpected(EXPECTED_OPENNET);
    expect(expected).toHaveLength(4701);
    const failures = expected.map((e) => mismatch(e, answer(e.path))).filter(Boolean);
    expect(failures.slice(0, 20)).toEqual([]);
    expect(failures).toHaveLength(0);
  });

  // With the description's names and defaults (brand mesh, default all) the dump answers all 4,699 of
  // expected.ndjson.gz: its records are the hand-made sample dump's (next test), whose build answers them
  // (conformance.test.ts); the build reads nothing else of a dump but network.json, checked below.

  it("writes the same records as the hand-made sample dump, and a dump marker", () => {
    const lines = (file: string) =>
      readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => JSON.parse(l) as unknown);
    const ours = { aps: lines(`${dump}/accesspoints/accesspoints.ndjson`), links: lines(`${dump}/links/links.ndjson`) };
    const theirs = {
      aps: lines(`${PUBLIC_SAMPLE}dump/accesspoints/accesspoints.ndjson`),
      links: JSON.parse(readFileSync(`${PUBLIC_SAMPLE}dump/links/links.json`, "utf8")) as unknown[],
    };
    expect(canonical(ours.aps)).toBe(canonical(theirs.aps));
    expect(canonical(ours.links)).toBe(canonical(theirs.links));
    // the recorded original writes opennet_ names, and its list without status holds the 280 of 423 online
    expect(JSON.parse(readFileSync(`${dump}/network.json`, "utf8"))).toEqual({
      format: "mesh-topology-dump/1",
      name: null,
      taken_at: TAKEN_AT,
      brand: "opennet",
      default_status: "online",
    });
    expect(JSON.parse(readFileSync(`${dump}/.mesh-api-output`, "utf8"))).toMatchObject({ kind: "dump" });
  });

  it("runs as a command: exit 0, a second run replaces its own dump, and a failed one leaves it as it was", async () => {
    const dir = `${tempDir()}/dump`;
    for (let i = 0; i < 2; i++) {
      const r = await command(["import", "api", base, "--out", dir, ...FAST]);
      expect(r.stderr).toContain("423 access points, 492 interfaces, 625 links");
      expect(r.stderr).toContain("brand opennet (its opennet_ fields as mesh_), default_status online");
      expect(r.status).toBe(0);
    }
    expect(readdirSync(dir).sort()).toEqual([".mesh-api-output", "accesspoints", "links", "network.json"]);
    const before = readFileSync(`${dir}/accesspoints/accesspoints.ndjson`, "utf8");
    faults.set("/api/v1/site/", "500");
    try {
      const failed = await command(["import", "api", base, "--out", dir, ...FAST]);
      expect(failed.status).toBe(1);
      expect(failed.stderr).toContain(`no dump was written and ${dir} was left as it was`);
    } finally {
      faults.clear();
    }
    expect(readFileSync(`${dir}/accesspoints/accesspoints.ndjson`, "utf8")).toBe(before);
  });
});

describe("import api: the list default, from the access point list without status and with status=all", () => {
  const network = (dir: string) => JSON.parse(readFileSync(`${dir}/network.json`, "utf8")) as Record<string, unknown>;

  it("all, when the list without status is the whole list", async () => {
    faults.set("/api/v1/accesspoint/", "status=all");
    const dir = `${tempDir()}/dump`;
    try {
      expect(await importApi(base, dir, FAST_OPTIONS)).toMatchObject({ brand: "opennet", defaultStatus: "all" });
    } finally {
      faults.clear();
    }
    expect(network(dir)).toMatchObject({ brand: "opennet", default_status: "all" });
  });

  it("not recorded, with a warning, when the list without status holds access points that are not online", async () => {
    const r = await importWithFault("/api/v1/accesspoint/", "status=offline");
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(
      /default_status not recorded: the access point list without status holds 143 of 423 access points, 143 of them not online/,
    );
    expect(r.stderr).toContain("default_status not recorded\n");
    expect(network(r.dir)).toMatchObject({ brand: "opennet", default_status: null });
  });

  it("is told by the build's rule: online is seen less than 30 minutes before taken_at", () => {
    const at = "2026-11-22T12:00:00Z";
    const ap = (ip: string, seen: string | null) => ({ main_ip: ip, lastseen_timestamp: seen });
    const all = [ap("10.0.0.1", "2026-11-22T11:30:00.000001Z"), ap("10.0.0.2", "2026-11-22T11:30:00Z"), ap("10.0.0.3", null)];
    expect(detectDefaultStatus([...all].reverse(), all, at)).toEqual({ status: "all" });
    expect(detectDefaultStatus([all[0]], all, at)).toEqual({ status: "online" });
    expect(detectDefaultStatus([], all, at)).toEqual({ status: "online" });
    // exactly 30 minutes is no longer online; never seen is not online
    for (const fewer of [[all[0], all[1]], [all[2]]]) {
      const d = detectDefaultStatus(fewer, all, at);
      expect(d.status).toBeNull();
      expect(d.note).toContain(`holds ${fewer.length} of 3 access points, 1 of them not online at taken_at ${at}`);
    }
    const stranger = detectDefaultStatus([ap("10.0.0.9", "2026-11-22T11:59:00Z")], all, at);
    expect(stranger.status).toBeNull();
    expect(stranger.note).toContain("holds 1 access points that the list with status=all does not hold (10.0.0.9, ...)");
  });
});

describe("import api: the pure transform", () => {
  it("detects the brand prefix, or takes it from --brand, and maps it to mesh_", () => {
    expect(detectBrand([{ main_ip: "10.0.0.1", opennet_version: "1", opennet_id: "2", device_model: "x" }])).toBe("opennet");
    expect(detectBrand([{ main_ip: "10.0.0.1", mesh_version: "1" }])).toBe("mesh");
    expect(detectBrand([{ main_ip: "10.0.0.1" }])).toBeUndefined();
    const lists = {
      accesspoints: [{ main_ip: "10.0.0.1", freifunk_version: "0.5", freifunk_id: "7", site: null }],
      interfaces: [
        {
          addresses: [{ id: 4, address: "10.0.0.1", family: "inet", netmask_prefixlen: 16, interface: 9 }],
          if_name: "wlan0",
          if_hwaddress: null,
          is_wireless: true,
          wifi_attributes: [{ interface: 9, wifi_ssid: "x", wifi_freq: "5.540", wifi_bitrate: "130.0" }],
          accesspoint: "10.0.0.1",
        },
      ],
      links: [],
      sites: [],
    };
    const d = apiToDump(lists, { takenAt: TAKEN_AT, brand: "freifunk" });
    expect(d.accesspoints[0]).toMatchObject({ mesh_version: "0.5", mesh_id: "7", site: null });
    expect(d.accesspoints[0].interfaces).toEqual([
      {
        id: 9,
        if_name: "wlan0",
        if_hwaddress: null,
        addresses: [{ id: 4, address: "10.0.0.1", netmask_prefixlen: 16 }],
        wifi: expect.objectContaining({ wifi_ssid: "x", wifi_freq: "5.540", wifi_bitrate: "130.0", wifi_channel: null }),
      },
    ]);
    expect(apiToDump(lists, { takenAt: TAKEN_AT }).accesspoints[0]).toMatchObject({ mesh_version: "0.5" });
    // network.json names the brand found or given; without the list without status, no default
    expect(d.network).toMatchObject({ brand: "freifunk", default_status: null });
    expect(apiToDump(lists, { takenAt: TAKEN_AT }).network).toMatchObject({ brand: "freifunk", default_status: null });
    const plain = { ...lists, accesspoints: [{ main_ip: "10.0.0.1", lastseen_timestamp: TAKEN_AT }], accesspointsByDefault: [] };
    expect(apiToDump(plain, { takenAt: TAKEN_AT }).network).toMatchObject({ brand: null, default_status: "online" });
  });

  it("makes each access point's record a compact object, however many fields the server sends (hash tables: 110 MB at 40,000 access points)", () => {
    // V8's own verdict on an object's layout; the flag only lets this process compile the check
    setFlagsFromString("--allow-natives-syntax");
    const compact = new Function("o", "return %HasFastProperties(o)") as (o: object) => boolean;
    const full = (ip: string, site: boolean) => ({
      main_ip: ip,
      ...Object.fromEntries(ACCESSPOINT_FIELDS.map(([name]) => [name, null])),
      ...(site ? { site: 1 } : {}),
    });
    const lists = { accesspoints: [full("10.0.0.1", true), full("10.0.0.2", false)], interfaces: [], links: [], sites: [] };
    const aps = apiToDump(lists, { takenAt: TAKEN_AT }).accesspoints;
    expect(aps.map((ap) => Object.keys(ap).length)).toEqual([ACCESSPOINT_FIELDS.length + 3, ACCESSPOINT_FIELDS.length + 3]);
    expect(aps.map(compact)).toEqual([true, true]);
    // the check can fail: an object that lost a property is a hash table
    const { ...lost }: Record<string, unknown> = Object.fromEntries(ACCESSPOINT_FIELDS.map(([name]) => [name, null]));
    delete lost.antenna;
    expect(compact(lost)).toBe(false);
  });

  it("refuses a list of the wrong shape, naming the list and the place", () => {
    expect(() => apiToDump({ accesspoints: { detail: "x" }, interfaces: [], links: [], sites: [] }, { takenAt: TAKEN_AT })).toThrow(
      /expected a JSON array of accesspoints/,
    );
    expect(() =>
      apiToDump(
        { accesspoints: [], interfaces: [{ addresses: [], accesspoint: "10.0.0.9" }], links: [], sites: [] },
        { takenAt: TAKEN_AT },
      ),
    ).toThrow("$[0].accesspoint: the interface belongs to 10.0.0.9, which the access point list does not hold");
    expect(() => apiToDump({ accesspoints: [{ main_ip: 3 }], interfaces: [], links: [], sites: [] }, { takenAt: TAKEN_AT })).toThrow(
      /\$\[0\]\.main_ip/,
    );
  });
});

describe("import api: faults end in exit 1, the URL named, and no dump written", () => {
  it("a list answering 500 after every retry (the command)", async () => {
    const target = "/api/v1/interface/";
    hits.delete(target);
    const r = await importWithFault(target, "500");
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`${base.slice(0, -1)}${target}`);
    expect(r.stderr).toMatch(/HTTP 500.*after 3 tries/);
    expect(r.stderr).toContain("no dump was written");
    expect(existsSync(r.dir)).toBe(false);
    expect(readdirSync(path.dirname(r.dir))).toEqual([]); // no temporary folder left either
    expect(hits.get(target)).toBe(3);
  });

  const cases: [string, string, Fault, RegExp][] = [
    ["a cut body", "/api/v1/link/?status=all", "cut", /broke off/],
    ["HTML instead of JSON", "/api/v1/site/", "html", /text\/html.*not JSON/],
    ["JSON of the wrong shape", "/api/v1/accesspoint/?status=all", "wrong-shape", /expected a JSON list/],
  ];
  for (const [what, target, fault, message] of cases) {
    it(what, async () => {
      hits.delete(target);
      const { dir, error } = await libraryWithFault(target, fault);
      expect(error?.message).toContain(`${base.slice(0, -1)}${target}`);
      expect(error?.message).toMatch(message);
      expect(existsSync(dir)).toBe(false);
      expect(readdirSync(path.dirname(dir))).toEqual([]); // no temporary folder left either
      if (fault === "cut") expect(hits.get(target)).toBe(3);
    });
  }

  it("an endless body, cut off at --max-bytes", async () => {
    const { dir, error } = await libraryWithFault("/api/v1/accesspoint/?status=all", "endless", { maxBytes: 200_000 });
    expect(error?.message).toContain(`${base}api/v1/accesspoint/?status=all`);
    expect(error?.message).toContain("longer than --max-bytes 200000");
    expect(existsSync(dir)).toBe(false);
  });

  it("a list that never answers, after the time-out and its retries", async () => {
    hits.delete("/api/v1/site/");
    const { dir, error } = await libraryWithFault("/api/v1/site/", "hang", { timeoutMs: 300, retries: 1 });
    expect(error?.message).toContain(`${base}api/v1/site/: timeout: no answer within 300 ms (after 2 tries)`);
    expect(hits.get("/api/v1/site/")).toBe(2);
    expect(existsSync(dir)).toBe(false);
  });

  it("data that does not make a valid dump, located in the list it came from", async () => {
    const { dir, error } = await libraryWithFault("/api/v1/accesspoint/?status=all", "invalid");
    expect(error?.message).toContain(
      `${base}api/v1/accesspoint/?status=all [2] $.position.coordinates[1]: latitude must be between -90 and 90`,
    );
    expect(existsSync(dir)).toBe(false);
  });

  it("a base URL that is not the API (404 for its lists) is not retried", async () => {
    hits.clear();
    const { dir, error } = await libraryWithFault("/nothing", "500", {}, `${base}elsewhere/`);
    expect(error?.message).toContain(`${base}elsewhere/api/v1/accesspoint/?status=all: HTTP 404`);
    expect(hits.get("/elsewhere/api/v1/accesspoint/?status=all")).toBe(1);
    expect(existsSync(dir)).toBe(false);
  });
});

describe("import api: usage errors exit 2", () => {
  it("refuses a folder it did not write, such as build, before reading anything", async () => {
    const cwd = tempDir();
    mkdirSync(`${cwd}/build`);
    writeFileSync(`${cwd}/build/index.html`, "mine");
    hits.clear();
    const r = await command(["import", "api", base, "--out", "build", ...FAST], cwd);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("refusing to write to build");
    expect(hits.size).toBe(0);
    expect(readdirSync(`${cwd}/build`)).toEqual(["index.html"]);
  });

  it("a bad --at or --brand is a usage error", async () => {
    const dir = `${tempDir()}/dump`;
    const at = await command(["import", "api", base, "--out", dir, "--at", "yesterday"]);
    expect(at.status).toBe(2);
    expect(at.stderr).toContain("--at");
    const brand = await command(["import", "api", base, "--out", dir, "--brand", "open net"]);
    expect(brand.status).toBe(2);
    expect(brand.stderr).toContain(BRAND_RULE);
    expect(existsSync(dir)).toBe(false);
  });

  it("the library refuses a bad brand too, with the same rule, before reading anything", async () => {
    const dir = `${tempDir()}/dump`;
    hits.clear();
    for (const bad of ["open net", "open-net", "opennet_"])
      await expect(importApi(base, dir, { brand: bad })).rejects.toThrow(`--brand ${JSON.stringify(bad)}: ${BRAND_RULE}`);
    expect(hits.size).toBe(0);
    expect(existsSync(dir)).toBe(false);
  });

  it("a missing --out is a usage error", async () => {
    const r = await command(["import", "api", base]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("--out");
  });
});

describe("import api of a static copy (issue 28, item 7)", () => {
  it("takes taken_at from the API root and the community from the nodelist: the mirror's build answers as the site it mirrors", async () => {
    const out = path.join(tempDir(), "site");
    await build({
      data: `${PUBLIC_SAMPLE}dump`,
      out,
      settings: { communityName: "Opennet Initiative e.V.", communityUrl: "https://www.opennet-initiative.de/" },
    });
    const preview = await startPreview({ dir: out, port: 0 });
    try {
      const dump = path.join(tempDir(), "dump");
      await importApi(preview.url, dump, FAST_OPTIONS);
      const network = JSON.parse(readFileSync(path.join(dump, "network.json"), "utf8")) as Record<string, unknown>;
      expect([network.taken_at, network.name, network.community_url]).toEqual([
        TAKEN_AT,
        "Opennet Initiative e.V.",
        "https://www.opennet-initiative.de/",
      ]);
      const mirror = path.join(tempDir(), "mirror");
      await build({ data: dump, out: mirror });
      // every status list and the nodelist the same bytes as the site's
      const files = fg.sync(["api/v1/**/_q/**/status/*/index.json", "freifunk/dynamic/nodelist.json"], { cwd: out });
      expect(files.length).toBeGreaterThan(20);
      for (const f of files) expect(readFileSync(path.join(mirror, f), "utf8"), f).toBe(readFileSync(path.join(out, f), "utf8"));
    } finally {
      await preview.close();
    }
  }, 120_000);
});
