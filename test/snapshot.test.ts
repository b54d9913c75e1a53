import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { build, snapshot, startPreview } from "../src/index.ts";
import { API_SERVED, isTwin } from "../src/core/routes.ts";
import type { SnapshotIndex } from "../src/publish/archives.ts";
import { synthesize, writeSynthDump } from "../src/gen/synth.ts";
import { command, tempDir, treeDigest } from "./support/tree.ts";
import { FREIFUNK_API_SETTINGS } from "./support/site.ts";

/** Deterministic archives, verifiable sums, rebuildable dumps, and a history carried across deployments. */

async function dumpTakenAt(day: number, seed = 4): Promise<string> {
  const dir = tempDir();
  const dump = synthesize({ aps: 40, seed });
  await writeSynthDump(dir, { ...dump, network: { ...dump.network, taken_at: `2026-11-${String(day).padStart(2, "0")}T03:00:00Z` } });
  return dir;
}

const readIndex = (dist: string) => JSON.parse(readFileSync(path.join(dist, "snapshots/index.json"), "utf8")) as SnapshotIndex;

describe("snapshots", () => {
  it("gives byte-identical archives and SHA256SUMS when built twice, and sha256sum -c passes", async () => {
    const data = await dumpTakenAt(20);
    const [a, b] = [path.join(tempDir(), "dist"), path.join(tempDir(), "dist")];
    await build({ data, out: a, snapshot: {} });
    await build({ data, out: b, snapshot: {} });
    const files = ["mesh-topology-2026-11-20.tar.gz", "mesh-api-v1-2026-11-20.tar.gz", "SHA256SUMS", "index.json"];
    for (const f of files)
      expect(readFileSync(path.join(a, "snapshots", f)).equals(readFileSync(path.join(b, "snapshots", f))), f).toBe(true);
    expect(execFileSync("sha256sum", ["-c", "SHA256SUMS"], { cwd: path.join(a, "snapshots"), encoding: "utf8" })).toBe(
      "mesh-api-v1-2026-11-20.tar.gz: OK\nmesh-topology-2026-11-20.tar.gz: OK\n",
    );
    const index = readIndex(a);
    expect(index.snapshots).toHaveLength(1);
    expect(index.snapshots[0]).toMatchObject({ taken_at: "2026-11-20T03:00:00Z", date: "2026-11-20", counts: { accesspoints: 40 } });
    expect(index.snapshots[0].counts.interfaces).toBeGreaterThan(40);
  });

  it("archives files only (no folder entries), sorted, with fixed modes, owner and mtime, in a gzip without name or time", async () => {
    const data = await dumpTakenAt(20);
    const out = path.join(tempDir(), "dist");
    await build({ data, out, snapshot: {} });
    const archive = path.join(out, "snapshots/mesh-topology-2026-11-20.tar.gz");
    const head = readFileSync(archive).subarray(0, 10);
    expect([...head.subarray(3, 10)]).toEqual([0, 0, 0, 0, 0, 0, 0xff]); // no flags (no name), mtime 0, zlib's default level (XFL 0), OS unknown
    const listing = execFileSync("tar", ["--numeric-owner", "-tvzf", archive], { encoding: "utf8" }).trim().split("\n");
    for (const line of listing) expect(line).toMatch(/^-rw-r--r-- 0\/0 +\d+ 2026-11-20 03:00 mesh-topology-2026-11-20\/./);
    const names = listing.map((l) => l.split(" ").pop()!);
    expect(names).toEqual([...names].sort());
    // the API's archive (hundreds of answers, a folder each): its files, each once, in its top folder
    const api = execFileSync("tar", ["-tzf", path.join(out, "snapshots/mesh-api-v1-2026-11-20.tar.gz")], { encoding: "utf8" })
      .trim()
      .split("\n");
    expect(api.length).toBeGreaterThan(300);
    expect(api.filter((n) => n.endsWith("/"))).toEqual([]);
    expect(new Set(api).size).toBe(api.length);
    expect(api.filter((n) => !n.startsWith("mesh-api-v1-2026-11-20/"))).toEqual([]);
  });

  it("unpacking the dump archive and building from it reproduces api/ and the outputs beside it byte for byte", async () => {
    const data = await dumpTakenAt(21);
    const out = path.join(tempDir(), "dist");
    // with the operator's Freifunk API file: every output of API_SERVED is there
    await build({ data, out, snapshot: {}, settings: FREIFUNK_API_SETTINGS });
    const unpacked = tempDir();
    execFileSync("tar", ["-xzf", path.join(out, "snapshots/mesh-topology-2026-11-21.tar.gz"), "-C", unpacked]);
    const again = path.join(tempDir(), "dist");
    await build({ data: path.join(unpacked, "mesh-topology-2026-11-21"), out: again, settings: FREIFUNK_API_SETTINGS });
    // What the API archive holds: the API's files but the reference's, and the output records' beside it (API_SERVED).
    const apiFile = (f: string) =>
      (f.startsWith(API_SERVED.folder.slice(1)) && !f.startsWith(API_SERVED.except.slice(1))) || API_SERVED.files.includes(`/${f}`);
    // the archive holds the answers, not their gzip twins (core/routes/compression.ts)
    const answers = (d: string) => new Map([...treeDigest(d)].filter(([f]) => apiFile(f) && !isTwin(f)));
    const api = (d: string) => new Map([...treeDigest(d)].filter(([f]) => apiFile(f)));
    expect(api(again)).toEqual(api(out));
    expect([...api(out).keys()]).toEqual(expect.arrayContaining(API_SERVED.files.map((f) => f.slice(1))));
    const apiArchive = tempDir();
    execFileSync("tar", ["-xzf", path.join(out, "snapshots/mesh-api-v1-2026-11-21.tar.gz"), "-C", apiArchive]);
    expect(treeDigest(path.join(apiArchive, "mesh-api-v1-2026-11-21"))).toEqual(answers(out));
    expect(api(out).size).toBeGreaterThan(answers(out).size);
    expect([...treeDigest(out).keys()].filter((f) => f.startsWith(API_SERVED.except.slice(1))).length).toBeGreaterThan(0);
  });

  it("carries the history of a served earlier dist forward, verified and trimmed to --keep", async () => {
    // Day 1 and day 2 deployed; day 3 builds with the live index as --previous.
    const deployed = path.join(tempDir(), "dist");
    await build({ data: await dumpTakenAt(1), out: deployed, snapshot: {} });
    await build({ data: await dumpTakenAt(2, 5), out: deployed, snapshot: {} }); // history from the folder itself
    expect(readIndex(deployed).snapshots.map((s) => s.date)).toEqual(["2026-11-02", "2026-11-01"]);
    const site = await startPreview({ dir: deployed, port: 0 });
    try {
      const out = path.join(tempDir(), "dist");
      const warnings: string[] = [];
      await build({
        data: await dumpTakenAt(3, 6),
        out,
        snapshot: { previous: `${site.url}/snapshots/index.json`, keep: 3, warn: (w) => warnings.push(w) },
      });
      expect(warnings).toEqual([]);
      const index = readIndex(out);
      expect(index.snapshots.map((s) => s.date)).toEqual(["2026-11-03", "2026-11-02", "2026-11-01"]);
      expect(index.snapshots.slice(1)).toEqual(readIndex(deployed).snapshots);
      expect(execFileSync("sha256sum", ["-c", "--quiet", "SHA256SUMS"], { cwd: path.join(out, "snapshots") }).length).toBe(0);

      // Trimmed: keep 2 drops the oldest archive and its sums.
      const trimmed = path.join(tempDir(), "dist");
      await build({ data: await dumpTakenAt(4, 7), out: trimmed, snapshot: { previous: `${site.url}/snapshots/`, keep: 2 } });
      expect(readIndex(trimmed).snapshots.map((s) => s.date)).toEqual(["2026-11-04", "2026-11-02"]);
      expect(existsSync(path.join(trimmed, "snapshots/mesh-topology-2026-11-01.tar.gz"))).toBe(false);
      expect(readFileSync(path.join(trimmed, "snapshots/SHA256SUMS"), "utf8")).not.toContain("2026-11-01");

      // Same taken_at replaces, never duplicates.
      await build({ data: await dumpTakenAt(4, 7), out: trimmed, snapshot: { keep: 5 } });
      expect(readIndex(trimmed).snapshots.map((s) => s.date)).toEqual(["2026-11-04", "2026-11-02"]);
    } finally {
      await site.close();
    }
  });

  it("drops an earlier archive that does not match its recorded sha256", async () => {
    const deployed = path.join(tempDir(), "dist");
    await build({ data: await dumpTakenAt(1), out: deployed, snapshot: {} });
    writeFileSync(path.join(deployed, "snapshots/mesh-api-v1-2026-11-01.tar.gz"), "tampered");
    const out = path.join(tempDir(), "dist");
    const warnings: string[] = [];
    await build({
      data: await dumpTakenAt(2),
      out,
      snapshot: { previous: path.join(deployed, "snapshots"), warn: (w) => warnings.push(w) },
    });
    expect(readIndex(out).snapshots.map((s) => s.date)).toEqual(["2026-11-02"]);
    expect(warnings.join("\n")).toContain("snapshot 2026-11-01 dropped: mesh-api-v1-2026-11-01.tar.gz does not match its index entry");
  });

  it("snapshot command works on an existing build and refuses a missing one", async () => {
    const data = await dumpTakenAt(9);
    const out = path.join(tempDir(), "dist");
    await build({ data, out });
    await snapshot({ data, dist: out });
    expect(readIndex(out).snapshots[0].date).toBe("2026-11-09");
    // The build's archive holds what the build wrote, in the order it wrote it; the command's what it finds in
    // the tree, by name: the same entries and bytes, the outputs' files outside api/ (Freifunk's), a split
    // layout's shards and an operator's file at a served name the build leaves free (the Freifunk API file,
    // its output off) included.
    const built = path.join(tempDir(), "dist");
    const extra = tempDir();
    mkdirSync(path.join(extra, "freifunk"));
    writeFileSync(path.join(extra, "freifunk", "api.json"), '{"name":"an operator\'s own"}\n');
    expect(API_SERVED.files).toContain("/freifunk/api.json");
    await build({ data, out: built, extra, snapshot: {}, settings: { folderLimit: 4 } });
    const archive = path.join(built, "snapshots/mesh-api-v1-2026-11-09.tar.gz");
    const names = execFileSync("tar", ["-tzf", archive], { encoding: "utf8" }).split("\n");
    expect(names.filter((n) => n.includes("/~") && !n.endsWith("/")).length).toBeGreaterThan(10);
    const outside = API_SERVED.files.filter((f) => existsSync(path.join(built, f)));
    expect(outside.length).toBeGreaterThan(0);
    expect(outside).toContain("/freifunk/api.json");
    expect(outside.filter((f) => !names.some((n) => n.endsWith(f)))).toEqual([]);
    const [fromBuild, fromCommand] = [tempDir(), tempDir()];
    execFileSync("tar", ["-xzf", archive, "-C", fromBuild]);
    await snapshot({ data, dist: built });
    execFileSync("tar", ["-xzf", archive, "-C", fromCommand]);
    const listed = execFileSync("tar", ["-tzf", archive], { encoding: "utf8" }).split("\n");
    expect([...listed].sort()).toEqual([...names].sort());
    expect(treeDigest(fromCommand)).toEqual(treeDigest(fromBuild));
    expect(treeDigest(fromBuild).size).toBe(names.filter((n) => n !== "" && !n.endsWith("/")).length);
    const r = await command(["snapshot", "--data", data, "--dist", tempDir()]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("holds no build");
  });
});
