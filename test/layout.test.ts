import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { placeholderValues } from "../src/core/plan.ts";
import {
  API,
  FILES,
  flatFile,
  KEYED_FOLDERS,
  layoutOf,
  parseRouting,
  placeFile,
  shardOf,
  SHARD_MARK,
  twinnedFile,
  type Layout,
} from "../src/core/routes.ts";
import { fileKey } from "../src/core/values/names.ts";
import { shardPattern } from "../src/hosts/compiled.ts";
import { netlify } from "../src/hosts/netlify.ts";
import { netlifyEdge } from "../src/hosts/netlify-edge.ts";
import { sharedBuild } from "./support/shared.ts";

/**
 * Large folders split into shards (core/routes/layout.ts, issue 30): which folders may split, where a
 * file goes and back, when a folder splits, and that the pattern the servers print computes the
 * shard the build writes.
 */

const LINKS = `${API}/link/`;
const split: Layout = { split: [`${API}/interface/`, `${API}/interface/_q/if_hwaddress/`, LINKS] };

describe("the folders of keyed entries", () => {
  it("are the fixed folders followed by a placeholder folder in a template, with their fixed entries", () => {
    expect(KEYED_FOLDERS.get(LINKS)).toEqual(new Set(["index.json", "_q"]));
    expect(KEYED_FOLDERS.get(`${API}/interface/_q/if_hwaddress/`)).toEqual(new Set());
    expect(KEYED_FOLDERS.has(`${API}/accesspoint/`)).toBe(true);
    // an asset's name is a file, not a folder of keys
    expect([...KEYED_FOLDERS.keys()].some((f) => f.startsWith("/map/"))).toBe(false);
    for (const folder of KEYED_FOLDERS.keys()) expect(folder).not.toMatch(/:/);
    // no fixed entry could be taken for a shard
    for (const fixed of KEYED_FOLDERS.values()) for (const name of fixed) expect(name.startsWith(SHARD_MARK)).toBe(false);
    expect(Object.values<string>(FILES).some((t) => t.startsWith(LINKS) && t.slice(LINKS.length).startsWith(":"))).toBe(true);
  });
});

describe("a file's place", () => {
  it("moves a key of a split folder into its shard and leaves everything else", () => {
    expect(placeFile(`${LINKS}10.1.0.1-10.1.0.34/index.json`, split)).toBe(`${LINKS}~34/10.1.0.1-10.1.0.34/index.json`);
    expect(placeFile(`${LINKS}7/index.json`, split)).toBe(`${LINKS}~7/7/index.json`);
    expect(placeFile(`${LINKS}index.json`, split)).toBe(`${LINKS}index.json`);
    expect(placeFile(`${LINKS}_q/status/online/index.json`, split)).toBe(`${LINKS}_q/status/online/index.json`);
    expect(placeFile(`${API}/interface/_q/if_hwaddress/ff_3Ab9/index.json`, split)).toBe(
      `${API}/interface/_q/if_hwaddress/~b9/ff_3Ab9/index.json`,
    );
    expect(placeFile(`${API}/interface/fd00::1/accesspoint/index.json`, split)).toBe(`${API}/interface/~:1/fd00::1/accesspoint/index.json`);
    expect(placeFile(`${API}/site/3/index.json`, split)).toBe(`${API}/site/3/index.json`);
    expect(placeFile(`${LINKS}7/index.json`, { split: [] })).toBe(`${LINKS}7/index.json`);
  });

  it("comes back to its flat path, for any key (fast-check)", () => {
    const key = fc.oneof(
      fc.string({ minLength: 1, maxLength: 30 }).map(fileKey),
      fc.ipV4(),
      fc.ipV6(),
      fc.constantFrom("~", "~~", "_q", "._", "a.", "~34"),
    );
    fc.assert(
      fc.property(key, fc.constantFrom(...split.split), fc.constantFrom("index.json", "accesspoint/index.json"), (k, folder, rest) => {
        const flat = `${folder}${k}/${rest}`;
        const placed = placeFile(flat, split);
        if (KEYED_FOLDERS.get(folder)!.has(k)) return placed === flat;
        const shard = placed.slice(folder.length).split("/")[0];
        return shard === shardOf(k) && shard !== "." && shard !== ".." && flatFile(placed, split) === flat;
      }),
      { numRuns: 3000 },
    );
  });

  it("is computed alike by the servers' pattern (the shard is the key's last two characters, or its one)", () => {
    const pattern = new RegExp(shardPattern({ group: (n, b) => `(?<${n}>${b})`, slash: "/", literal: (v) => v }), "s");
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 40 }), (k) => {
        const m = pattern.exec(`1|${k}`);
        return m !== null && `${SHARD_MARK}${m.groups!.mesh_s}` === shardOf(k);
      }),
      { numRuns: 3000 },
    );
    // a folder that does not split gets no shard
    expect(pattern.test("|abc")).toBe(false);
  });
});

describe("the layout of a build", () => {
  const paths = (n: number) => [
    `${LINKS}index.json`,
    ...Array.from({ length: n }, (_, i) => `${LINKS}${i}/index.json`),
    `${LINKS}_q/status/online/index.json`,
  ];

  it("splits a folder only past the limit, counting its fixed entries", () => {
    expect(layoutOf(paths(8), 10).layout.split).toEqual([]);
    expect(layoutOf(paths(9), 10).layout.split).toEqual([LINKS]);
  });

  it("reports a shard still over the limit", () => {
    // keys 0..99 ending in the same two characters only share a shard of one
    const same = Array.from({ length: 12 }, (_, i) => `${LINKS}${i}07/index.json`);
    const plan = layoutOf([...paths(0), ...same], 10);
    expect(plan.layout.split).toEqual([LINKS]);
    expect(plan.over).toEqual([{ folder: `${LINKS}~07/`, entries: 12 }]);
  });

  it("is what a split build writes, names in its routing file, and holds no folder over the limit", async () => {
    const { out, model } = await sharedBuild("synth-300-split");
    const values = placeholderValues(model);
    expect(values.layout.split.length).toBeGreaterThanOrEqual(5);
    const routing = parseRouting(readFileSync(path.join(out, FILES.aliases.slice(1)), "utf8"));
    expect(routing.layout).toEqual(values.layout);
    // A split folder holds its fixed entries and shards; the shards over the limit are the ones reported.
    const over: { folder: string; entries: number }[] = [];
    for (const folder of values.layout.split) {
      const dir = path.join(out, folder.slice(1));
      const names = readdirSync(dir);
      // and the gzip twins of its fixed files (core/routes/compression.ts)
      const fixed = (n: string) => KEYED_FOLDERS.get(folder)!.has(twinnedFile(n));
      expect(names.filter((n) => !n.startsWith(SHARD_MARK) && !fixed(n))).toEqual([]);
      for (const shard of names.filter((n) => n.startsWith(SHARD_MARK))) {
        const entries = readdirSync(path.join(dir, shard)).length;
        if (entries > model.settings.folderLimit) over.push({ folder: `${folder}${shard}/`, entries });
      }
    }
    expect(values.over).toEqual(over.sort((a, b) => (a.folder < b.folder ? -1 : 1)));
  });

  it("is a warning for Netlify: its rules cannot reach a split folder, and a shard over the limit fails a deploy", async () => {
    const { model } = await sharedBuild("synth-300-split");
    const values = placeholderValues(model);
    const rules = netlify.limits(values).map((w) => w.message);
    for (const folder of values.layout.split) expect(rules.some((m) => m.startsWith(`${folder} holds more entries`))).toBe(true);
    const edge = netlifyEdge.limits(values).map((w) => w.message);
    expect(edge).toHaveLength(values.over.length);
    expect(values.over.length).toBeGreaterThan(0);
    for (const { folder } of values.over) expect(edge.some((m) => m.startsWith(`${folder} holds`))).toBe(true);
    expect(netlifyEdge.limits(placeholderValues((await sharedBuild("public")).model))).toEqual([]);
  });

  it("leaves a build under the limit as it was: no split, and no `split` in its routing file", async () => {
    const { out, model } = await sharedBuild("public");
    expect(placeholderValues(model).layout.split).toEqual([]);
    expect(readFileSync(path.join(out, FILES.aliases.slice(1)), "utf8")).not.toContain('"split"');
  });
});
