import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { build } from "../src/index.ts";
import { synthesize, writeSynthDump } from "../src/gen/synth.ts";
import { tempDir, treeDigest } from "./support/tree.ts";
import { FILES } from "../src/core/routes.ts";

/**
 * Every file but the build's record of its dump, which names the dump's folder and digests its
 * files, so differs by design between these layouts (its list of extra files is compared instead).
 */
function servedDigest(dist: string): Map<string, string> {
  const digest = treeDigest(dist);
  const record = JSON.parse(readFileSync(dist + FILES.buildRecord, "utf8")) as { extra: string[] };
  digest.set(FILES.buildRecord.slice(1), record.extra.join("\n"));
  return digest;
}

/** Same network, different files: records shuffled across differently named files, JSON and NDJSON mixed. */

function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

function writeScrambled(dir: string, dump: ReturnType<typeof synthesize>, seed: number) {
  writeFileSync(path.join(dir, "network.json"), JSON.stringify(dump.network));
  const spread = (folder: string, records: unknown[]) => {
    const parts = 7;
    const buckets: unknown[][] = Array.from({ length: parts }, () => []);
    shuffled(records, seed).forEach((r, i) => buckets[(i * 31 + seed) % parts].push(r));
    buckets.forEach((bucket, i) => {
      const sub = path.join(dir, folder, i % 2 ? "nested/deeper" : "");
      mkdirSync(sub, { recursive: true });
      const name = `${String.fromCharCode(122 - ((i * seed) % 26))}-${i}`;
      if (i % 3 === 0) writeFileSync(path.join(sub, `${name}.ndjson`), bucket.map((r) => JSON.stringify(r)).join("\r\n"));
      else writeFileSync(path.join(sub, `${name}.json`), JSON.stringify(bucket, null, i));
    });
  };
  spread("accesspoints", dump.accesspoints);
  spread("links", dump.links);
}

describe("deterministic output", () => {
  it("gives byte-identical trees for the same network in any file layout and record order", async () => {
    const dump = synthesize({ aps: 300, seed: 11 });
    const plain = tempDir();
    await writeSynthDump(plain, dump);
    const a = path.join(tempDir(), "dist");
    await build({ data: plain, out: a });
    const reference = servedDigest(a);
    expect(reference.size).toBeGreaterThan(1000);

    for (const seed of [3, 17]) {
      const data = tempDir();
      writeScrambled(data, dump, seed);
      const b = path.join(tempDir(), "dist");
      await build({ data, out: b });
      expect(servedDigest(b)).toEqual(reference);
    }
  }, 60_000);

  it("rebuilds into an existing output with the same bytes, and a changed dump changes them", async () => {
    const data = tempDir();
    await writeSynthDump(data, synthesize({ aps: 60, seed: 5 }));
    const out = path.join(tempDir(), "dist");
    await build({ data, out });
    const first = treeDigest(out);
    await build({ data, out });
    expect(treeDigest(out)).toEqual(first);
    await writeSynthDump(data, synthesize({ aps: 60, seed: 6 }));
    await build({ data, out });
    expect(treeDigest(out)).not.toEqual(first);
  }, 60_000);
});
