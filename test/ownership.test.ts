import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import fg from "fast-glob";
import { describe, expect, it } from "vitest";
import { MARKER } from "../src/io/write/ownership.ts";
import { command, removersDone, ROOT, tempDir, treeDigest } from "./support/tree.ts";

/**
 * Every command that replaces a folder refuses, before any work, a folder that is not its own: the
 * CLI runs as a child process, and every file that existed before is byte-identical afterwards.
 */
const SAMPLE = path.join(ROOT, "data");

/** A playground: a copy of the sample dump, a folder of the user's, and a home folder of its own. */
function playground() {
  const root = tempDir();
  const data = path.join(root, "work", "dump");
  cpSync(SAMPLE, data, { recursive: true });
  mkdirSync(path.join(root, "work", "notes"));
  writeFileSync(path.join(root, "work", "notes", "notes.txt"), "mine\n");
  writeFileSync(path.join(root, "work", "todo.txt"), "also mine\n");
  const home = path.join(root, "home");
  mkdirSync(home);
  writeFileSync(path.join(home, ".profile"), "# mine\n");
  return { root, work: path.join(root, "work"), data, home };
}

async function refused(args: string[], cwd: string, home: string, why: RegExp) {
  const root = path.dirname(home);
  const folders = () => fg.sync("**", { cwd: root, dot: true, onlyDirectories: true }).sort();
  // an earlier build's output, being removed beside the new one, is not the user's
  for (const dir of [root, cwd]) removersDone(dir);
  const before = treeDigest(root);
  const beforeFolders = folders();
  const r = await command(args, cwd, { HOME: home });
  expect(r.status, r.stderr).toBe(2);
  const lines = r.stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^mesh-api: refusing to write to .+: /);
  expect(lines[0]).toMatch(why);
  expect(treeDigest(root)).toEqual(before);
  expect(folders()).toEqual(beforeFolders); // not even an empty folder made or removed
}

describe("build refuses an output folder that is not its own", () => {
  it("a file", async () => {
    const p = playground();
    await refused(
      ["build", "--data", p.data, "--out", "todo.txt"],
      p.work,
      p.home,
      /it is a file, not a folder; choose a folder for --out\.$/,
    );
  });
  it("'.'", async () => {
    const p = playground();
    await refused(
      ["build", "--data", p.data, "--out", "."],
      path.join(p.work, "notes"),
      p.home,
      /it is the current folder; choose a new folder/,
    );
  });
  it("the current folder by its absolute path", async () => {
    const p = playground();
    const cwd = path.join(p.work, "notes");
    await refused(["build", "--data", p.data, "--out", cwd], cwd, p.home, /it is the current folder/);
  });
  it("an ancestor of the current folder", async () => {
    const p = playground();
    await refused(["build", "--data", p.data, "--out", ".."], path.join(p.work, "notes"), p.home, /it contains the current folder/);
    await refused(["build", "--data", p.data, "--out", p.root], path.join(p.work, "notes"), p.home, /it contains the current folder/);
  });
  it("/", async () => {
    const p = playground();
    await refused(["build", "--data", p.data, "--out", "/"], p.work, p.home, /it is the root of the file system/);
  });
  it("the home folder", async () => {
    const p = playground();
    await refused(["build", "--data", p.data, "--out", p.home], p.work, p.home, /it is your home folder/);
  });
  it("the --data folder, a folder inside it, a folder that contains it", async () => {
    const p = playground();
    await refused(["build", "--data", p.data, "--out", p.data], p.work, p.home, /it is the --data folder/);
    await refused(["build", "--data", "dump", "--out", "dump/accesspoints"], p.work, p.home, /it is inside the --data folder dump/);
    await refused(["build", "--data", "dump", "--out", "dump/new"], p.work, p.home, /it is inside the --data folder/);
    await refused(["build", "--data", path.join(p.work, "dump"), "--out", p.work, "-q"], p.home, p.home, /it contains the --data folder/);
  });
  it("the --data folder named dist: the advice names another folder (issue 28)", async () => {
    const p = playground();
    cpSync(p.data, path.join(p.work, "dist"), { recursive: true });
    await refused(["build", "--data", "dist"], p.work, p.home, /it is the --data folder; choose a new folder for --out, such as site\.$/);
  });
  it("the --data folder through a symbolic link", async () => {
    const p = playground();
    symlinkSync(p.data, path.join(p.work, "link"));
    await refused(["build", "--data", p.data, "--out", "link"], p.work, p.home, /it is the --data folder/);
  });
  it("a non-empty folder without the marker", async () => {
    const p = playground();
    await refused(
      ["build", "--data", p.data, "--out", "notes"],
      p.work,
      p.home,
      /it is not empty and was not written by mesh-api .*; empty it or choose a new folder for --out\.$/,
    );
  });
  it("a folder whose marker is not ours", async () => {
    const p = playground();
    writeFileSync(path.join(p.work, "notes", MARKER), "something else\n");
    await refused(["build", "--data", p.data, "--out", "notes"], p.work, p.home, /not written by mesh-api/);
  });
});

describe("build replaces what is its own", () => {
  it("writes the marker, and rebuilds into a previous build's output", async () => {
    const p = playground();
    expect((await command(["build", "--data", p.data, "--out", "dist", "-q"], p.work, { HOME: p.home })).status).toBe(0);
    expect(JSON.parse(readFileSync(path.join(p.work, "dist", MARKER), "utf8"))).toMatchObject({
      format: "mesh-api-output/1",
      kind: "build",
    });
    const first = treeDigest(path.join(p.work, "dist"));
    const r = await command(["build", "--data", p.data, "--out", "dist"], p.work, { HOME: p.home });
    expect(r.status, r.stderr).toBe(0);
    expect(treeDigest(path.join(p.work, "dist"))).toEqual(first);
    expect(readFileSync(path.join(p.work, "notes", "notes.txt"), "utf8")).toBe("mine\n");
  });
  it("an empty folder, and the layout of a build from before the marker", async () => {
    const p = playground();
    mkdirSync(path.join(p.work, "empty"));
    expect((await command(["build", "--data", p.data, "--out", "empty", "-q"], p.work)).status).toBe(0);
    const old = path.join(p.work, "old");
    mkdirSync(path.join(old, "api", "v1"), { recursive: true });
    writeFileSync(path.join(old, "api", "v1", "x.json"), "{}");
    writeFileSync(path.join(old, "_redirects"), "");
    writeFileSync(path.join(old, "404.html"), "");
    const r = await command(["build", "--data", p.data, "--out", "old"], p.work);
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(path.join(old, MARKER), "utf8")).toContain("mesh-api-output/1");
    // One file more at the top, and it is no longer that layout.
    const near = path.join(p.work, "near");
    mkdirSync(path.join(near, "api", "v1"), { recursive: true });
    writeFileSync(path.join(near, "_redirects"), "");
    writeFileSync(path.join(near, "404.html"), "");
    writeFileSync(path.join(near, "notes.txt"), "mine\n");
    await refused(["build", "--data", p.data, "--out", "near"], p.work, p.home, /not written by mesh-api/);
  });
  it("says 'left unchanged' only where something was, 'nothing written' otherwise", async () => {
    const p = playground();
    writeFileSync(path.join(p.data, "links", "broken.json"), "[{]");
    const fresh = await command(["build", "--data", p.data, "--out", "fresh"], p.work);
    expect(fresh.status).toBe(1);
    expect(fresh.stderr).toMatch(/the dump is invalid: 1 problem; nothing written\n$/);
    mkdirSync(path.join(p.work, "empty"));
    const empty = await command(["build", "--data", p.data, "--out", "empty"], p.work);
    expect(empty.stderr).toMatch(/; empty left unchanged\n$/);
  });
});

describe("snapshot writes only into a build of its own", () => {
  it("refuses a folder without a build of its own, with the advice to build first", async () => {
    const p = playground();
    await refused(
      ["snapshot", "--data", p.data, "--dist", "notes"],
      p.work,
      p.home,
      /holds no build of mesh-api; run build --out notes first/,
    );
    await refused(["snapshot", "--data", p.data, "--dist", "nothing"], p.work, p.home, /holds no build .*run build --out nothing first/);
    await refused(["snapshot", "--data", p.data, "--dist", p.data], p.work, p.home, /holds no build/);
  });
});

describe("a build and a dump do not replace each other", () => {
  it("build refuses a folder marked as a dump, and a dump writer a folder marked as a build", async () => {
    const p = playground();
    const dump = path.join(p.work, "fetched");
    mkdirSync(dump);
    writeFileSync(path.join(dump, MARKER), JSON.stringify({ format: "mesh-api-output/1", tool: "mesh-static-api", kind: "dump" }) + "\n");
    writeFileSync(path.join(dump, "network.json"), "{}\n");
    await refused(
      ["build", "--data", p.data, "--out", "fetched"],
      p.work,
      p.home,
      /it holds a dump of mesh-api, not a build; choose another folder for --out\.$/,
    );
    expect((await command(["build", "--data", p.data, "--out", "dist", "-q"], p.work, { HOME: p.home })).status).toBe(0);
    await refused(
      ["fetch-dump", "http://127.0.0.1:9/d.tar.gz", "--out", "dist"],
      p.work,
      p.home,
      /it holds a build of mesh-api, not a dump/,
    );
  });
});
