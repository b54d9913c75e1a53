import { createHash } from "node:crypto";
import { lstatSync, readFileSync, readlinkSync, statSync } from "node:fs";
import path from "node:path";
import fg from "fast-glob";
import { describe, expect, it } from "vitest";
import { ROOT } from "./support/tree.ts";

/**
 * The fixtures copied from ../shared/reference/ (issue 44, item 5): no file is kept twice (the live
 * sample's first step reads the public sample's raw sources, its repeated OLSR tables the first of
 * them, through relative links). Whether each copy still equals its shared file, the contract, is
 * `node scripts/fixtures-check.mjs` (docs/development.md): ../shared is not beside every clone.
 */

const FIXTURES = path.join(ROOT, "test/fixtures");

const files = fg.sync("**/*", { cwd: FIXTURES, dot: true, onlyFiles: false, followSymbolicLinks: false }).sort();
const digest = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

describe("test fixtures", () => {
  it("keeps no file twice: a repeated one is a relative link to the first, inside the fixtures", () => {
    const seen = new Map<string, string>();
    const twice: string[] = [];
    let links = 0;
    for (const rel of files) {
      const full = path.join(FIXTURES, rel);
      const st = lstatSync(full);
      if (st.isSymbolicLink()) {
        links++;
        const target = readlinkSync(full);
        expect(path.isAbsolute(target), `${rel} -> ${target}`).toBe(false);
        const resolved = path.resolve(path.dirname(full), target);
        expect(resolved.startsWith(FIXTURES + path.sep), `${rel} -> ${target} leaves test/fixtures`).toBe(true);
        expect(statSync(resolved).isFile(), `${rel} -> ${target}`).toBe(true);
        continue;
      }
      if (!st.isFile()) continue;
      const d = digest(full);
      const first = seen.get(d);
      if (first) twice.push(`${rel} repeats ${first}`);
      else seen.set(d, rel);
    }
    expect(twice).toEqual([]);
    // the live sample's step 00 raw sources and steps 06 to 08's OLSR table
    expect(links).toBeGreaterThanOrEqual(6);
  });
});
