import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { detectSites, distanceM, siteRadius, updateSites, type Sited } from "../src/importers/opennet-sites.ts";
import { importOpennet } from "../src/importers/opennet/index.ts";
import { command, tempDir } from "./support/tree.ts";

/**
 * Import with memory beyond the recorded sequence (live-sample.test.ts): the site update's rules one
 * by one, ids that are never given twice, a previous dump that is not valid, any record order, and
 * live sources read over HTTP with a time limit.
 */

const STEP = (n: string) => new URL(`./fixtures/live-sample/steps/${n}/`, import.meta.url).pathname;
const OLSR = `${STEP("00")}olsr.txt`;
const WIKI = `${STEP("00")}wiki_nodes.html`;
const AT = "2026-11-20T10:00:00Z";

const readLines = (file: string) =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** Four access points around a point, a few metres apart (about 1e-5 degrees is a metre). */
function cluster(prefix: string, lon: number, lat: number, site: number | null, n = 4): Sited[] {
  return Array.from({ length: n }, (_, i) => ({
    main_ip: `${prefix}.${i + 1}`,
    coordinates: [lon + i * 0.00003, lat] as const,
    site,
  }));
}

/** detectSites as its rules read, over every point each time: the oracle for the grid's pruning. */
function detectSitesNaive(aps: readonly Sited[]): Map<string, number> {
  const key = (ip: string) =>
    ip
      .split(".")
      .map((o) => o.padStart(3, "0"))
      .join(".");
  const placed = aps.filter((a) => a.coordinates !== null).sort((a, b) => (key(a.main_ip) < key(b.main_ip) ? -1 : 1));
  const site = new Map<string, number>();
  let next = 1;
  for (const start of placed) {
    if (site.has(start.main_ip)) continue;
    let centre = start.coordinates!;
    let population = 4;
    let candidates: Sited[] = [];
    for (const tolerance of [2.5, 2.0, 1.6, 1.3, 1.0]) {
      const limit = tolerance * siteRadius(population);
      candidates = placed.filter((ap) => !site.has(ap.main_ip) && distanceM(ap.coordinates!, centre) < limit);
      population = candidates.length;
      if (population === 0) break;
      centre = [
        candidates.reduce((s, ap) => s + ap.coordinates![0], 0) / population,
        candidates.reduce((s, ap) => s + ap.coordinates![1], 0) / population,
      ];
    }
    if (candidates.length >= 4) {
      for (const ap of candidates) site.set(ap.main_ip, next);
      next++;
    }
  }
  return site;
}

describe("site update by the original's rules", () => {
  it("finds the sites a search over every access point finds, on random clustered networks (the grid only prunes)", () => {
    let seed = 7;
    const rand = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296;
    let members = 0;
    for (let round = 0; round < 20; round++) {
      const aps: Sited[] = [];
      const lat0 = -80 + rand() * 160;
      for (let i = 0; i < 300; i++) {
        const cluster = Math.floor(rand() * 40);
        const spread = rand() < 0.5 ? 0.0003 : 0.003;
        aps.push({
          main_ip: `10.${round}.${Math.floor(i / 250)}.${i % 250}`,
          coordinates:
            rand() < 0.1
              ? null
              : [((cluster * 0.0017) % 1) + 12 + (rand() - 0.5) * spread, lat0 + (cluster % 7) * 0.0011 + (rand() - 0.5) * spread],
          site: null,
        });
      }
      const found = detectSites(aps);
      expect([...found]).toEqual([...detectSitesNaive(aps)]);
      members += found.size;
    }
    // the networks do form sites: the comparison is not one of empty maps
    expect(members).toBeGreaterThan(1000);
  });

  it("is detectSites on a network without sites", () => {
    const aps = [...cluster("10.0.1", 12, 54, null), ...cluster("10.0.2", 12.1, 54, null), ...cluster("10.0.3", 12.2, 54, null, 3)];
    const update = updateSites(aps, 0);
    expect([...update.site]).toEqual([...detectSites(aps)]);
    expect(update.lastId).toBe(2);
  });

  it("keeps a site's id while it exists, and numbers new sites after the highest id ever given", () => {
    const aps = [...cluster("10.0.1", 12, 54, 7), ...cluster("10.0.2", 12.1, 54, null)];
    const update = updateSites(aps, 9);
    expect(update.site.get("10.0.1.1")).toBe(7);
    expect(update.site.get("10.0.2.1")).toBe(10);
    expect(update.lastId).toBe(10);
  });

  it("takes a member that moved away out of its site, dissolves a site left too small, and does not give its id again", () => {
    const moved = cluster("10.0.1", 12, 54, 3).map((ap, i) => (i === 0 ? { ...ap, coordinates: [12.5, 54.5] as const } : ap));
    const update = updateSites([...moved, ...cluster("10.0.2", 12.1, 54, 4, 5)], 4);
    expect(update.site.has("10.0.1.2")).toBe(false); // three members left: dissolved
    expect(update.site.get("10.0.2.1")).toBe(4);
    expect(update.lastId).toBe(4);
    // the members left without a position leave too
    const unplaced = updateSites(
      cluster("10.0.1", 12, 54, 3, 5).map((ap, i) => (i === 0 ? { ...ap, coordinates: null } : ap)),
      3,
    );
    expect(unplaced.site.has("10.0.1.1")).toBe(false);
    expect(unplaced.site.get("10.0.1.2")).toBe(3);
  });

  it("lets an access point without a site join a site in range, and of two overlapping sites keeps the larger", () => {
    const joined = updateSites(
      [...cluster("10.0.1", 12, 54, 2), { main_ip: "10.0.1.9", coordinates: [12.00005, 54.00001], site: null }],
      2,
    );
    expect(joined.site.get("10.0.1.9")).toBe(2);
    const overlapping = updateSites([...cluster("10.0.1", 12, 54, 1, 4), ...cluster("10.0.2", 12.00001, 54.00001, 2, 5)], 2);
    expect(new Set(overlapping.site.values())).toEqual(new Set([2]));
    expect(overlapping.lastId).toBe(2);
  });
});

describe("import opennet --previous", () => {
  let first: string;

  beforeAll(async () => {
    first = path.join(tempDir(), "dump");
    await importOpennet(first, { olsr: OLSR, wiki: WIKI, at: AT, sites: "detect" });
  }, 60_000);

  it("gives new records ids after the highest ever given, not after the highest present", async () => {
    const previous = path.join(tempDir(), "previous");
    cpSync(first, previous, { recursive: true });
    const network = JSON.parse(readFileSync(`${previous}/network.json`, "utf8")) as { last_ids: Record<string, number> };
    network.last_ids = { interface: 900, address: 950, link: 1000, site: 40 };
    writeFileSync(`${previous}/network.json`, JSON.stringify(network));
    const out = path.join(tempDir(), "next");
    await importOpennet(out, { olsr: `${STEP("02")}olsr.txt`, previous, at: "2026-11-20T10:12:00Z" });
    const fresh = readLines(`${out}/accesspoints/accesspoints.ndjson`).find((ap) => ap.main_ip === "192.168.2.250")!;
    expect(fresh.interfaces).toEqual([
      { id: 901, if_name: null, if_hwaddress: null, addresses: [{ id: 951, address: "192.168.2.250", netmask_prefixlen: 16 }], wifi: null },
    ]);
    expect(readLines(`${out}/links/links.ndjson`).map((l) => l.id)).toContain(1001);
    // sites were not asked for: the previous ones are kept as they were
    expect(JSON.parse(readFileSync(`${out}/network.json`, "utf8")).last_ids).toEqual({
      interface: 901,
      address: 951,
      link: 1001,
      site: 40,
    });
  });

  it("records when an access point first appeared (first_seen), carries it, and fixes the evidence of those there when the memory began", async () => {
    const at = ["2026-11-20T10:06:00Z", "2026-11-20T10:12:00Z", "2026-11-20T10:18:00Z"];
    const dumps = at.map(() => path.join(tempDir(), "step"));
    await importOpennet(dumps[0], { olsr: `${STEP("01")}olsr.txt`, previous: first, at: at[0] });
    await importOpennet(dumps[1], { olsr: `${STEP("02")}olsr.txt`, previous: dumps[0], at: at[1] });
    await importOpennet(dumps[2], { olsr: `${STEP("04")}olsr.txt`, previous: dumps[1], at: at[2] });
    const aps = (dump: string) => readLines(`${dump}/accesspoints/accesspoints.ndjson`);
    const firstSeen = (dump: string) =>
      Object.fromEntries(
        aps(dump)
          .filter((ap) => ap.first_seen !== undefined)
          .map((ap) => [ap.main_ip, ap.first_seen]),
      );
    expect(firstSeen(first)).toEqual({}); // no memory: the build reads the records' own evidence
    // There when the memory began: the evidence of the state before, never later than its sighting then.
    const seenBefore = aps(first).filter((ap) => ap.lastseen_timestamp !== null);
    const fixed = firstSeen(dumps[0]);
    for (const ap of seenBefore) {
      expect(fixed[ap.main_ip as string], ap.main_ip as string).toBeDefined();
      expect(Date.parse(fixed[ap.main_ip as string] as string)).toBeLessThanOrEqual(Date.parse(ap.lastseen_timestamp as string));
    }
    const withInstall = seenBefore.find((ap) => typeof ap.firmware_install_timestamp === "string");
    if (withInstall) expect(fixed[withInstall.main_ip as string]).toBe(`${withInstall.firmware_install_timestamp}T00:00:00Z`);
    const before = new Set(
      aps(dumps[0])
        .filter((ap) => ap.lastseen_timestamp !== null)
        .map((ap) => ap.main_ip),
    );
    const appeared = aps(dumps[1])
      .filter((ap) => ap.lastseen_timestamp === at[1] && !before.has(ap.main_ip as string))
      .map((ap) => ap.main_ip);
    expect(appeared).toContain("192.168.2.250");
    expect(firstSeen(dumps[1])).toEqual({ ...fixed, ...Object.fromEntries(appeared.map((ip) => [ip, at[1]])) });
    // carried: later imports see them again and keep the instant they appeared
    expect(firstSeen(dumps[2])).toMatchObject(firstSeen(dumps[1]));
  });

  it("writes the same dump whatever the order of the previous dump's records", async () => {
    const shuffled = path.join(tempDir(), "shuffled");
    cpSync(first, shuffled, { recursive: true });
    for (const file of ["accesspoints/accesspoints.ndjson", "links/links.ndjson"]) {
      const lines = readFileSync(`${shuffled}/${file}`, "utf8").split("\n").filter(Boolean);
      writeFileSync(`${shuffled}/${file}`, lines.reverse().join("\n") + "\n");
    }
    const a = path.join(tempDir(), "a");
    const b = path.join(tempDir(), "b");
    await importOpennet(a, { olsr: `${STEP("01")}olsr.txt`, previous: first, at: "2026-11-20T10:06:00Z" });
    await importOpennet(b, { olsr: `${STEP("01")}olsr.txt`, previous: shuffled, at: "2026-11-20T10:06:00Z" });
    for (const file of ["network.json", "accesspoints/accesspoints.ndjson", "links/links.ndjson"])
      expect(readFileSync(`${b}/${file}`, "utf8")).toBe(readFileSync(`${a}/${file}`, "utf8"));
  });

  it("refuses a previous dump that is not valid, naming the record, and writes nothing", async () => {
    const previous = path.join(tempDir(), "broken");
    cpSync(first, previous, { recursive: true });
    const lines = readFileSync(`${previous}/links/links.ndjson`, "utf8").split("\n");
    lines[2] = lines[2].replace(/"quality":[0-9.]+/, '"quality":1.5');
    writeFileSync(`${previous}/links/links.ndjson`, lines.join("\n"));
    const out = path.join(tempDir(), "out");
    writeFileSync(path.join(path.dirname(out), "keep"), "");
    const r = await command(["import", "opennet", "--olsr", OLSR, "--previous", previous, "--out", out, "--at", AT]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`${previous}/links/links.ndjson:3 $.endpoints[0].quality: quality must be between 0 and 1`);
    expect(r.stderr).toMatch(/no dump was written/);
    expect((await command(["import", "opennet", "--previous", path.join(tempDir(), "absent"), "--out", out])).status).toBe(2);
  });

  it("updates a dump in place (--previous and --out the same folder), and needs --olsr without --previous", async () => {
    const dump = path.join(tempDir(), "live");
    cpSync(first, dump, { recursive: true });
    const r = await command([
      "import",
      "opennet",
      "--ondataservice",
      `${STEP("03")}ondataservice.db`,
      "--previous",
      dump,
      "--out",
      dump,
      "--at",
      "2026-11-20T10:15:00Z",
    ]);
    expect(r.stderr).toMatch(/^wrote [^\n]*\n$/);
    expect(r.status).toBe(0);
    const ap = readLines(`${dump}/accesspoints/accesspoints.ndjson`).find((a) => a.main_ip === "192.168.1.48")!;
    expect(ap.mesh_version).toBe("0.5.1-unstable-1036");
    expect(ap.lastseen_timestamp).toBe(AT); // ondataservice does not touch it
    const none = await command(["import", "opennet", "--out", path.join(tempDir(), "x")]);
    expect(none.status).toBe(2);
    expect(none.stderr).toMatch(/needs --olsr/);
  });
});

describe("live sources over HTTP", () => {
  let server: Server;
  let base: string;
  const asked: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      asked.push(req.url ?? "");
      if (req.url === "/all") res.end(readFileSync(OLSR));
      else if (req.url === "/wiki/Opennet_Nodes") res.end(readFileSync(WIKI));
      else if (req.url?.startsWith("/slow")) setTimeout(() => res.end(""), 5000);
      else {
        res.statusCode = 404;
        res.end("no");
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it("reads olsrd's txtinfo at <url>/all and the wiki page at its address, as from files", async () => {
    const out = path.join(tempDir(), "dump");
    const r = await command([
      "import",
      "opennet",
      "--olsr",
      `${base}/`,
      "--wiki",
      `${base}/wiki/Opennet_Nodes`,
      "--at",
      AT,
      "--sites",
      "detect",
      "--out",
      out,
    ]);
    expect(r.stderr).toMatch(/^wrote [^\n]*\n$/);
    expect(r.status).toBe(0);
    expect(asked).toContain("/all");
    for (const file of ["accesspoints/accesspoints.ndjson", "links/links.ndjson", "network.json"])
      expect(readFileSync(`${out}/${file}`, "utf8")).toBe(readFileSync(`${first()}/${file}`, "utf8"));
  });

  it("names the source it cannot read, within the time limit, and leaves the output as it was", async () => {
    const out = path.join(tempDir(), "dump");
    await importOpennet(out, { olsr: OLSR, at: AT });
    const before = readFileSync(`${out}/links/links.ndjson`, "utf8");
    const slow = await command(["import", "opennet", "--olsr", `${base}/slow`, "--timeout", "300", "--previous", out, "--out", out]);
    expect(slow.status).toBe(1);
    expect(slow.stderr).toContain(`--olsr ${base}/slow/all: cannot read it (timeout: no answer within 300 ms)`);
    const missing = await command(["import", "opennet", "--olsr", OLSR, "--wiki", `${base}/nowiki`, "--previous", out, "--out", out]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain(`--wiki ${base}/nowiki: cannot read it (HTTP 404 Not Found)`);
    expect(readFileSync(`${out}/links/links.ndjson`, "utf8")).toBe(before);
  });
});

let firstFromFiles: string | undefined;
/** The same import from the files, made once for the comparison. */
function first(): string {
  if (firstFromFiles === undefined) throw new Error("made in beforeAll");
  return firstFromFiles;
}
beforeAll(async () => {
  firstFromFiles = path.join(tempDir(), "from-files");
  await importOpennet(firstFromFiles, { olsr: OLSR, wiki: WIKI, at: AT, sites: "detect" });
}, 60_000);
