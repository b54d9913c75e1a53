import { createHash } from "node:crypto";
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { build, snapshot, startPreview } from "../src/index.ts";
import { lockOutput } from "../src/io/write/lock.ts";
import { synthesize, writeSynthDump } from "../src/gen/synth.ts";
import type { SnapshotIndex } from "../src/publish/archives.ts";
import { command, removersDone, tempDir, treeDigest } from "./support/tree.ts";

/**
 * The operator's nightly loop as the README shows it, run by the command line in a folder of the
 * operator's own (relative paths, as typed): build, snapshot, build, snapshot, build --snapshot, on
 * three days. The history grows, their own files are in every build, nothing else of theirs changes.
 */

const day = (d: number) => `2026-11-${String(d).padStart(2, "0")}`;

/** A dump of the same network on another day (the access points seen at that day's build). */
async function writeDump(dir: string, d: number, aps = 30): Promise<void> {
  rmSync(dir, { recursive: true, force: true });
  const dump = synthesize({ aps, seed: 8 });
  await writeSynthDump(dir, { ...dump, network: { ...dump.network, taken_at: `${day(d)}T03:00:00Z` } });
}

function operatorFolder(): string {
  const home = tempDir();
  mkdirSync(path.join(home, "public/about"), { recursive: true });
  mkdirSync(path.join(home, "public/.well-known"), { recursive: true });
  writeFileSync(path.join(home, "public/robots.txt"), "User-agent: *\nDisallow: /snapshots/\n");
  writeFileSync(path.join(home, "public/about/index.html"), "<!doctype html><title>About our mesh</title>\n");
  writeFileSync(path.join(home, "public/.well-known/security.txt"), "Contact: mailto:noc@mesh.example.org\n");
  writeFileSync(path.join(home, "notes.txt"), "the operator's own notes\n");
  return home;
}

const run = (home: string, ...args: string[]) => command(args, home);

/**
 * A first build made in-process (no child process, about 0.5 s less each) where only what follows is
 * the command line's to show. Its record names the dump by its full path rather than as typed, so it
 * is not used where a message names the data.
 */
const firstBuild = (home: string, options: { extra?: string; snapshot?: boolean } = {}) =>
  build({
    data: path.join(home, "data"),
    out: path.join(home, "dist"),
    ...(options.extra ? { extra: path.join(home, options.extra) } : {}),
    ...(options.snapshot ? { snapshot: {} } : {}),
  });
const indexOf = (dist: string) => JSON.parse(readFileSync(path.join(dist, "snapshots/index.json"), "utf8")) as SnapshotIndex;

/** The operator's files outside dist/ and data/ (which the loop writes and they rewrite). */
function theirs(home: string): Map<string, string> {
  removersDone(home); // the builds they replaced, removed in the background, are not the operator's
  return new Map([...treeDigest(home)].filter(([f]) => !f.startsWith("dist/") && !f.startsWith("data/")));
}

function expectExtras(home: string): void {
  for (const f of ["robots.txt", "about/index.html", ".well-known/security.txt"])
    expect(readFileSync(path.join(home, "dist", f), "utf8"), f).toBe(readFileSync(path.join(home, "public", f), "utf8"));
}

describe("the operator's nightly loop", () => {
  it("build, snapshot, build, snapshot, build --snapshot on three days: three snapshots listed and downloadable, their files in every build; then a plain build keeps the snapshots byte for byte and --keep of a snapshot run decides what goes", async () => {
    const home = operatorFolder();
    const before = theirs(home);
    const loop: [number, string[][]][] = [
      [20, [["build", "--extra", "public"], ["snapshot"]]],
      [21, [["build", "--extra", "public"], ["snapshot"]]],
      [22, [["build", "--extra", "public", "--snapshot"]]],
    ];
    for (const [d, commands] of loop) {
      await writeDump(path.join(home, "data"), d);
      for (const args of commands) {
        const r = await run(home, ...args);
        expect([r.status, r.stderr], args.join(" ")).toEqual([0, expect.any(String)]);
        expectExtras(home);
        if (args[0] === "snapshot") expect(r.stderr).toContain(`snapshot ${day(d)} of data:`);
      }
      expect(indexOf(path.join(home, "dist")).snapshots.map((s) => s.date)).toEqual(
        [20, 21, 22]
          .filter((x) => x <= d)
          .reverse()
          .map(day),
      );
    }
    expect(theirs(home)).toEqual(before);

    const preview = await startPreview({ dir: path.join(home, "dist"), port: 0 });
    try {
      const index = (await (await fetch(`${preview.url}/snapshots/index.json`)).json()) as SnapshotIndex;
      expect(index.snapshots).toHaveLength(3);
      for (const f of index.snapshots.flatMap((s) => s.files)) {
        const body = Buffer.from(await (await fetch(`${preview.url}/snapshots/${f.file}`)).arrayBuffer());
        expect([body.length, createHash("sha256").update(body).digest("hex")], f.file).toEqual([f.bytes, f.sha256]);
      }
      expect(await (await fetch(`${preview.url}/robots.txt`)).text()).toContain("Disallow: /snapshots/");
    } finally {
      await preview.close();
    }

    // A plain build keeps the snapshots as they were, byte for byte, and --keep of a snapshot run decides what goes.
    const snapshots = () => new Map([...treeDigest(path.join(home, "dist"))].filter(([f]) => f.startsWith("snapshots/")));
    const kept = snapshots();
    await writeDump(path.join(home, "data"), 23);
    expect((await run(home, "build")).status).toBe(0);
    expect(snapshots()).toEqual(kept);
    const r = await run(home, "snapshot", "--keep", "2");
    expect([r.status, r.stderr]).toEqual([0, expect.stringContaining("2 snapshots kept")]);
    expect(indexOf(path.join(home, "dist")).snapshots.map((s) => s.date)).toEqual([day(23), day(22)]);
  }, 120_000);
});

describe("what a build would drop is refused before any work", () => {
  it("a file put into the output by hand: exit 2, one sentence naming it and what to do, the output as it was", async () => {
    const home = operatorFolder();
    await writeDump(path.join(home, "data"), 20);
    await firstBuild(home);
    writeFileSync(path.join(home, "dist/robots.txt"), "User-agent: *\n");
    mkdirSync(path.join(home, "dist/about"));
    writeFileSync(path.join(home, "dist/about/index.html"), "<title>About</title>\n");
    const before = treeDigest(path.join(home, "dist"));
    const r = await run(home, "build");
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      "mesh-api: refusing to replace dist: it holds about/index.html, robots.txt, which mesh-api did not write and a new build would drop; " +
        "move them into a folder of your own and build with --extra <that folder>.\n",
    );
    expect(treeDigest(path.join(home, "dist"))).toEqual(before);
    // Moved into the extra folder, as the sentence says, they are in every build.
    rmSync(path.join(home, "dist/robots.txt"));
    rmSync(path.join(home, "dist/about"), { recursive: true });
    cpSync(path.join(home, "public"), path.join(home, "site"), { recursive: true });
    expect((await run(home, "build", "--extra", "site")).status).toBe(0);
    expect(readFileSync(path.join(home, "dist/about/index.html"), "utf8")).toContain("About our mesh");
  }, 60_000);

  it("a build without a record (release 0.1.0): what the route table does not name is refused; snapshot warns and takes --data", async () => {
    const home = operatorFolder();
    await writeDump(path.join(home, "data"), 20);
    await firstBuild(home);
    rmSync(path.join(home, "dist/.mesh-api-build.json"));
    writeFileSync(path.join(home, "dist/robots.txt"), "User-agent: *\n");
    expect((await run(home, "build")).stderr).toContain("it holds robots.txt, which mesh-api did not write");
    rmSync(path.join(home, "dist/robots.txt"));
    const r = await run(home, "snapshot");
    expect([r.status, r.stderr]).toEqual([
      0,
      expect.stringContaining("warning: dist records no dump (a build of an earlier mesh-api): the snapshot archives data as given"),
    ]);
  }, 60_000);

  it("beside the API's own folder api/v1/, a hand-made api/v2/ is the operator's too", async () => {
    const home = operatorFolder();
    await writeDump(path.join(home, "data"), 20);
    await firstBuild(home);
    mkdirSync(path.join(home, "dist/api/v2"));
    writeFileSync(path.join(home, "dist/api/v2/index.json"), "{}\n");
    const r = await run(home, "build");
    expect([r.status, r.stderr]).toEqual([2, expect.stringContaining("it holds api/v2/index.json, which mesh-api did not write")]);
  }, 60_000);

  it("a file in the snapshots folder that is no snapshot file is refused the same way", async () => {
    const home = operatorFolder();
    await writeDump(path.join(home, "data"), 20);
    await firstBuild(home, { snapshot: true });
    writeFileSync(path.join(home, "dist/snapshots/README.txt"), "our archive policy\n");
    const r = await run(home, "build", "--snapshot");
    expect([r.status, r.stderr]).toEqual([2, expect.stringContaining("it holds snapshots/README.txt, which mesh-api did not write")]);
  }, 60_000);

  it("an extra file the build writes itself is a usage error, and the output stays as it was", async () => {
    const home = operatorFolder();
    await writeDump(path.join(home, "data"), 20);
    await firstBuild(home, { extra: "public" });
    const before = treeDigest(path.join(home, "dist"));
    const cases = [
      ["index.html", "<title>ours</title>\n", "holds index.html, which the build writes itself"],
      ["map", "a file where the build writes a folder\n", "holds map, which the build writes itself"],
      ["api/v1/extra.json", "{}\n", "holds api/v1/extra.json, but api/ is the build's own folder"],
      [".mesh-api-output", "{}\n", "holds .mesh-api-output, but .mesh-api-output is the build's own file"],
      [
        ".mesh-api-api-archive.partial",
        "{}\n",
        "holds .mesh-api-api-archive.partial, but names starting with .mesh-api are the build's own",
      ],
    ];
    // Each in a copy of the folder (one after the other in this process): some are refused only under the output's lock.
    const homes = cases.map(([name, body]) => {
      const copy = tempDir();
      cpSync(home, copy, { recursive: true });
      mkdirSync(path.dirname(path.join(copy, "extra", name)), { recursive: true });
      writeFileSync(path.join(copy, "extra", name), body);
      return copy;
    });
    const [missing, inside, ...refused] = await Promise.all([
      command(["build", "--extra", "nowhere"], home),
      command(["build", "--extra", "dist/about"], home),
      ...homes.map((copy) => command(["build", "--extra", "extra"], copy)),
    ]);
    cases.forEach(([name, , said], i) => {
      expect([refused[i].status, refused[i].stderr], name).toEqual([2, expect.stringContaining(said)]);
      expect(treeDigest(path.join(homes[i], "dist")), name).toEqual(before);
    });
    expect(treeDigest(path.join(home, "dist"))).toEqual(before);
    expect([missing.status, missing.stderr]).toEqual([
      2,
      "mesh-api: --extra nowhere is not a folder; name the folder that holds your own files for the site.\n",
    ]);
    expect([inside.status, inside.stderr]).toEqual([2, expect.stringContaining("it contains the --extra folder dist/about")]);
  }, 60_000);
});

describe("snapshots tell the truth", () => {
  it("snapshot archives the dump the build was made from: another dump is refused naming both, and without --data it takes the build's", async () => {
    const home = operatorFolder();
    await writeDump(path.join(home, "data"), 20, 12);
    await writeDump(path.join(home, "scratch/net"), 21, 40);
    expect((await run(home, "build", "--data", "scratch/net")).status).toBe(0);
    const other = await run(home, "snapshot", "--data", "data");
    expect(other.status).toBe(2);
    expect(other.stderr).toMatch(
      /^mesh-api: refusing to snapshot data: the build in dist was made from scratch\/net \(dump sha256 [0-9a-f]{12}\), and data now holds another dump \(sha256 [0-9a-f]{12}\); build --data data --out dist first, or snapshot --data scratch\/net\.\n$/,
    );
    const r = await run(home, "snapshot");
    expect([r.status, r.stderr]).toEqual([0, expect.stringContaining(`snapshot ${day(21)} of scratch/net:`)]);
    expect(indexOf(path.join(home, "dist")).snapshots[0].counts.accesspoints).toBe(40);

    // The same folder changed since the build is another dump too.
    await writeDump(path.join(home, "scratch/net"), 22, 41);
    const changed = await run(home, "snapshot");
    expect([changed.status, changed.stderr]).toEqual([2, expect.stringContaining("was made from another state of it")]);
  }, 60_000);

  it("prints the day it wrote, also when a newer snapshot is kept", async () => {
    const home = operatorFolder();
    await writeDump(path.join(home, "data"), 22);
    await firstBuild(home, { snapshot: true });
    await writeDump(path.join(home, "data"), 21);
    expect((await run(home, "build")).status).toBe(0);
    const r = await run(home, "snapshot");
    expect([r.status, r.stderr]).toEqual([
      0,
      expect.stringMatching(new RegExp(`^snapshot ${day(21)} of data: mesh-topology-${day(21)}\\.tar\\.gz`)),
    ]);
    expect(indexOf(path.join(home, "dist")).snapshots.map((s) => s.date)).toEqual([day(22), day(21)]);
  }, 60_000);
});

describe("one writer at a time, decided before any work", () => {
  it("build refuses an output another writer holds before it reads the dump, and snapshot refuses a build being replaced", async () => {
    const home = operatorFolder();
    await writeDump(path.join(home, "data"), 20);
    const dist = path.join(home, "dist");
    await build({ data: path.join(home, "data"), out: dist });
    const before = treeDigest(dist);
    writeFileSync(path.join(home, "data/accesspoints/broken.ndjson"), "not json\n");
    const lock = lockOutput(dist, "dist");
    try {
      // An invalid dump would be InvalidDumpError: the refusal comes first.
      await expect(build({ data: path.join(home, "data"), out: dist })).rejects.toThrow(
        /refusing to write to .*: this process is writing it/,
      );
      await expect(snapshot({ data: path.join(home, "data"), dist })).rejects.toThrow(
        /refusing to write to .*: this process is writing it/,
      );
    } finally {
      lock.release();
    }
    expect(treeDigest(dist)).toEqual(before);
  }, 60_000);
});
