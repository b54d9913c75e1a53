import { spawnSync } from "node:child_process";
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { canonicalIp } from "../src/core/values/ip.ts";
import { validate } from "../src/index.ts";
import { assertRawReplaceable, RAW_FILES, RAW_MARKER, writeRawFolder } from "../src/gen/raw-folder.ts";
import { wikiPositions } from "../src/gen/raw.ts";
import { synthesize, writeSynthDump, type SynthDump } from "../src/gen/synth.ts";
import { importOpennet } from "../src/importers/opennet/index.ts";
import { assertReplaceable, MARKER, markerBody, RefusedOutputError } from "../src/io/write/ownership.ts";
import { runSynth } from "../scripts/synth-command.ts";
import { command, commandFile, tempDir, treeDigest } from "./support/tree.ts";

/**
 * The synthetic networks validate without a problem of any severity, and `npm run synth` replaces
 * only folders it owns. Every folder written or refused here is a fresh temporary one, named by an
 * absolute path, and the script runs with a temporary current folder.
 */

type Row = Record<string, unknown> & { interfaces: { addresses: { address: string }[] }[] };

/** Runs scripts/synth.ts as `npm run synth` does, as one node process (from the current sources, see compiledFile). */
function synthChild(args: string[], cwd: string) {
  const r = spawnSync(process.execPath, [commandFile("scripts/synth.ts"), ...args], { cwd, encoding: "utf8" });
  return { status: r.status ?? -1, stderr: r.stderr };
}

/** The script's run in this process (scripts/synth-command.ts, what scripts/synth.ts runs; support/tree.ts command). */
const synth = (args: string[], cwd: string, env: Record<string, string> = {}) => command(args, cwd, env, runSynth);

/** Folders a writer left beside `dir` (`.<name>.tmp-…`, `.<name>.old-…`). */
const leftovers = (dir: string) => readdirSync(path.dirname(dir)).filter((n) => n.startsWith(`.${path.basename(dir)}.`));

describe("synthetic networks", () => {
  it.each([
    { aps: 5000, seed: 1 },
    { aps: 600, seed: 7 },
    { aps: 48, seed: 23 },
  ])(
    "$aps access points, seed $seed, validate with no problem of any severity",
    async ({ aps, seed }) => {
      const dump = synthesize({ aps, seed });
      const data = tempDir();
      await writeSynthDump(data, dump);
      const result = await validate({ data });
      expect(result.problems.map((p) => `${p.severity}: ${p.message}`).slice(0, 10)).toEqual([]);
      expect(result.problems).toHaveLength(0);
      expect(result.model).toBeDefined();
      expect(result.summary.accesspoints).toBe(aps);
      expect(result.summary.links).toBe(dump.links.length);
    },
    120_000,
  );

  it("keep what makes them realistic: 1-3 interfaces, IPv6, wifi, firmware mix, ages, links by id and by address, sites", () => {
    const dump = synthesize({ aps: 600, seed: 7 });
    const aps = dump.accesspoints as Row[];
    expect(new Set(aps.map((a) => a.interfaces.length))).toEqual(new Set([1, 2, 3]));
    expect(aps.filter((a) => a.main_ipv6 !== null).length).toBeGreaterThan(60);
    expect(aps.some((a) => a.interfaces.some((i) => (i as Record<string, unknown>).wifi !== null))).toBe(true);
    expect(new Set(aps.map((a) => a.mesh_version)).size).toBeGreaterThan(5);
    expect(aps.some((a) => a.lastseen_timestamp === null)).toBe(true);
    expect(new Set(aps.map((a) => a.site)).size).toBeGreaterThan(10);
    const ends = dump.links.flatMap((l) => l.endpoints as Record<string, unknown>[]);
    expect(ends.some((e) => "address" in e)).toBe(true);
    expect(ends.some((e) => "interface" in e)).toBe(true);
  });

  it("hold every address once and join each pair of access points once, across the address plan's boundaries", () => {
    // 66,000 access points pass the 65,024th (the main addresses' next /16) and the 65,536th (IPv6).
    const dump = synthesize({ aps: 66_000, seed: 3 });
    const aps = dump.accesspoints as Row[];
    const addresses = aps.flatMap((a) => a.interfaces.flatMap((i) => i.addresses.map((x) => x.address)));
    expect(new Set(addresses).size).toBe(addresses.length);
    const owner = new Map<unknown, string>();
    for (const a of aps)
      for (const i of a.interfaces as { id: number; addresses: { address: string }[] }[]) {
        owner.set(i.id, a.main_ip as string);
        for (const x of i.addresses) owner.set(x.address, a.main_ip as string);
      }
    const pairs = dump.links.map((l) =>
      (l.endpoints as { interface?: number; address?: string }[])
        .map((e) => owner.get(e.interface ?? e.address)!)
        .sort()
        .join(" "),
    );
    expect(pairs.every((p) => p.split(" ")[0] !== p.split(" ")[1])).toBe(true);
    expect(new Set(pairs).size).toBe(pairs.length);
  }, 120_000);

  it("are the same for the same seed", () => {
    const text = (d: SynthDump) => JSON.stringify(d);
    expect(text(synthesize({ aps: 300, seed: 9 }))).toBe(text(synthesize({ aps: 300, seed: 9 })));
    expect(text(synthesize({ aps: 300, seed: 9 }))).not.toBe(text(synthesize({ aps: 300, seed: 10 })));
  });
});

describe("writeSynthDump and npm run synth replace only their own folders", () => {
  it("writeSynthDump refuses a folder with someone else's file, before writing anything", async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, "notes.txt"), "mine\n");
    const before = treeDigest(dir);
    await expect(writeSynthDump(dir, synthesize({ aps: 5, seed: 1 }))).rejects.toBeInstanceOf(RefusedOutputError);
    expect(treeDigest(dir)).toEqual(before);
    expect(leftovers(dir)).toEqual([]);
  });

  it("exits 2 for a folder holding an unrelated file and leaves the file byte-identical", async () => {
    const cwd = tempDir();
    const out = tempDir();
    const bytes = Buffer.from("thesis draft, not backed up\n\u0000\u00ff", "latin1");
    writeFileSync(path.join(out, "thesis.txt"), bytes);
    const r = await synth(["--aps", "50", "--seed", "2", "--out", out], cwd);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^synth: refusing to write to .*: it is not empty and was not written by mesh-api/);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(readdirSync(out)).toEqual(["thesis.txt"]);
    expect(readFileSync(path.join(out, "thesis.txt")).equals(bytes)).toBe(true);
    expect(leftovers(out)).toEqual([]);
  });

  it("exits 2 for a file, the current folder, an ancestor of it and the home folder", async () => {
    const base = tempDir();
    const file = path.join(base, "data.json");
    writeFileSync(file, "{}\n");
    const cwd = path.join(base, "work", "here");
    mkdirSync(cwd, { recursive: true });
    writeFileSync(path.join(cwd, "keep.txt"), "in the current folder\n");
    const home = tempDir(); // empty: only being the home folder makes it refused
    const before = treeDigest(base);
    const cases: [string, RegExp][] = [
      [file, /it is a file/],
      [cwd, /it is the current folder/],
      [path.join(base, "work"), /it contains the current folder/],
      [home, /it is your home folder/],
    ];
    // The script's check is the library's (scripts/synth.ts calls assertReplaceable): each case through
    // it here, and the home folder, which the script takes from HOME, through the script too.
    for (const [out, why] of cases)
      await expect(assertReplaceable({ out, option: "--out", kind: "dump", cwd, home }), out).rejects.toThrow(
        new RegExp(`^refusing to write to .*${why.source}`),
      );
    const r = await synth(["--aps", "5", "--out", home], cwd, { HOME: home });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^synth: refusing to write to .*it is your home folder/);
    expect(treeDigest(base)).toEqual(before);
    expect(readdirSync(home)).toEqual([]);
  }, 120_000);

  it("writes a marked dump into a new folder, and a rerun into its own output replaces it", async () => {
    const cwd = tempDir();
    const out = path.join(tempDir(), "dump");
    // as `npm run synth` runs it, a process of its own; the other runs of this file in this process
    const first = synthChild(["--aps", "40", "--seed", "4", "--out", out], cwd);
    expect(first.status, first.stderr).toBe(0);
    expect(readFileSync(path.join(out, MARKER), "utf8")).toBe(markerBody("dump"));
    expect(JSON.parse(readFileSync(path.join(out, "network.json"), "utf8")).name).toContain("seed 4");

    const again = await synth(["--aps", "60", "--seed", "5", "--out", out, "--ndjson"], cwd);
    expect(again.status, again.stderr).toBe(0);
    expect(JSON.parse(readFileSync(path.join(out, "network.json"), "utf8")).name).toContain("seed 5");
    expect(readdirSync(path.join(out, "links"))).toEqual(["part-000.ndjson"]);
    expect(leftovers(out)).toEqual([]);
    const result = await validate({ data: out });
    expect(result.problems).toHaveLength(0);
    expect(result.summary.accesspoints).toBe(60);
  }, 120_000);
});

describe("npm run synth -- --raw: a synthetic network's raw sources, as import opennet and cycle read them", () => {
  const APS = 200;
  const SEED = 3;
  const AT = "2026-11-22T03:00:00Z";
  const network = synthesize({ aps: APS, seed: SEED });
  let raw: string;
  let dump: string;
  let warnings: string[];
  let result: Awaited<ReturnType<typeof importOpennet>>;
  let imported: (Record<string, unknown> & { interfaces: Record<string, unknown>[] })[];
  const sources = (dir: string) => ({
    olsr: path.join(dir, RAW_FILES.olsr),
    wiki: path.join(dir, RAW_FILES.wiki),
    ondataservice: path.join(dir, RAW_FILES.ondataservice),
  });

  beforeAll(async () => {
    raw = path.join(tempDir(), "raw");
    const r = await synth(["--aps", String(APS), "--seed", String(SEED), "--raw", raw], tempDir());
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toBe(`wrote ${raw}: olsr.txt, wiki.html, ondataservice.db of ${APS} access points (seed ${SEED}, step 0)\n`);
    dump = path.join(tempDir(), "dump");
    warnings = [];
    result = await importOpennet(dump, { ...sources(raw), at: AT, sites: "detect", warn: (line) => warnings.push(line) });
    imported = readFileSync(path.join(dump, "accesspoints/accesspoints.ndjson"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as (typeof imported)[number]);
  }, 120_000);

  it("import into a dump with every access point, the links, the interfaces ondataservice names, and sites; no warning", async () => {
    expect(readdirSync(raw).sort()).toEqual([RAW_MARKER, ...Object.values(RAW_FILES)].sort());
    expect(warnings).toEqual([]);
    const olsrLinks = readFileSync(sources(raw).olsr, "utf8").split("Table: Topology\n")[1].split("\n\n")[0].split("\n").length - 1;
    expect(result).toMatchObject({ accesspoints: APS, links: olsrLinks });
    expect(result.links).toBeGreaterThan(APS);
    expect(result.interfaces).toBe(network.accesspoints.reduce((n, ap) => n + (ap.interfaces as unknown[]).length, 0));
    const checked = await validate({ data: dump });
    expect(checked.problems).toEqual([]);

    // ondataservice gives the reporting access points' own fields and their interfaces' names and wifi, as the dump has them
    const reporting = network.accesspoints.filter((ap) => ap.device_board !== undefined);
    expect(reporting.length).toBeGreaterThan(APS / 3);
    const byIp = new Map(imported.map((ap) => [ap.main_ip, ap]));
    for (const ap of reporting) {
      const ours = byIp.get(ap.main_ip)!;
      for (const field of ["device_board", "device_cpu", "system_kernel", "system_uptime", "mesh_id", "firmware_release_name"])
        expect(ours[field], `${String(ap.main_ip)} ${field}`).toEqual(ap[field]);
      // the importer writes addresses in their canonical form
      expect(ours.main_ipv6).toBe(ap.main_ipv6 === null ? null : canonicalIp(String(ap.main_ipv6))!.address);
      for (const f of ap.interfaces as { if_name: string; if_hwaddress: string | null; wifi: Record<string, unknown> | null }[]) {
        const iface = ours.interfaces.find((i) => i.if_name === f.if_name)!;
        expect(iface, `${String(ap.main_ip)} ${f.if_name}`).toBeDefined();
        expect(iface.if_hwaddress).toBe(f.if_hwaddress?.toLowerCase() ?? null);
        expect((iface.wifi as Record<string, unknown> | null)?.wifi_ssid ?? null).toBe(f.wifi?.wifi_ssid ?? null);
      }
    }
    const silent = network.accesspoints.filter((ap) => ap.device_board === undefined).map((ap) => byIp.get(ap.main_ip)!);
    expect(silent.every((ap) => ap.device_board === null && ap.interfaces.every((i) => i.if_name === null))).toBe(true);
  });

  it("place each site's members as a site stands, so that an import finds the network's sites", () => {
    // the dump's sites whose placed members are enough for a site (4): each is found
    const positions = wikiPositions(network, SEED);
    const placed = new Map<unknown, number>();
    network.accesspoints.forEach((ap, i) => {
      if (ap.site !== null && positions[i] !== null) placed.set(ap.site, (placed.get(ap.site) ?? 0) + 1);
    });
    const expected = [...placed.values()].filter((n) => n >= 4).length;
    expect(expected).toBeGreaterThan(5);
    expect(result.sites).toBe(expected);
    // members of one detected site are, but for a stranger standing nearby, members of one site of the dump
    const siteOf = new Map(network.accesspoints.map((ap) => [ap.main_ip, ap.site]));
    const groups = new Map<unknown, unknown[]>();
    for (const ap of imported) if (ap.site !== null) groups.set(ap.site, [...(groups.get(ap.site) ?? []), siteOf.get(ap.main_ip)]);
    for (const members of groups.values()) {
      const counts = [...new Set(members)].map((s) => members.filter((m) => m === s).length);
      expect(Math.max(...counts)).toBeGreaterThanOrEqual(4);
    }
  });

  it("are the same bytes for the same seed and step; a later step changes OLSR and ondataservice, not the wiki", async () => {
    const again = path.join(tempDir(), "raw");
    await writeRawFolder(again, network, { seed: SEED, step: 0 });
    for (const name of [RAW_MARKER, ...Object.values(RAW_FILES)])
      expect(readFileSync(path.join(again, name)).equals(readFileSync(path.join(raw, name))), name).toBe(true);
    const later = path.join(tempDir(), "raw");
    await writeRawFolder(later, network, { seed: SEED, step: 2 });
    expect(readFileSync(path.join(later, RAW_FILES.wiki)).equals(readFileSync(path.join(raw, RAW_FILES.wiki)))).toBe(true);
    for (const name of [RAW_FILES.olsr, RAW_FILES.ondataservice])
      expect(readFileSync(path.join(later, name)).equals(readFileSync(path.join(raw, name))), name).toBe(false);
    const other = path.join(tempDir(), "raw");
    await writeRawFolder(other, synthesize({ aps: APS, seed: SEED + 1 }), { seed: SEED + 1, step: 0 });
    expect(readFileSync(path.join(other, RAW_FILES.ondataservice)).equals(readFileSync(path.join(raw, RAW_FILES.ondataservice)))).toBe(
      false,
    );
  });

  it("a later step imports with memory: two new access points, nothing dropped, no warning", async () => {
    const later = path.join(tempDir(), "raw");
    await writeRawFolder(later, network, { seed: SEED, step: 2 });
    const next = path.join(tempDir(), "dump");
    const noted: string[] = [];
    const r = await importOpennet(next, { ...sources(later), previous: dump, at: "2026-11-22T03:12:00Z", warn: (l) => noted.push(l) });
    expect(noted).toEqual([]);
    expect(r.accesspoints).toBe(APS + 2);
    expect(r.links).toBe(result.links + 2);
    expect(r.sites).toBe(result.sites);
  });

  it("feed two runs of mesh-api cycle, as docs/live.md's trial does", async () => {
    const dir = tempDir();
    const state = path.join(dir, "state");
    const www = path.join(dir, "www");
    const args = (from: string) => ["cycle", "--state", state, "--serve", www, "--olsr", sources(from).olsr, "--wiki", sources(from).wiki];
    const ods = (from: string) => ["--ondataservice", sources(from).ondataservice];
    const first = await command([...args(raw), ...ods(raw), "--at", AT]);
    expect(first.status, first.stderr).toBe(0);
    const later = path.join(dir, "raw");
    expect((await synth(["--aps", String(APS), "--seed", String(SEED), "--raw", later, "--step", "1"], dir)).status).toBe(0);
    const second = await command([...args(later), ...ods(later), "--at", "2026-11-22T03:06:00Z"]);
    expect(second.status, second.stderr).toBe(0);
    expect(lstatSync(www).isSymbolicLink()).toBe(true);
    const served = path.resolve(path.dirname(www), readlinkSync(www));
    const list = (name: string) => JSON.parse(readFileSync(path.join(served, `api/v1/${name}/index.json`), "utf8")) as unknown[];
    expect(list("accesspoint")).toHaveLength(APS + 1);
    expect(list("site")).toHaveLength(result.sites);
  }, 120_000);
});

describe("npm run synth -- --raw replaces only its own folders", () => {
  it("exits 2 for a folder of someone else's, a dump, its own folder with a file added, and leaves each as it was", async () => {
    const cwd = tempDir();
    const foreign = tempDir();
    writeFileSync(path.join(foreign, "olsr.txt"), "my router's real txtinfo\n");
    const five = synthesize({ aps: 5, seed: 1 });
    const dump = path.join(tempDir(), "dump");
    await writeSynthDump(dump, five);
    const own = path.join(tempDir(), "raw");
    await writeRawFolder(own, five, { seed: 1, step: 0 });
    writeFileSync(path.join(own, "notes.txt"), "mine\n");
    const cases: [string, RegExp][] = [
      [foreign, /it is not empty and was not written by mesh-api/],
      [dump, /it holds a dump of mesh-api, not raw sources; choose another folder for --raw\.$/],
      [own, /it holds an entry that synth --raw did not write \(notes\.txt\); move it away or choose a new folder for --raw\.$/],
    ];
    // The script's check is the library's (scripts/synth.ts calls assertRawReplaceable): each case
    // through it, the last through the script too.
    for (const [i, [dir, why]] of cases.entries()) {
      const before = treeDigest(dir);
      await expect(assertRawReplaceable(dir, { cwd }), dir).rejects.toThrow(new RegExp(`^refusing to write to ${dir}: ${why.source}`));
      if (i === cases.length - 1) {
        const r = await synth(["--aps", "5", "--raw", dir], cwd);
        expect(r.status, dir).toBe(2);
        expect(r.stderr.trim(), dir).toMatch(new RegExp(`^synth: refusing to write to ${dir}: ${why.source}`));
      }
      expect(treeDigest(dir), dir).toEqual(before);
      expect(leftovers(dir), dir).toEqual([]);
    }
    // the current folder, though it holds nothing but the raw sources
    const here = path.join(tempDir(), "raw");
    expect((await synth(["--aps", "5", "--raw", here], cwd)).status).toBe(0);
    const r = await synth(["--aps", "5", "--raw", "."], here);
    expect(r.stderr).toMatch(/^synth: refusing to write to \.: it is the current folder; choose a new folder for --raw, such as raw\.\n$/);
    expect(r.status).toBe(2);
    // mesh-api's commands do not take a raw folder for theirs
    await expect(importOpennet(here, { olsr: path.join(here, RAW_FILES.olsr) })).rejects.toThrow(
      /it is not empty and was not written by mesh-api/,
    );
    expect(readdirSync(here).sort()).toEqual([RAW_MARKER, ...Object.values(RAW_FILES)].sort());
  }, 120_000);

  it("replaces its own folder with another network or step; usage errors for --step alone, nested folders, a bad step", async () => {
    const cwd = tempDir();
    const raw = path.join(tempDir(), "raw");
    expect((await synth(["--aps", "8", "--seed", "2", "--raw", raw], cwd)).status).toBe(0);
    const again = await synth(["--aps", "9", "--seed", "2", "--raw", raw, "--step", "3"], cwd);
    expect(again.status, again.stderr).toBe(0);
    expect(JSON.parse(readFileSync(path.join(raw, RAW_MARKER), "utf8"))).toEqual({
      format: "mesh-api-synth-raw/1",
      tool: "mesh-static-api",
      accesspoints: 9,
      seed: 2,
      step: 3,
    });
    expect(leftovers(raw)).toEqual([]);
    const usage: [string[], RegExp][] = [
      [["--aps", "5"], /give --out <dir> for a dump, --raw <dir> for raw sources, or both/],
      [["--aps", "5", "--out", path.join(cwd, "d"), "--step", "1"], /--step needs --raw/],
      [["--aps", "5", "--raw", path.join(cwd, "r"), "--step", "-1"], /--step must be a whole number from 0 to 63999/],
      [["--aps", "5", "--raw", path.join(cwd, "r"), "--step", "1.5"], /--step must be a whole number/],
      [["--aps", "5", "--out", path.join(cwd, "d"), "--raw", path.join(cwd, "d", "raw")], /--out and --raw must be separate folders/],
    ];
    // each refuses before any work, and none writes
    const results = await Promise.all(usage.map(([args]) => synth(args, cwd)));
    usage.forEach(([args, message], i) => {
      expect(results[i].status, args.join(" ")).toBe(2);
      expect(results[i].stderr, args.join(" ")).toMatch(message);
    });
    expect(readdirSync(cwd)).toEqual([]);
  }, 120_000);
});
