import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  closeSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { describe, expect, it, vi } from "vitest";
import { FILES, TWIN } from "../src/core/routes.ts";
import { emitTree } from "../src/io/write/emit.ts";
import { ArchiveStream } from "../src/io/read/archive.ts";
import { KnownFiles, parseDigests } from "../src/io/write/digests.ts";
import { build } from "../src/index.ts";
import { netlifyRules, parseDataRules } from "../src/hosts/netlify.ts";
import { synthesize, writeSynthDump } from "../src/gen/synth.ts";
import { removersDone, tempDir } from "./support/tree.ts";
import { deferred, PIECE } from "../src/core/body.ts";

describe("atomic output", () => {
  it("replaces the whole tree, removing files of the previous build", async () => {
    const out = path.join(tempDir(), "dist");
    await emitTree(out, [
      { path: "/a/index.json", body: "1" },
      { path: "/b/index.json", body: "2" },
    ]);
    await emitTree(out, [{ path: "/a/index.json", body: "3" }]);
    expect(readFileSync(path.join(out, "a/index.json"), "utf8")).toBe("3");
    expect(existsSync(path.join(out, "b"))).toBe(false);
    expect(readdirSync(path.dirname(out))).toEqual(["dist"]);
  });

  it("leaves the previous tree as it was when writing fails", async () => {
    const out = path.join(tempDir(), "dist");
    await emitTree(out, [{ path: "/a/index.json", body: "1" }]);
    const failing = (function* () {
      yield { path: "/a/index.json", body: "2" };
      throw new Error("renderer broke");
    })();
    await expect(emitTree(out, failing)).rejects.toThrow("renderer broke");
    expect(readFileSync(path.join(out, "a/index.json"), "utf8")).toBe("1");
    expect(readdirSync(path.dirname(out))).toEqual(["dist"]);
  });

  it("refuses paths that leave the output", async () => {
    const out = path.join(tempDir(), "dist");
    for (const bad of ["/../escape.json", "/a/../../escape.json", "/a/..", "/.", "//../escape.json", "escape.json/.."])
      await expect(emitTree(out, [{ path: bad, body: "x" }]), bad).rejects.toThrow("outside the output");
    expect(existsSync(path.join(path.dirname(out), "escape.json"))).toBe(false);
    // a path inside the output in any form lands where its normal form says
    const odd = ["/a/./b.json", "/a//c.json", "/a/x/../d.json", "e.json", "/f/.g.json", "/h/..i.json"];
    await emitTree(
      out,
      odd.map((p, i) => ({ path: p, body: String(i) })),
    );
    for (const [i, p] of odd.entries()) expect(readFileSync(path.join(out, p), "utf8"), p).toBe(String(i));
    expect(readdirSync(out).sort()).toEqual(["a", "e.json", "f", "h"]);
  });

  it("cleans leftovers of a killed build and restores a tree a kill left aside", async () => {
    const parent = tempDir();
    const dead = spawnSync("true").pid; // a process that has ended: its folders are leftovers
    mkdirSync(path.join(parent, `.dist.tmp-${dead}-1/x`), { recursive: true });
    mkdirSync(path.join(parent, `.dist.old-${dead}-1`));
    writeFileSync(path.join(parent, `.dist.old-${dead}-1/kept.json`), "old");
    // dist itself is missing: the kill came between the two renames.
    const out = path.join(parent, "dist");
    const failing = (function* () {
      throw new Error("stop before swapping");
    })();
    await expect(emitTree(out, failing)).rejects.toThrow();
    expect(readFileSync(path.join(out, "kept.json"), "utf8")).toBe("old");
    expect(readdirSync(parent)).toEqual(["dist"]);
  });

  it("leaves alone the temporary tree of a build that is still running", async () => {
    const parent = tempDir();
    const running = `.dist.tmp-${process.ppid}-1`; // the test runner's parent: alive
    mkdirSync(path.join(parent, running, "x"), { recursive: true });
    await emitTree(path.join(parent, "dist"), [{ path: "/a/index.json", body: "1" }]);
    expect(readdirSync(parent).sort()).toEqual([running, "dist"]);
  });
});

it("hands the replaced tree to a detached remover when asked, which renames it aside and removes it", async () => {
  const parent = tempDir();
  const out = path.join(parent, "dist");
  await emitTree(out, [
    { path: "/a/index.json", body: "1" },
    { path: "/b/index.json", body: "2" },
  ]);
  await emitTree(out, [{ path: "/a/index.json", body: "3" }], { removeOld: "background" });
  // The new tree is in place as soon as the call returns.
  expect(readFileSync(path.join(out, "a/index.json"), "utf8")).toBe("3");
  expect(existsSync(path.join(out, "b"))).toBe(false);
  const deadline = Date.now() + 20_000;
  while (readdirSync(parent).length > 1 && Date.now() < deadline) await new Promise((ok) => setTimeout(ok, 20));
  expect(readdirSync(parent)).toEqual(["dist"]);
});

it("never puts back a tree being removed; leaves it to its remover while that runs, removes it after a kill", async () => {
  const parent = tempDir();
  const dead = spawnSync("true").pid;
  const running = `.dist.trash-${process.ppid}-1`; // the test runner's parent: alive
  mkdirSync(path.join(parent, running));
  mkdirSync(path.join(parent, `.dist.trash-${dead}-1`));
  writeFileSync(path.join(parent, `.dist.trash-${dead}-1/half.json`), "old");
  // dist is missing, yet a half-removed tree is no previous output.
  await emitTree(path.join(parent, "dist"), [{ path: "/a/index.json", body: "1" }]);
  expect(readdirSync(parent).sort()).toEqual([running, "dist"]);
  expect(readdirSync(path.join(parent, "dist"))).toEqual(["a"]);
});

describe("big bodies", () => {
  it("lists are written in pieces that join to the same JSON; text and bytes as they are", async () => {
    const out = path.join(tempDir(), "dist");
    const items = Array.from({ length: 4000 }, (_, i) => JSON.stringify({ i, pad: "é".repeat(i % 700) }));
    const bytes = (list: string[]) => list.map((item) => Buffer.from(item));
    // A text body above the piece size is one text, not a list (it once came out as "[#, ,G,...]").
    const long = "# rules\n".repeat(2 ** 18) + "é";
    await emitTree(out, [
      { path: "/big/index.json", body: bytes(items) },
      { path: "/empty/index.json", body: [] },
      { path: "/one/index.json", body: bytes(["1"]) },
      { path: "/bytes/index.json", body: Buffer.from("{}") },
      { path: "/_redirects", body: long },
      // Two lists in one text (a NetJSON graph: nodes, then links), each in pieces.
      {
        path: "/two/index.json",
        body: { head: '{"a":', items: bytes(items), tail: { head: ',"b":', items: bytes(["2", "3"]), tail: ',"c":[]}' } },
      },
    ]);
    expect(JSON.parse(readFileSync(path.join(out, "two/index.json"), "utf8"))).toEqual({
      a: items.map((i) => JSON.parse(i)),
      b: [2, 3],
      c: [],
    });
    const big = readFileSync(path.join(out, "big/index.json"), "utf8");
    expect(big.length).toBeGreaterThan(2 ** 20); // above the piece size
    expect(big).toBe(`[${items.join(",")}]`);
    expect(readFileSync(path.join(out, "empty/index.json"), "utf8")).toBe("[]");
    expect(readFileSync(path.join(out, "one/index.json"), "utf8")).toBe("[1]");
    expect(readFileSync(path.join(out, "bytes/index.json"), "utf8")).toBe("{}");
    expect(readFileSync(path.join(out, "_redirects"), "utf8")).toBe(long);
  });
});

describe("a long list while the writing thread is still on the files before it", () => {
  it("is written by the build's thread into its folder, made there if need be, without waiting; the tree is whole", async () => {
    const out = path.join(tempDir(), "dist");
    const items = Array.from({ length: 3000 }, (_, i) => Buffer.from(JSON.stringify({ i, pad: "x".repeat(500) })));
    const small = (prefix: string, n: number) =>
      Array.from({ length: n }, (_, i) => ({ path: `${prefix}/${i % 13}/${i}/index.json`, body: Buffer.from(`{"i":${i}}`) }));
    const before = process.env.MESH_API_WRITER_THREAD_FROM;
    process.env.MESH_API_WRITER_THREAD_FROM = "0";
    try {
      await emitTree(out, [
        ...small("/a", 3000),
        // its folders are new, and the thread has thousands of calls still to make when it comes
        { path: "/a/5/long/list/index.json", body: items },
        ...small("/a/5/long", 2000),
      ]);
    } finally {
      if (before === undefined) delete process.env.MESH_API_WRITER_THREAD_FROM;
      else process.env.MESH_API_WRITER_THREAD_FROM = before;
    }
    expect(readFileSync(path.join(out, "a/5/long/list/index.json"), "utf8")).toBe(`[${items.join(",")}]`);
    expect(readFileSync(path.join(out, "a/9/2999/index.json"), "utf8")).toBe('{"i":2999}');
    expect(readFileSync(path.join(out, "a/5/long/10/1999/index.json"), "utf8")).toBe('{"i":1999}');
  });
});

describe("parts of a plan written side by side (core/plan.ts PlanParts)", () => {
  /** every file of a tree: its bytes, and which other name shares its inode (the first by path) */
  const snapshot = (dir: string) => {
    const names = (spawnSync("find", [".", "-type", "f"], { cwd: dir, encoding: "utf8" }).stdout.trim().split("\n") as string[]).sort();
    const firstOf = new Map<number, string>();
    return names.map((name) => {
      const ino = statSync(path.join(dir, name)).ino;
      if (!firstOf.has(ino)) firstOf.set(ino, name);
      return [
        name,
        createHash("sha1")
          .update(readFileSync(path.join(dir, name)))
          .digest("hex"),
        firstOf.get(ino),
      ];
    });
  };
  // long lists (several pieces each, written by the build's thread) in one part; thousands of short
  // files (through the writing thread) with names that repeat another in the other
  const lists = function* () {
    for (let i = 0; i < 4; i++)
      yield { path: `/list/${i}/index.json`, body: deferred(() => `[${'"x",'.repeat(PIECE / 2 + i * 1000)}"${i}"]`) };
  };
  const resources = function* (n = 6000) {
    for (let i = 0; i < n; i++) {
      const detail = `/item/${i % 50}/${i}/index.json`;
      yield { path: detail, body: Buffer.from(`{"i":${i}}`) };
      yield { path: `/item/${i % 50}/${i}/again/index.json`, body: Buffer.from(`{"i":${i}}`), sameAs: detail };
    }
  };
  const threaded = async <T>(run: () => Promise<T>): Promise<T> => {
    const before = process.env.MESH_API_WRITER_THREAD_FROM;
    process.env.MESH_API_WRITER_THREAD_FROM = "0";
    try {
      return await run();
    } finally {
      if (before === undefined) delete process.env.MESH_API_WRITER_THREAD_FROM;
      else process.env.MESH_API_WRITER_THREAD_FROM = before;
    }
  };

  it("gives the tree that one part after the other gives, its shared inodes and its digests record included", async () => {
    const [apart, after] = [path.join(tempDir(), "dist"), path.join(tempDir(), "dist")];
    // recyclable: each part's files recorded apart, the record the same bytes in the end
    const r = await threaded(() => emitTree(apart, { sideBySide: [lists(), resources()] }, { recycle: {} }));
    await threaded(() => emitTree(after, [...lists(), ...resources()], { recycle: {} }));
    expect(r.files).toBe(4 + 12000);
    const written = snapshot(apart);
    expect(written).toEqual(snapshot(after));
    // the lists' gzip twins beside them, and the record
    expect(written.length).toBe(2 * 4 + 12000 + 1);
    expect([...parseDigests(readFileSync(path.join(apart, FILES.fileDigests)))!.names()].length).toBe(2 * 4 + 12000);
    expect(written.filter(([name, , first]) => name !== first).length).toBe(6000);
  });

  it("stops every part when one fails, and leaves nothing", async () => {
    const parent = tempDir();
    let taken = 0;
    const endless = function* () {
      for (let i = 0; ; i++, taken++) yield { path: `/item/${i % 50}/${i}/index.json`, body: Buffer.from(`{"i":${i}}`) };
    };
    const failing = function* () {
      yield* lists();
      throw new Error("renderer broke");
    };
    await expect(threaded(() => emitTree(path.join(parent, "dist"), { sideBySide: [failing(), endless()] }))).rejects.toThrow(
      "renderer broke",
    );
    expect(readdirSync(parent)).toEqual([]);
    const stopped = taken;
    await new Promise((ok) => setTimeout(ok, 50));
    expect(taken).toBe(stopped);
  });
});

describe("a network whose _redirects is above the piece size", () => {
  it("gets the rules the build computed, byte for byte, and they parse", async () => {
    // Hardware addresses make the literal rules (two spellings each): 4,400 of them on interfaces without
    // an IP address add a list file each and no detail files, so the build writes 7,500 files (a plain
    // synthetic network with as many rules, 2,500 access points, writes 37,500).
    const dump = synthesize({ aps: 200, seed: 3 });
    const mac = (n: number) => `ac:de:${n.toString(16).padStart(8, "0").match(/../g)!.join(":")}`;
    let id = 80_000_000;
    for (const ap of dump.accesspoints as { interfaces: unknown[] }[])
      for (let i = 0; i < 22; i++, id++) ap.interfaces.push({ id, if_hwaddress: mac(id) });
    const data = tempDir();
    await writeSynthDump(data, dump);
    const out = path.join(tempDir(), "dist");
    const r = await build({ data, out });
    const written = readFileSync(path.join(out, "_redirects"), "utf8");
    expect(written.length).toBeGreaterThan(2 ** 20);
    expect(written).toBe(netlifyRules(r.values!).text);
    // every value rule, plus the guard lines that keep them apart
    expect(parseDataRules(written).length).toBeGreaterThanOrEqual(netlifyRules(r.values!).rules);
    expect(netlifyRules(r.values!).rules).toBeGreaterThan(4000);
  });
});

/** io/write/emit.ts's READ_AT_ONCE: a recycled file longer than this is renamed over, not written in place */
const READ_AT_ONCE = 16 * 1024;

/**
 * Two byte strings alike, said as their lengths and the first offset where they differ: vitest's
 * toEqual walks a Buffer an element at a time, 20 s for 4 MiB on this machine.
 */
function expectSameBytes(actual: Uint8Array, expected: Uint8Array): void {
  const [a, e] = [
    Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength),
    Buffer.from(expected.buffer, expected.byteOffset, expected.byteLength),
  ];
  let differs = -1;
  if (!a.equals(e)) for (differs = 0; differs < Math.min(a.length, e.length) && a[differs] === e[differs];) differs++;
  expect({ length: a.length, differs }).toEqual({ length: e.length, differs: -1 });
}

describe("a recycled tree (cycle: the build before the served one becomes the next build's start)", () => {
  const tree = (dir: string) =>
    new Map(
      spawnSync("find", [".", "-type", "f"], { cwd: dir, encoding: "utf8" })
        .stdout.trim()
        .split("\n")
        .map((f) => f.slice(2))
        .sort()
        .map((f) => [f, readFileSync(path.join(dir, f), "utf8")]),
    );
  const inode = (f: string) => Number(spawnSync("stat", ["-c", "%i", f], { encoding: "utf8" }).stdout);

  it("rewrites short changed files in place and long ones by a rename, keeps the same ones (long ones too), removes the rest, and ends as a fresh tree would", async () => {
    const d = tempDir();
    const a = path.join(d, "a");
    const big = "x".repeat(300_000); // more than one piece, and longer than a server reads at once
    // bytes read whole from the build before, longer than pieces (a day's graph carried from run to run)
    const carriedBytes = () => Buffer.from(`[${'"c",'.repeat(PIECE)}"c"]`);
    const carried = () => deferred(carriedBytes);
    const finish = async (dir: string) => {
      mkdirSync(path.join(dir, "snapshots"));
      writeFileSync(path.join(dir, "snapshots", "index.json"), "[]");
    };
    await emitTree(
      a,
      [
        { path: "/api/same/index.json", body: "same" },
        { path: "/api/changed/index.json", body: "before" },
        { path: "/api/gone/deep/index.json", body: "gone" },
        { path: "/api/list/index.json", body: [Buffer.from(big), Buffer.from(big)] },
        { path: "/api/kept/index.json", body: [big, big, big, big].map((x) => Buffer.from(x)) },
        { path: "/api/grown/index.json", body: "short" },
        { path: "/api/carried/index.json", body: carried() },
      ],
      { recycle: {}, finish },
    );
    const text = readFileSync(path.join(a, ".mesh-api-files.json"), "utf8");
    const digests = JSON.parse(text) as { files: Record<string, [string, number]> };
    // written in pieces, the bytes JSON.stringify gives the record: the files in the order written, then the twins in code-unit order
    expect(text).toBe(`${JSON.stringify(digests)}\n`);
    expect(Object.keys(digests.files)).toEqual([
      "/api/same/index.json",
      "/api/changed/index.json",
      "/api/gone/deep/index.json",
      "/api/list/index.json",
      "/api/kept/index.json",
      "/api/grown/index.json",
      "/api/carried/index.json",
      "/api/carried/index.json.gz",
      "/api/kept/index.json.gz",
      "/api/list/index.json.gz",
    ]);
    expectSameBytes(gunzipSync(readFileSync(path.join(a, "api/carried/index.json.gz"))), carriedBytes());
    expect(readdirSync(a).filter((n) => n.endsWith(".part"))).toEqual([]);
    const oldList = readFileSync(path.join(a, "api/list/index.json"));
    expect(digests.files["/api/list/index.json"][1]).toBe(oldList.length);
    const same = inode(path.join(a, "api/same/index.json"));
    const changed = inode(path.join(a, "api/changed/index.json"));
    const list = inode(path.join(a, "api/list/index.json"));
    const grown = inode(path.join(a, "api/grown/index.json"));
    const kept = inode(path.join(a, "api/kept/index.json"));
    const carriedFiles = ["index.json", "index.json.gz"].map((f) => inode(path.join(a, "api/carried", f)));
    // its folder is never written into: no new copy made beside the file and removed again
    const carriedFolder = statSync(path.join(a, "api/carried"), { bigint: true }).mtimeNs;
    // a slow download of the old list holds it open across the rewrite
    const reader = openSync(path.join(a, "api/list/index.json"), "r");

    const b = path.join(d, "b");
    const next = [
      { path: "/api/same/index.json", body: "same" },
      { path: "/api/changed/index.json", body: "after" },
      { path: "/api/new/index.json", body: "new" },
      { path: "/api/list/index.json", body: [Buffer.from(big), Buffer.from("y")] },
      { path: "/api/kept/index.json", body: [big, big, big, big].map((x) => Buffer.from(x)) },
      { path: "/api/grown/index.json", body: big },
      { path: "/api/carried/index.json", body: carried() },
    ];
    await emitTree(b, next, { recycle: { from: a }, finish });
    expect(existsSync(a)).toBe(false);
    expect(inode(path.join(b, "api/same/index.json"))).toBe(same);
    // short before: rewritten where it is, whatever its new length
    expect(inode(path.join(b, "api/changed/index.json"))).toBe(changed);
    expect(inode(path.join(b, "api/grown/index.json"))).toBe(grown);
    // long before: a new file renamed over it, and the reader reads the old one whole
    expect(inode(path.join(b, "api/list/index.json"))).not.toBe(list);
    // long (more than one piece) and the same bytes: the recycled file stays, its new copy goes (a day's graph carried from run to run)
    expect(inode(path.join(b, "api/kept/index.json"))).toBe(kept);
    expect(readdirSync(path.join(b, "api/kept"))).toEqual(["index.json", "index.json.gz"]);
    expect(["index.json", "index.json.gz"].map((f) => inode(path.join(b, "api/carried", f)))).toEqual(carriedFiles);
    expectSameBytes(readFileSync(path.join(b, "api/carried/index.json")), carriedBytes());
    expect(statSync(path.join(b, "api/carried"), { bigint: true }).mtimeNs).toBe(carriedFolder);
    const old = Buffer.alloc(oldList.length + 1000);
    expect(readSync(reader, old, 0, old.length, 0)).toBe(oldList.length);
    closeSync(reader);
    expectSameBytes(old.subarray(0, oldList.length), oldList);
    const fresh = path.join(d, "fresh");
    await emitTree(fresh, next, { recycle: {}, finish });
    expect(tree(b)).toEqual(tree(fresh));
    expect(existsSync(path.join(b, "api/gone"))).toBe(false);
    expect(readdirSync(d).sort()).toEqual(["b", "fresh"]);
  });

  it("gives a file the plan says repeats another the same inode; a recycled build keeps such a name, links it anew, or gives it its own file, so that every name holds its own bytes", async () => {
    const d = tempDir();
    const [a, b, fresh] = ["a", "b", "fresh"].map((n) => path.join(d, n));
    const at = (dir: string, f: string) => path.join(dir, "api", f, "index.json");
    const file = (name: string, body: string, sameAs?: string) => ({
      path: `/api/${name}/index.json`,
      body,
      ...(sameAs && { sameAs: `/api/${sameAs}/index.json` }),
    });
    await emitTree(
      a,
      [
        file("t1", "one"),
        file("a1", "one", "t1"),
        file("t2", "two"),
        file("a2", "two", "t2"),
        file("t3", "three"),
        file("a3", "three", "t3"),
        file("x", "ex"),
        file("y", "ex", "x"),
        file("m", "m1"),
        file("n", "n1"),
        file("z", "m1", "m"),
        // a repeat of nothing written just before: a file of its own
        file("far", "one", "nowhere"),
        file("long", "L".repeat(TWIN.minBytes)),
        file("twin", "L".repeat(TWIN.minBytes), "long"),
        // the build's own files get no twin: a long one is shared, and renamed over when rewritten
        { path: "/_u/index.json", body: "U".repeat(READ_AT_ONCE + 1) },
        { path: "/_w/index.json", body: "U".repeat(READ_AT_ONCE + 1), sameAs: "/_u/index.json" },
      ],
      { recycle: {} },
    );
    const ino = (dir: string, f: string) => inode(at(dir, f));
    expect(ino(a, "a1")).toBe(ino(a, "t1"));
    expect(ino(a, "z")).toBe(ino(a, "m"));
    expect(ino(a, "far")).not.toBe(ino(a, "t1"));
    // a long file and its repeat share an inode; each has a twin of its own, of the same bytes
    expect(ino(a, "twin")).toBe(ino(a, "long"));
    expect(inode(`${at(a, "twin")}.gz`)).not.toBe(inode(`${at(a, "long")}.gz`));
    expect(readFileSync(`${at(a, "twin")}.gz`)).toEqual(readFileSync(`${at(a, "long")}.gz`));
    const record = JSON.parse(readFileSync(path.join(a, ".mesh-api-files.json"), "utf8")) as { files: Record<string, unknown[]> };
    expect(record.files["/api/a1/index.json"]).toEqual([...record.files["/api/t1/index.json"], "/api/t1/index.json"]);
    expect(record.files["/api/far/index.json"]).toHaveLength(2);
    const before = { t1: ino(a, "t1"), t2: ino(a, "t2") };
    expect(inode(path.join(a, "_w/index.json"))).toBe(inode(path.join(a, "_u/index.json")));

    const next = [
      file("t1", "ONE"), // rewritten in place: the name linked to it follows
      file("a1", "ONE", "t1"),
      file("t2", "two"),
      file("a2", "two", "t2"),
      file("t3", "THREE"),
      file("a3", "own"), // no longer a repeat, after the file it shared
      file("y", "why"), // no longer a repeat, before the file it shared
      file("x", "EX"),
      file("m", "m1"),
      file("n", "n2"),
      file("z", "n2", "n"), // a repeat of another file now
      file("far", "one", "t1-gone"),
      file("new", "ONE", "t1"),
      // a new inode for the file (renamed over, as it was long): the name that shared the old one is linked anew
      { path: "/_u/index.json", body: "u2" },
      { path: "/_w/index.json", body: "u2", sameAs: "/_u/index.json" },
    ];
    await emitTree(b, next, { recycle: { from: a } });
    await emitTree(fresh, next, { recycle: {} });
    expect(tree(b)).toEqual(tree(fresh));
    expect(ino(b, "t1")).toBe(before.t1);
    expect([ino(b, "a1"), ino(b, "new")]).toEqual([before.t1, before.t1]);
    expect([ino(b, "t2"), ino(b, "a2")]).toEqual([before.t2, before.t2]);
    expect(ino(b, "a3")).not.toBe(ino(b, "t3"));
    expect(ino(b, "y")).not.toBe(ino(b, "x"));
    expect(ino(b, "z")).toBe(ino(b, "n"));
    expect(ino(b, "z")).not.toBe(ino(b, "m"));
    expect(inode(path.join(b, "_w/index.json"))).toBe(inode(path.join(b, "_u/index.json")));
    // and the next build from this one reads the links it recorded
    const c = path.join(d, "c");
    await emitTree(c, next, { recycle: { from: b } });
    expect(tree(c)).toEqual(tree(fresh));
    expect(ino(c, "a1")).toBe(before.t1);
    // a name that shared a file, gone (removed by hand), and given bytes of its own now: written all the same
    const own = next.map((f) => (f.path === "/api/a2/index.json" ? file("a2", "mine") : f));
    const [g, h] = [path.join(d, "g"), path.join(d, "h")];
    // a copy that keeps the links (cp -a): trusted as the tree itself
    spawnSync("cp", ["-a", c, g]);
    rmSync(at(g, "a2"));
    await emitTree(h, own, { recycle: { from: g } });
    expect(readFileSync(at(h, "a2"), "utf8")).toBe("mine");
    expect(readFileSync(at(h, "t2"), "utf8")).toBe("two");
    // A copy of the tree (a backup put back, a state moved with cp -r) holds separate files where the
    // names shared one: its record's links are not trusted, and each name is linked anew.
    const copy = path.join(d, "copy");
    cpSync(c, copy, { recursive: true });
    expect(ino(copy, "a1")).not.toBe(ino(copy, "t1"));
    const changed = next.map((f) => (f.body === "ONE" ? { ...f, body: "uno" } : f));
    const e = path.join(d, "e");
    await emitTree(e, changed, { recycle: { from: copy } });
    expect(readFileSync(at(e, "a1"), "utf8")).toBe("uno");
    expect(ino(e, "a1")).toBe(ino(e, "t1"));
    await emitTree(fresh, changed, { recycle: {} });
    expect(tree(e)).toEqual(tree(fresh));
  });

  it("links a long list the plan says repeats another (a filter that keeps every item), never renders it, gives it a twin of its own, and keeps, relinks or parts them as a recycled build changes", async () => {
    const d = tempDir();
    const piece = (c: string) => Buffer.from(`"${c.repeat(600_000)}",`);
    // the repeat's own body is never made while the file it repeats was written a moment ago
    let made = 0;
    const plan = (c: string, online: string) => [
      { path: "/api/list/index.json", body: [piece(c), piece(c), Buffer.from("0")] },
      {
        path: "/api/list/_q/status/online/index.json",
        body: deferred(() => (made++, [piece(online), piece(online), Buffer.from("0")])),
        ...(online === c && { sameAs: "/api/list/index.json" }),
      },
      { path: "/api/mid/index.json", body: `[${"1,".repeat(TWIN.minBytes)}1]` },
      // two twins made since: the lane no longer holds the one of the file repeated, and compresses it again
      ...[2, 3].map((n) => ({ path: `/api/other/${n}/index.json`, body: `[${`${n},`.repeat(TWIN.minBytes)}${n}]` })),
      {
        path: "/api/mid/_q/x/index.json",
        // items rendered as they are read, once (as a list's are): read once for the twin and the archive both
        body: (function* () {
          for (let i = 0; i <= TWIN.minBytes; i++) yield Buffer.from("1");
        })(),
        sameAs: "/api/mid/index.json",
      },
    ];
    const list = (dir: string, f = "list/index.json") => path.join(dir, "api", f);
    const online = (dir: string) => list(dir, "list/_q/status/online/index.json");
    const archived: string[] = [];
    const archiving = (name: string) => ({
      takes: (file: string) => file.startsWith("/api/"),
      open: (root: string) => new ArchiveStream(path.join(root, ".partial"), "top", new Date(0)),
      finish: async (_dir: string, archive?: ArchiveStream) => {
        await archive!.end();
        renameSync(archive!.target, path.join(d, name));
        archived.push(name);
      },
    });
    const [a, b, c, e, fresh] = ["a", "b", "c", "e", "fresh"].map((n) => path.join(d, n));
    const into = archiving("a.tar.gz");
    await emitTree(a, plan("a", "a"), { recycle: {}, archive: into, finish: into.finish });
    expect(made).toBe(0);
    expect(inode(online(a))).toBe(inode(list(a)));
    expect(inode(list(a, "mid/_q/x/index.json"))).toBe(inode(list(a, "mid/index.json")));
    for (const [x, y] of [
      [online(a), list(a)],
      [list(a, "mid/_q/x/index.json"), list(a, "mid/index.json")],
    ]) {
      expect(inode(`${x}.gz`)).not.toBe(inode(`${y}.gz`));
      expectSameBytes(gunzipSync(readFileSync(`${x}.gz`)), readFileSync(y));
    }
    // the archive holds the repeat's bytes, read from the file it repeats
    const unpacked = tempDir();
    spawnSync("tar", ["-xzf", path.join(d, "a.tar.gz"), "-C", unpacked]);
    expect(tree(path.join(unpacked, "top"))).toEqual(new Map([...tree(a)].filter(([f]) => f.startsWith("api/") && !f.endsWith(".gz"))));

    // the same bytes again: every file and twin kept where it was
    const kept = [online(a), `${online(a)}.gz`, `${list(a)}.gz`].map(inode);
    await emitTree(b, plan("a", "a"), { recycle: {} });
    await emitTree(c, plan("a", "a"), { recycle: { from: a } });
    expect([online(c), `${online(c)}.gz`, `${list(c)}.gz`].map(inode)).toEqual(kept);
    // changed: the list renamed over (a new inode), its repeat linked to the new one, both twins made anew
    await emitTree(e, plan("b", "b"), { recycle: { from: c } });
    expect(inode(online(e))).toBe(inode(list(e)));
    expect(inode(list(e))).not.toBe(kept[0]);
    expectSameBytes(gunzipSync(readFileSync(`${online(e)}.gz`)), readFileSync(list(e)));
    await emitTree(fresh, plan("b", "b"), { recycle: {} });
    expect(tree(e)).toEqual(tree(fresh));
    // no longer a repeat: a file of its own, the list's inode untouched
    const before = inode(list(e));
    const parted = path.join(d, "parted");
    await emitTree(parted, plan("b", "c"), { recycle: { from: e } });
    expect(made).toBe(1);
    expect(inode(list(parted))).toBe(before);
    expect(inode(online(parted))).not.toBe(before);
    expect(readFileSync(online(parted), "utf8")).toContain('"ccc');
    expect(readFileSync(list(parted), "utf8")).toContain('"bbb');
    expectSameBytes(gunzipSync(readFileSync(`${online(parted)}.gz`)), readFileSync(online(parted)));
    expect(archived).toEqual(["a.tar.gz"]);
  });

  it("feeds an archive every file it takes as it writes it, long and recycled ones from their files, in the order written; aborts it on a failure", async () => {
    const d = tempDir();
    const big = "x".repeat(300_000); // more than one piece
    const kept = [big, big, big, big].map((x) => Buffer.from(x));
    const archiving = (name: string) => ({
      takes: (file: string) => file.startsWith("/api/"),
      open: (root: string) => new ArchiveStream(path.join(root, ".partial"), "top", new Date(0)),
      finish: async (_dir: string, archive?: ArchiveStream) => {
        const { bytes } = await archive!.end();
        renameSync(archive!.target, path.join(d, name));
        expect(statSync(path.join(d, name)).size).toBe(bytes);
      },
    });
    const a = path.join(d, "a");
    await emitTree(
      a,
      [
        { path: "/api/same/index.json", body: "same" },
        { path: "/api/kept/index.json", body: kept },
        { path: "/api/list/index.json", body: kept },
      ],
      { recycle: {} },
    );
    const next = [
      { path: "/api/list/index.json", body: [Buffer.from(big), Buffer.from("y")] }, // long, changed: renamed over the old
      { path: "/map/x.json", body: "not taken" },
      { path: "/api/kept/index.json", body: kept }, // long, the same: the recycled file stays
      { path: "/api/same/index.json", body: "same" },
      { path: "/api/new/deep/index.json", body: "new" },
    ];
    const b = path.join(d, "b");
    const into = archiving("b.tar.gz");
    await emitTree(b, next, { recycle: { from: a }, archive: into, finish: into.finish });
    const listing = spawnSync("tar", ["-tzf", path.join(d, "b.tar.gz")], { encoding: "utf8" })
      .stdout.trim()
      .split("\n");
    expect(listing).toEqual([
      "top/api/list/index.json",
      "top/api/kept/index.json",
      "top/api/same/index.json",
      "top/api/new/deep/index.json",
    ]);
    const unpacked = tempDir();
    spawnSync("tar", ["-xzf", path.join(d, "b.tar.gz"), "-C", unpacked]);
    const answers = new Map([...tree(b)].filter(([f]) => f.startsWith("api/") && !f.endsWith(".gz")));
    expect(tree(path.join(unpacked, "top"))).toEqual(answers);
    expect(answers.get("api/list/index.json") === `[${big},y]`).toBe(true); // the new list's bytes, not the recycled tree's

    // a build that fails leaves neither its tree nor its archive, and no stream open
    const failing = function* () {
      yield* next;
      throw new Error("render failed");
    };
    const c = path.join(d, "c");
    const broken = archiving("c.tar.gz");
    await expect(emitTree(c, failing(), { archive: broken, finish: broken.finish })).rejects.toThrow("render failed");
    expect(readdirSync(d).sort()).toEqual(["b", "b.tar.gz"]);
    await new Promise((ok) => setTimeout(ok, 50));
    const open = readdirSync("/proc/self/fd").map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return "";
      }
    });
    expect(open.filter((f) => f.includes(".partial"))).toEqual([]);

    // a finish that does not end the archive ships a tree without it
    const e = path.join(d, "e");
    await emitTree(e, next, { archive: archiving("e.tar.gz") });
    expect(existsSync(path.join(e, ".partial"))).toBe(false);
    expect(readFileSync(path.join(e, "api/same/index.json"), "utf8")).toBe("same");
  });

  it("reads a long file for its twin into a buffer kept from one twin to the next, not a new one each", async () => {
    // one long answer a build, so that no two twins are on their way at once
    const text = (i: number) => `[${'"y",'.repeat(PIECE / 2 + i * 100)}"${i}"]`;
    const outs = Array.from({ length: 6 }, () => path.join(tempDir(), "dist"));
    const made = vi.spyOn(Buffer, "allocUnsafeSlow");
    try {
      for (const [i, out] of outs.entries()) await emitTree(out, [{ path: `/long/${i}/index.json`, body: text(i) }]);
      // a read buffer is a piece long (a new one each came from the C library's heap: docs/performance.md)
      expect(made.mock.calls.filter(([size]) => size === PIECE).length).toBeLessThanOrEqual(1);
    } finally {
      made.mockRestore();
    }
    for (const [i, out] of outs.entries())
      expect(gunzipSync(readFileSync(path.join(out, `long/${i}/index.json.gz`))).toString()).toBe(text(i));
  });

  it("writes a gzip twin of each long text answer, kept while its file is, made anew when it changes, gone when it is short", async () => {
    const d = tempDir();
    const long = (c: string) => `[${`"${c}",`.repeat(TWIN.minBytes / 4)}"${c}"]`;
    const files = (list: string, short: string, streamed: Buffer[]) => [
      { path: "/api/list/index.json", body: list },
      { path: "/api/short/index.json", body: short },
      { path: "/api/streamed/index.json", body: streamed },
      { path: "/map/image.png", body: long("p") },
      { path: "/metrics", body: long("m") },
    ];
    const a = path.join(d, "a");
    await emitTree(a, files(long("a"), "x", [Buffer.from(long("s")), Buffer.from(long("t"))]), { recycle: {} });
    const twins = (dir: string) =>
      spawnSync("find", [".", "-name", "*.gz"], { cwd: dir, encoding: "utf8" }).stdout.trim().split("\n").sort();
    // not the image, nor the answer below the bound
    expect(twins(a)).toEqual(["./api/list/index.json.gz", "./api/streamed/index.json.gz", "./metrics.gz"]);
    for (const f of ["api/list/index.json", "api/streamed/index.json", "metrics"])
      expectSameBytes(gunzipSync(readFileSync(path.join(a, `${f}.gz`))), readFileSync(path.join(a, f)));
    const kept = inode(path.join(a, "metrics.gz"));
    const b = path.join(d, "b");
    // the list changes, the short answer grows past the bound, the streamed one shrinks below it
    const next = files(long("b"), long("x"), [Buffer.from("1"), Buffer.from("2")]);
    await emitTree(b, next, { recycle: { from: a } });
    expect(twins(b)).toEqual(["./api/list/index.json.gz", "./api/short/index.json.gz", "./metrics.gz"]);
    expect(inode(path.join(b, "metrics.gz"))).toBe(kept);
    for (const f of ["api/list/index.json", "api/short/index.json"])
      expectSameBytes(gunzipSync(readFileSync(path.join(b, `${f}.gz`))), readFileSync(path.join(b, f)));
    const fresh = path.join(d, "fresh");
    await emitTree(fresh, next);
    const bytes = (dir: string) => new Map(twins(dir).map((f) => [f, readFileSync(path.join(dir, f)).toString("base64")]));
    expect(bytes(b)).toEqual(bytes(fresh));
  });

  it("never writes through a symbolic link planted at a recycled file's name: the link is replaced by the file", async () => {
    const d = tempDir();
    const a = path.join(d, "a");
    const outside = path.join(d, "outside.txt");
    writeFileSync(outside, "not ours");
    const files = (body: string) => [
      { path: "/api/short/index.json", body },
      { path: "/api/pieces/index.json", body: [Buffer.from(body), Buffer.from(body)] },
    ];
    await emitTree(a, files("one"), { recycle: {} });
    for (const f of ["api/short/index.json", "api/pieces/index.json"]) {
      rmSync(path.join(a, f));
      symlinkSync(outside, path.join(a, f));
    }
    const b = path.join(d, "b");
    await emitTree(b, files("two"), { recycle: { from: a } });
    expect(readFileSync(outside, "utf8")).toBe("not ours");
    for (const f of ["api/short/index.json", "api/pieces/index.json"]) expect(lstatSync(path.join(b, f)).isSymbolicLink()).toBe(false);
    expect(readFileSync(path.join(b, "api/short/index.json"), "utf8")).toBe("two");
    expect(readFileSync(path.join(b, "api/pieces/index.json"), "utf8")).toBe("[two,two]");
  });

  it("empties a tree whose digests are missing or unreadable, and starts from nothing", async () => {
    const d = tempDir();
    const a = path.join(d, "a");
    await emitTree(a, [{ path: "/api/x/index.json", body: "1" }], { recycle: {} });
    writeFileSync(path.join(a, ".mesh-api-files.json"), "{not json");
    writeFileSync(path.join(a, "stray.txt"), "?");
    const b = path.join(d, "b");
    await emitTree(b, [{ path: "/api/y/index.json", body: "2" }], { recycle: { from: a } });
    expect([...tree(b).keys()]).toEqual([".mesh-api-files.json", "api/y/index.json"]);
    // its files were set aside for a detached remover, which removes them
    removersDone(d);
    expect(readdirSync(d)).toEqual(["b"]);
  });

  it("records the digests of more files than one piece of the record holds, and a recycled build trusts them", async () => {
    const d = tempDir();
    const [a, b] = [path.join(d, "a"), path.join(d, "b")];
    const files = (changed: number) =>
      Array.from({ length: 9000 }, (_, i) => ({ path: `/api/x/${i}/index.json`, body: i === changed ? "new" : String(i) }));
    await emitTree(a, files(-1), { recycle: {} });
    const text = readFileSync(path.join(a, ".mesh-api-files.json"), "utf8");
    const record = JSON.parse(text) as { files: Record<string, [string, number]> };
    expect(Object.keys(record.files)).toHaveLength(9000);
    expect(text).toBe(`${JSON.stringify(record)}\n`);
    // trusted: the unchanged files are kept (their inodes), the changed one rewritten
    const kept = inode(path.join(a, "api/x/17/index.json"));
    await emitTree(b, files(5), { recycle: { from: a } });
    expect(inode(path.join(b, "api/x/17/index.json"))).toBe(kept);
    expect(readFileSync(path.join(b, "api/x/5/index.json"), "utf8")).toBe("new");
  });

  it("gives each known file once: taken, it is neither known nor left (what a recycled build removes)", () => {
    const known = new KnownFiles();
    const sha = createHash("sha1").update("x").digest("base64url");
    for (let i = 0; i < 3000; i++) expect(known.add(`/f/${i}`, sha, i)).toBe(true);
    known.fit();
    for (let i = 0; i < 3000; i += 3) expect(known.take(`/f/${i}`)).toEqual([sha, i]);
    expect(known.take("/f/3")).toBeUndefined();
    expect(known.get("/f/3")).toBeUndefined();
    expect(known.get("/f/4")).toEqual([sha, 4]);
    const left = [...known.names()];
    expect(left.length).toBe(2000);
    expect(left.every((n) => Number(n.slice(3)) % 3 !== 0)).toBe(true);
    known.clear();
    expect([...known.names()]).toEqual([]);
  });

  it("reads the digests record as JSON reads it, with any name, and nothing but its exact form", () => {
    const names = [
      "/api/x/index.json",
      '/q/"quoted"/a\\b',
      "/ssid/straße/ünï",
      "/ctl/\n\t\u0001",
      "/lone/\ud800/x",
      "/emoji/😀",
      "/s/ /,:[]{}",
    ];
    const sha1 = (text: string) => createHash("sha1").update(text).digest("base64url");
    // the first one's digest ends in "_" and has "-" in it, as base64url writes them
    const files = Object.fromEntries(names.map((n, i) => [n, [i === 0 ? "IX8NRZTKeof9cXsvbvu8_-AZ09w" : sha1(n), i * 1000]]));
    // the last one shares the first one's inode
    files["/linked"] = [...files[names[0]], names[0]];
    const text = `${JSON.stringify({ format: "mesh-api-files/3", files })}\n`;
    const entries = (known: KnownFiles | undefined) => known && new Map([...known.names()].map((n) => [n, known.get(n)]));
    expect(entries(parseDigests(Buffer.from(text)))).toEqual(new Map(Object.entries(files)));
    expect(entries(parseDigests(Buffer.from('{"format":"mesh-api-files/3","files":{}}\n')))).toEqual(new Map());
    // the longest length JSON and a double both hold exactly
    const longest = text.replace(",1000]", `,${Number.MAX_SAFE_INTEGER}]`);
    expect(parseDigests(Buffer.from(longest))?.get(names[1])).toEqual([files[names[1]][0], Number.MAX_SAFE_INTEGER]);
    const first = files[names[0]][0] as string;
    const bad = [
      // a digest that is no SHA-1 in base64url: too short, too long, its spare bits set, padded
      text.replace(first, first.slice(1)),
      text.replace(first, `${first}A`),
      text.replace(first, `${first.slice(0, -1)}B`),
      text.replace(first, `${first}=`),
      // base64's own characters, and a byte no alphabet has, at full length
      text.replace(first, `${first.slice(0, 5)}+${first.slice(6)}`),
      text.replace(first, `${first.slice(0, 5)}/${first.slice(6)}`),
      text.replace(first, `${first.slice(0, 5)}é${first.slice(6)}`),
      // a name twice
      text.replace("}}\n", `,${JSON.stringify(names[0])}:["${first}",1]}}\n`),
      text.replace("}}\n", ",}}\n"),
      text.slice(0, -1),
      // an older record: it says nothing of links
      text.replace("mesh-api-files/3", "mesh-api-files/2"),
      // a link to a name not before it, to itself, not a name, or more after it
      text.replace(`${JSON.stringify(names[0])}]`, '"/nowhere"]'),
      text.replace(`${JSON.stringify(names[0])}]`, '"/linked"]'),
      text.replace(`${JSON.stringify(names[0])}]`, "1]"),
      text.replace(`${JSON.stringify(names[0])}]`, `${JSON.stringify(names[0])},1]`),
      text.replace(`${JSON.stringify(names[0])}]`, `${JSON.stringify(names[0])}`),
      text.replace(",1000]", ",1e3]"),
      text.replace(",1000]", ',"1000"]'),
      text.replace(",1000]", ",-1000]"),
      text.replace(",1000]", ",99999999999999999999]"),
      text.replace(`":["${first}`, `": ["${first}`),
      text.replace("\\u0001", "\\x01"),
      text.replace('"/api/x/index.json"', '"/api/x/\u0001"'),
      text.replace(`"${first}"`, `"${first.slice(0, -2)}\\\\x"`),
      text.replace(",1000]", ",01000]"),
      text.replace(",1000]", ",00]"),
      text.replace(",1000]", ",9007199254740992]"),
      "{not json",
      "",
    ];
    for (const b of bad) expect(parseDigests(Buffer.from(b)), b.slice(0, 80)).toBeUndefined();
    expect(parseDigests(undefined)).toBeUndefined();
  });

  it("starts from an empty folder when the tree to recycle is gone", async () => {
    const d = tempDir();
    const b = path.join(d, "b");
    await emitTree(b, [{ path: "/api/y/index.json", body: "2" }], { recycle: { from: path.join(d, "absent") } });
    expect(readFileSync(path.join(b, "api/y/index.json"), "utf8")).toBe("2");
  });
});
