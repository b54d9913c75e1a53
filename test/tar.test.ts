import fc from "fast-check";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { Readable } from "node:stream";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ArchiveError, ArchiveStream, extractArchive, writeArchive } from "../src/io/read/archive.ts";
import { createHash } from "node:crypto";
import { gunzipSync, gzipSync } from "node:zlib";
import { execFileSync } from "node:child_process";
import { TarWriter } from "../src/io/read/tar.ts";
import { emitTree } from "../src/io/write/emit.ts";
import { ROOT, tempDir } from "./support/tree.ts";

const DATA = path.join(ROOT, "data");

const tarStream = createRequire(import.meta.url)("tar-stream") as typeof import("tar-stream");

interface Item {
  readonly name: string;
  readonly body: Buffer;
}

/** The bytes tar-stream's packer makes of the items, with the headers the archives use. */
async function packed(items: readonly Item[], mtime: Date): Promise<Buffer> {
  const pack = tarStream.pack();
  const chunks: Buffer[] = [];
  pack.on("data", (c: unknown) => void chunks.push(c as Buffer));
  const ended = new Promise<void>((ok) => pack.on("end", () => ok()));
  const header = { mtime, uid: 0, gid: 0, uname: "", gname: "" };
  for (const { name, body } of items) {
    await new Promise<void>(
      (ok, fail) => void pack.entry({ ...header, name, type: "file", mode: 0o644, size: body.length }, body, (e) => (e ? fail(e) : ok())),
    );
  }
  pack.finalize();
  await ended;
  return Buffer.concat(chunks);
}

describe("the archives", () => {
  it("writes the bytes tar-stream's packer writes, long, non-ASCII and unsplittable names and bodies of every length included", async () => {
    const dir = tempDir();
    const long = (n: number) => Array.from({ length: n }, (_, i) => `folder${i}`).join("/");
    const names = [
      "a/index.json",
      "a/empty.json",
      "a/block.json",
      "a/big.json",
      `a/${"n".repeat(93)}.json`, // 100 bytes: ustar's name field whole
      `a/b/${"n".repeat(92)}.json`, // 101: split into ustar's prefix and name
      `a/${long(14)}/index.json`,
      `a/${long(30)}/index.json`, // over 255: a pax record
      `a/${"x".repeat(120)}.json`, // no "/" to split at: a pax record
      "a/_q/wifi_ssid/Caf\u00e9 \u{1F4F6}/index.json", // not ASCII: a pax record
      `a/${"\u00fc".repeat(60)}/index.json`,
    ];
    const bodies: Record<string, Buffer> = {
      "a/empty.json": Buffer.alloc(0),
      "a/block.json": Buffer.alloc(1024, "b"),
      "a/big.json": Buffer.alloc(3 * 2 ** 16 + 7, "c"), // longer than the writer's chunk below
      [`a/${"n".repeat(93)}.json`]: Buffer.alloc(3 * 2 ** 16 + 300, "d"), // as long, from memory
    };
    const items: Item[] = names.map((name) => ({ name, body: bodies[name] ?? Buffer.from(JSON.stringify({ name })) }));
    const mtime = new Date("2026-11-09T10:11:12.500Z");
    const tar = new TarWriter((mtime.getTime() / 1000) | 0, 2 ** 16);
    const chunks: Buffer[] = [];
    for (const [i, { name, body }] of items.entries()) {
      const file = path.join(dir, String(i));
      writeFileSync(file, body);
      // each step of an entry leaves a chunk to take
      for (const _ of i % 2 === 1 ? tar.bytesInChunks(name, body) : tar.fileInChunks(name, file)) chunks.push(...tar.take());
      chunks.push(...tar.take());
    }
    tar.end();
    chunks.push(...tar.take());
    const expected = await packed(items, mtime);
    const written = Buffer.concat(chunks);
    expect(written.length).toBe(expected.length);
    expect(written.equals(expected)).toBe(true);
    // the long bodies (one from its file, one from memory) are spread over full chunks, never a chunk of their own
    expect(chunks.every((c) => c.length > 0 && c.length <= 2 ** 16)).toBe(true);
    expect(chunks.filter((c) => c.length === 2 ** 16).length).toBeGreaterThanOrEqual(6);
  });

  it("fills a chunk handed back again, and no other: the stream's bytes are those of new chunks", async () => {
    const mtime = new Date("2026-11-09T10:11:12Z");
    const body = Buffer.alloc(5 * 2 ** 16 + 11, "e");
    const run = (giveBack: boolean) => {
      const tar = new TarWriter((mtime.getTime() / 1000) | 0, 2 ** 16);
      const copies: Buffer[] = [];
      const backings = new Set<ArrayBufferLike>();
      tar.giveBack(foreign); // not the writer's, though of its chunks' size: never written into
      for (const _ of tar.bytesInChunks("a/long.json", body))
        for (const chunk of tar.take()) {
          copies.push(Buffer.from(chunk)); // what a consumer made of it before handing it back
          backings.add(chunk.buffer);
          if (giveBack) tar.giveBack(chunk);
        }
      tar.end();
      for (const chunk of tar.take()) copies.push(Buffer.from(chunk));
      return { bytes: Buffer.concat(copies), backings: backings.size };
    };
    const foreign = Buffer.alloc(2 ** 16, 7);
    const reused = run(true);
    const fresh = run(false);
    expect(reused.bytes.equals(fresh.bytes)).toBe(true);
    expect(reused.bytes.equals(await packed([{ name: "a/long.json", body }], mtime))).toBe(true);
    expect(fresh.backings).toBeGreaterThanOrEqual(5);
    // the chunk being filled and the one handed back, in turn
    expect(reused.backings).toBe(2);
    expect(foreign.every((b) => b === 7)).toBe(true);
  });

  it("streams files given in any order, no folder entries, waiting for the compressor without piling up listeners; its count and sum are the file's", async () => {
    const file = path.join(tempDir(), "x.tar.gz");
    const archive = new ArchiveStream(file, "top", new Date(0));
    const warnings: string[] = [];
    const warned = (w: Error) => warnings.push(w.name);
    process.on("warning", warned);
    let waits = 0;
    try {
      // 140 MiB of bodies that gzip must work at (pseudo-random bytes), handed faster than it compresses them
      let x = 2463534242;
      const bodies = Array.from({ length: 8 }, () =>
        Buffer.from(Uint32Array.from({ length: 2 ** 16 }, () => ((x ^= x << 13), (x ^= x >>> 17), (x ^= x << 5), x >>> 0)).buffer),
      );
      const body = (i: number) => bodies[i % 8];
      for (let i = 0; i < 560; i++) {
        archive.bytes(`${i % 2 ? "b" : "a"}/${i % 3}/${i}.json`, body(i));
        const wait = archive.behind();
        if (wait) {
          waits++;
          await wait;
        }
      }
      const { bytes, sha256 } = await archive.end();
      await new Promise((ok) => setImmediate(ok));
      const read = readFileSync(file);
      expect(bytes).toBe(read.length);
      expect(sha256).toBe(createHash("sha256").update(read).digest("hex"));
    } finally {
      process.off("warning", warned);
    }
    expect(waits).toBeGreaterThan(11);
    expect(warnings).toEqual([]);
    const names = execFileSync("tar", ["-tzf", file], { encoding: "utf8" }).trim().split("\n");
    expect(names).toEqual(Array.from({ length: 560 }, (_, i) => `top/${i % 2 ? "b" : "a"}/${i % 3}/${i}.json`));
  });

  it("writes files only, in the order given, which tar and extractArchive unpack into their folders: folders whose names begin alike, files at the top (fast-check, fixed seed)", async () => {
    const segment = fc.constantFrom("a", "b", "ab", "a.b", "index.json");
    const name = fc.array(segment, { minLength: 1, maxLength: 5 }).map((parts) => parts.join("/"));
    // no name is also a folder of another
    const names = fc
      .uniqueArray(name, { minLength: 1, maxLength: 12 })
      .filter((all) => all.every((n) => !all.some((m) => m.startsWith(`${n}/`))));
    const files = (dir: string): string[] =>
      readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
        .sort();
    await fc.assert(
      fc.asyncProperty(names, fc.boolean(), async (given, sorted) => {
        const order = sorted ? [...given].sort() : given;
        const file = path.join(tempDir(), "x.tar.gz");
        const archive = new ArchiveStream(file, "top", new Date(0));
        for (const n of order) archive.bytes(n, Buffer.from(n));
        await archive.end();
        const listed = execFileSync("tar", ["-tzf", file], { encoding: "utf8" }).trim().split("\n");
        expect(listed).toEqual(order.map((n) => `top/${n}`));
        const byTar = tempDir();
        execFileSync("tar", ["-xzf", file, "-C", byTar]);
        const byUs = tempDir();
        expect(await extractArchive(Readable.from([readFileSync(file)]), byUs)).toBe(order.length);
        for (const dir of [byTar, byUs]) {
          expect(files(path.join(dir, "top"))).toEqual([...given].sort());
          for (const n of order) expect(readFileSync(path.join(dir, "top", n), "utf8")).toBe(n);
        }
      }),
      { seed: 20261201, numRuns: 150 },
    );
  });

  it("packs a file whose gzip is given as that gzip itself, a member of its own: tar, gunzip and Node read the archive whole, and its bytes are the same however fast each member comes", async () => {
    let x = 362436069;
    const text = (n: number) =>
      Buffer.from(Array.from({ length: n }, () => ((x ^= x << 13), (x ^= x >>> 17), (x ^= x << 5), (x >>> 0) % 7)).join(","));
    const files = [text(3_000), text(200_000), text(5), text(2_500_000), text(70_000)];
    const twins = files.map((f) => gzipSync(f, { level: 6 }));
    const pack = async (delays: readonly number[]) => {
      const file = path.join(tempDir(), "x.tar.gz");
      const archive = new ArchiveStream(file, "top", new Date(0));
      for (const [i, f] of files.entries()) {
        const name = `d${i % 2}/${i}.json`;
        const later = new Promise<Buffer>((ok) => setTimeout(() => ok(twins[i]), delays[i]));
        await (i % 2 ? archive.compressed(name, f.length, later) : archive.bytes(name, f));
      }
      await archive.end();
      return readFileSync(file);
    };
    const a = await pack([0, 30, 0, 5, 0]);
    const b = await pack([0, 0, 0, 40, 0]);
    expect(a.equals(b)).toBe(true);
    // the twins' deflated bytes are there as they are, not compressed again
    for (const i of [1, 3]) expect(a.includes(twins[i].subarray(10, twins[i].length - 8))).toBe(true);
    const unpacked = tempDir();
    const file = path.join(unpacked, "x.tar.gz");
    writeFileSync(file, a);
    execFileSync("tar", ["-xzf", file, "-C", unpacked]);
    for (const [i, f] of files.entries()) expect(readFileSync(path.join(unpacked, `top/d${i % 2}/${i}.json`)).equals(f)).toBe(true);
    expect(execFileSync("gzip", ["-t", file]).length).toBe(0);
    const tar = gunzipSync(a);
    expect(tar.length % 512).toBe(0);
    expect(tar.includes(files[3])).toBe(true);
    // a gzip of other bytes than the file's is refused, never packed into a broken tar
    const wrong = new ArchiveStream(path.join(tempDir(), "y.tar.gz"), "top", new Date(0));
    await wrong.compressed("a.json", 10, Promise.resolve(gzipSync("12345")));
    await expect(wrong.end()).rejects.toThrow(/a.json: the gzip member given is not of its 10 bytes/);
  });

  it("packs a long body a chunk at a time, waiting for the compressor between chunks, not all of it at once", async () => {
    const file = path.join(tempDir(), "x.tar.gz");
    const archive = new ArchiveStream(file, "top", new Date(0));
    let x = 88172645;
    const long = Buffer.from(Uint32Array.from({ length: 2 ** 23 }, () => ((x ^= x << 13), (x ^= x >>> 17), (x ^= x << 5), x >>> 0)).buffer); // 32 MiB
    const wait = archive.bytes("long.json", long);
    expect(wait).toBeInstanceOf(Promise);
    await wait;
    await archive.end();
    const unpacked = tempDir();
    execFileSync("tar", ["-xzf", file, "-C", unpacked]);
    expect(readFileSync(path.join(unpacked, "top/long.json")).equals(long)).toBe(true);
  });

  it("knows before it is ended that its file cannot be written; end() throws why, and a build feeding it stops early", async () => {
    const archive = new ArchiveStream(path.join(tempDir(), "gone", "x.tar.gz"), "top", new Date(0));
    archive.bytes("a.json", Buffer.from("{}"));
    for (let i = 0; i < 200 && archive.failure === undefined; i++) await new Promise((ok) => setTimeout(ok, 5));
    expect((archive.failure as NodeJS.ErrnoException).code).toBe("ENOENT");
    expect(archive.behind()).toBeUndefined();
    await expect(archive.end()).rejects.toThrow(/ENOENT/);
    await expect(
      writeArchive(path.join(tempDir(), "gone", "x.tar.gz"), { from: DATA, folder: "x", files: ["network.json"] }, new Date(0)),
    ).rejects.toThrow(/ENOENT/);

    let written = 0;
    const files = Array.from({ length: 40_000 }, (_, i) => ({ path: `/api/${i % 13}/${i}/index.json`, body: `{"i":${i}}` }));
    const build = emitTree(path.join(tempDir(), "dist"), files, {
      progress: (n) => void (written = n),
      archive: { takes: () => true, open: (root) => new ArchiveStream(path.join(root, "gone", "x.tar.gz"), "top", new Date(0)) },
    });
    await expect(build).rejects.toThrow(/ENOENT/);
    expect(written).toBeLessThan(files.length);
  });

  it("ends with an error when the archive is cut anywhere, never waiting for a file that will not come", async () => {
    // A dump's NDJSON parts: a cut inside one of them is where a write waited for an end that had come.
    const files = readdirSync(DATA, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => path.relative(DATA, path.join(e.parentPath, e.name)));
    const archive = path.join(tempDir(), "x.tar.gz");
    await writeArchive(archive, { from: DATA, folder: "x", files }, new Date(0));
    const bytes = readFileSync(archive);
    expect(await extractArchive(Readable.from([bytes]), tempDir())).toBe(files.length);
    // the first cut that is not refused ends the loop: a hang costs its 2 s once, not per cut
    let first: string | undefined;
    for (let cut = 10; cut < Math.min(bytes.length, 12_000) && !first; cut += 13) {
      let timer: NodeJS.Timeout | undefined;
      const ended = await Promise.race([
        extractArchive(Readable.from([bytes.subarray(0, cut)]), path.join(tempDir(), "out")).then(
          () => "extracted",
          (err: unknown) => (err instanceof ArchiveError ? "refused" : `failed otherwise: ${String(err)}`),
        ),
        new Promise<string>((ok) => (timer = setTimeout(() => ok("hung"), 2_000))),
      ]);
      clearTimeout(timer);
      if (ended !== "refused") first = `cut at ${cut}: ${ended}`;
    }
    expect(first).toBeUndefined();
  });
});
