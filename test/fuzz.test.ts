import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { build, InvalidDumpError, validate, type Problem } from "../src/index.ts";
import { synthesize } from "../src/gen/synth.ts";
import { MARKER } from "../src/io/write/ownership.ts";
import { FILES } from "../src/core/routes.ts";
import { tempDir, treeDigest } from "./support/tree.ts";

const RECORD = FILES.buildRecord.slice(1);

/**
 * Property-based fuzzing of load and validation with fast-check (fixed seed, bounded runs): mutated
 * and generated dumps either validate or produce located errors; never an uncaught exception, never
 * a stack trace as the message, never a partial output. 1,200 generated dumps in all.
 */
const SEED = 20261123;
/**
 * A guard against a hang, not a measure: the work is bounded by the number of runs (the first test
 * took 83 s until validate stopped building a server pattern per literal rule of a 2 MB version; 12 s
 * since, on 2 cores).
 */
const HANG = 900_000;
const base = synthesize({ aps: 6, seed: 3 });
const baseFiles = (): Record<string, string> => ({
  "network.json": JSON.stringify(base.network),
  "accesspoints/a.ndjson":
    base.accesspoints
      .slice(0, 3)
      .map((r) => JSON.stringify(r))
      .join("\n") + "\n",
  "accesspoints/more/b.json": JSON.stringify(base.accesspoints.slice(3), null, 1),
  "links/l.json": JSON.stringify(base.links),
});

const weirdString = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom("", "\u0000", "\r\n", "\ufeff", "../../x", "a/b", "%2F", "..", "\u202e", "\ud800", "10.0.0.1", "fd00::1", "1e999", "-0"),
  fc.integer({ min: 1, max: 3 }).map((n) => "x".repeat(n * 700_000)),
);

const jsonish: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  weirdString,
  fc.constantFrom(null, true, -1, 1.5, 2 ** 53, [], {}),
);

type Mutation = (files: Record<string, string>) => void;

const fileName = fc.constantFrom("network.json", "accesspoints/a.ndjson", "accesspoints/more/b.json", "links/l.json");

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  // Structural edits of one record
  fc
    .tuple(
      fc.nat(5),
      fc.constantFrom(
        "main_ip",
        "main_ipv6",
        "position",
        "site",
        "interfaces",
        "lastseen_timestamp",
        "system_load_1min",
        "mesh_version",
        "owner",
        "bogus_field",
        "firmware_type",
      ),
      jsonish,
    )
    .map(([i, field, value]): Mutation => (files) => {
      const aps = [...base.accesspoints];
      aps[i] = { ...aps[i], [field]: value };
      files["accesspoints/a.ndjson"] = aps
        .slice(0, 3)
        .map((r) => JSON.stringify(r))
        .join("\n");
      files["accesspoints/more/b.json"] = JSON.stringify(aps.slice(3));
    }),
  fc.tuple(fc.nat(40), fc.constantFrom("id", "timestamp", "endpoints", "extra"), jsonish).map(([i, field, value]): Mutation => (files) => {
    const links = [...base.links];
    if (links.length) links[i % links.length] = { ...links[i % links.length], [field]: value };
    files["links/l.json"] = JSON.stringify(links);
  }),
  fc
    .tuple(fc.nat(5), fc.constantFrom("id", "if_name", "if_hwaddress", "addresses", "wifi"), jsonish)
    .map(([i, field, value]): Mutation => (files) => {
      const aps = structuredClone(base.accesspoints) as { interfaces: Record<string, unknown>[] }[];
      aps[i].interfaces[0][field] = value;
      files["accesspoints/a.ndjson"] = aps
        .slice(0, 3)
        .map((r) => JSON.stringify(r))
        .join("\n");
      files["accesspoints/more/b.json"] = JSON.stringify(aps.slice(3));
    }),
  // Text-level damage
  fc.tuple(fileName, fc.double({ min: 0, max: 1, noNaN: true })).map(([f, at]): Mutation => (files) => {
    files[f] = files[f].slice(0, Math.floor(files[f].length * at));
  }),
  fc.tuple(fileName, fc.double({ min: 0, max: 1, noNaN: true }), weirdString).map(([f, at, s]): Mutation => (files) => {
    const i = Math.floor(files[f].length * at);
    files[f] = files[f].slice(0, i) + s + files[f].slice(i);
  }),
  fileName.map(
    (f): Mutation =>
      (files) =>
        void (files[f] = ""),
  ),
  fileName.map(
    (f): Mutation =>
      (files) =>
        void (files[f] = "\ufeff" + files[f].replace(/\n/g, "\r\n")),
  ),
  fc.integer({ min: 1, max: 200_000 }).map((depth): Mutation => (files) => {
    files["accesspoints/deep.json"] = "[".repeat(depth) + "]".repeat(depth);
  }),
  fc.constant<Mutation>((files) => {
    // duplicate keys: the last one counts, as in every JSON parser
    files["accesspoints/dup.ndjson"] = '{"main_ip":"10.200.0.1","main_ip":"10.200.0.2","interfaces":[]}\n';
  }),
  fc.constant<Mutation>((files) => {
    files["links/raw.ndjson"] = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]).toString("latin1");
  }),
);

const dumps = fc.array(mutation, { minLength: 0, maxLength: 4 }).map((ms) => {
  const files = baseFiles();
  for (const m of ms) m(files);
  return files;
});

function writeDump(files: Record<string, string>): string {
  const dir = tempDir("mesh-fuzz-");
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text, name.endsWith("raw.ndjson") ? "latin1" : "utf8");
  }
  return dir;
}

function expectLocated(problems: readonly Problem[]) {
  for (const p of problems) {
    expect(typeof p.source.file).toBe("string");
    expect(p.source.file.length).toBeGreaterThan(0);
    expect(p.path.startsWith("$")).toBe(true);
    expect(p.message.length).toBeGreaterThan(0);
    expect(p.message).not.toMatch(/\n\s+at |Error:|TypeError|RangeError/);
  }
}

describe("fuzzing load and validation", () => {
  it(
    "validates or reports located errors for 1,000 mutated dumps, never throwing",
    async () => {
      const outcomes = { valid: 0, invalid: 0 };
      await fc.assert(
        fc.asyncProperty(dumps, async (files) => {
          const dir = writeDump(files);
          const r = await validate({ data: dir });
          rmSync(dir, { recursive: true, force: true });
          expectLocated(r.problems);
          expect(r.problems.some((p) => p.severity === "error")).toBe(r.model === undefined);
          outcomes[r.model ? "valid" : "invalid"]++;
        }),
        { seed: SEED, numRuns: 1000 },
      );
      // Both sides of the property were exercised.
      expect(outcomes.valid).toBeGreaterThan(50);
      expect(outcomes.invalid).toBeGreaterThan(300);
    },
    HANG,
  );

  it(
    "builds completely or leaves the previous output untouched, for 200 more",
    async () => {
      const out = path.join(tempDir(), "dist");
      await build({ data: writeDump(baseFiles()), out });
      let previous = treeDigest(out);
      await fc.assert(
        fc.asyncProperty(dumps, async (files) => {
          try {
            const r = await build({ data: writeDump(files), out });
            const now = treeDigest(out);
            // the build counts responses, not its marker and record
            expect([...now.keys()].filter((f) => f !== MARKER && f !== RECORD)).toHaveLength(r.output.files);
            previous = now;
          } catch (err) {
            expect(err).toBeInstanceOf(InvalidDumpError);
            expectLocated((err as InvalidDumpError).problems);
            expect(treeDigest(out)).toEqual(previous);
          }
          expect(treeDigest(path.dirname(out)).size).toBe(treeDigest(out).size); // no leftovers beside it
        }),
        { seed: SEED + 1, numRuns: 200 },
      );
    },
    HANG,
  );
});
