import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { Readable } from "node:stream";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ArchiveError, extractArchive, writeArchive } from "../src/io/read/archive.ts";
import { TarWriter } from "../src/io/read/tar.ts";
import { ROOT, tempDir } from "./support/tree.ts";

const DATA = path.join(ROOT, "data");

const tarStream = createRequire(import.meta.url)("tar-stream") as typeof import("tar-stream");

interface Item {
  readonly name: string;
  readonly body?: Buffer;
}

/** The bytes tar-stream's packer makes of the items, with the headers the archives use. */
async function packed(items: readonly Item[], mtime: Date): Promise<Buffer> {
  const pack = tarStream.pack();
  const chunks: Buffer[] = [];
  pack.on("data", (c: unknown) => void chunks.push(c as Buffer));
  const ended = new Promise<void>((ok) => pack.on("end", () => ok()));
  const header = { mtime, uid: 0, gid: 0, uname: "", gname: "" };
  for (const { name, body } of items) {
    await new Promise<void>((ok, fail) =>
      body
        ? void pack.entry({ ...header, name, type: "file", mode: 0o644, size: body.length }, body, (e) => (e ? fail(e) : ok()))
        : void pack.entry({ ...header, name, type: "directory", mode: 0o755 }, (e) => (e ? fail(e) : ok())),
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
      "a/",
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
    };
    const items: Item[] = names.map((name) =>
      name.endsWith("/") ? { name } : { name, body: bodies[name] ?? Buffer.from(JSON.stringify({ name })) },
    );
    const mtime = new Date("2026-11-09T10:11:12.500Z");
    const tar = new TarWriter((mtime.getTime() / 1000) | 0, 2 ** 16);
    const chunks: Buffer[] = [];
    for (const [i, { name, body }] of items.entries()) {
      if (!body) tar.folder(name);
      else {
        const file = path.join(dir, String(i));
        writeFileSync(file, body);
        tar.file(name, file);
      }
      chunks.push(...tar.take());
    }
    tar.end();
    chunks.push(...tar.take());
    const expected = await packed(items, mtime);
    const written = Buffer.concat(chunks);
    expect(written.length).toBe(expected.length);
    expect(written.equals(expected)).toBe(true);
    // the long body had a chunk of its own; every other chunk holds something and no more than the chunk size
    const own = 3 * 2 ** 16 + 512;
    expect(chunks.filter((c) => c.length === own)).toHaveLength(1);
    expect(chunks.filter((c) => c.length !== own).every((c) => c.length > 0 && c.length <= 2 ** 16)).toBe(true);
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
