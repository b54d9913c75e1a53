import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { validate } from "../src/index.ts";
import { synthesize, writeSynthDump, type SynthDump } from "../src/gen/synth.ts";
import { MARKER, markerBody, RefusedOutputError } from "../src/io/ownership.ts";
import { compiledFile, tempDir, treeDigest } from "./support/tree.ts";

/**
 * The synthetic networks validate without a problem of any severity, and `npm run synth` replaces
 * only folders it owns. Every folder written or refused here is a fresh temporary one, named by an
 * absolute path, and the script runs with a temporary current folder.
 */

type Row = Record<string, unknown> & { interfaces: { addresses: { address: string }[] }[] };

/** Runs scripts/synth.ts as `npm run synth` does, as one node process (from the current sources, see compiledFile). */
function synth(args: string[], cwd: string, env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [compiledFile("scripts/synth.ts"), ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, ...env },
  });
  return { status: r.status ?? -1, stderr: r.stderr };
}

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

  it("exits 2 for a folder holding an unrelated file and leaves the file byte-identical", () => {
    const cwd = tempDir();
    const out = tempDir();
    const bytes = Buffer.from("thesis draft, not backed up\n\u0000\u00ff", "latin1");
    writeFileSync(path.join(out, "thesis.txt"), bytes);
    const r = synth(["--aps", "50", "--seed", "2", "--out", out], cwd);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^synth: refusing to write to .*: it is not empty and was not written by mesh-api/);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(readdirSync(out)).toEqual(["thesis.txt"]);
    expect(readFileSync(path.join(out, "thesis.txt")).equals(bytes)).toBe(true);
    expect(leftovers(out)).toEqual([]);
  });

  it("exits 2 for a file, the current folder, an ancestor of it and the home folder", () => {
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
    for (const [out, why] of cases) {
      const r = synth(["--aps", "5", "--out", out], cwd, { HOME: home });
      expect(r.status, out).toBe(2);
      expect(r.stderr, out).toMatch(new RegExp(`^synth: refusing to write to .*${why.source}`));
    }
    expect(treeDigest(base)).toEqual(before);
    expect(readdirSync(home)).toEqual([]);
  }, 120_000);

  it("writes a marked dump into a new folder, and a rerun into its own output replaces it", async () => {
    const cwd = tempDir();
    const out = path.join(tempDir(), "dump");
    const first = synth(["--aps", "40", "--seed", "4", "--out", out], cwd);
    expect(first.status, first.stderr).toBe(0);
    expect(readFileSync(path.join(out, MARKER), "utf8")).toBe(markerBody("dump"));
    expect(JSON.parse(readFileSync(path.join(out, "network.json"), "utf8")).name).toContain("seed 4");

    const again = synth(["--aps", "60", "--seed", "5", "--out", out, "--ndjson"], cwd);
    expect(again.status, again.stderr).toBe(0);
    expect(JSON.parse(readFileSync(path.join(out, "network.json"), "utf8")).name).toContain("seed 5");
    expect(readdirSync(path.join(out, "links"))).toEqual(["part-000.ndjson"]);
    expect(leftovers(out)).toEqual([]);
    const result = await validate({ data: out });
    expect(result.problems).toHaveLength(0);
    expect(result.summary.accesspoints).toBe(60);
  }, 120_000);
});
