import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { synthesize, writeSynthDump } from "../src/gen/synth.ts";
import { build, validate } from "../src/index.ts";
import { UsageError } from "../src/core/problems.ts";
import { command, tempDir, treeDigest } from "./support/tree.ts";

/**
 * A dump folder that is not laid out as the format says gets one message naming what was expected and
 * what was found, before (and instead of) any record-level error; a missing dump folder, or a file
 * named instead of it, is a usage error (exit 2). Every dump is a fresh temporary folder.
 */

/** A valid synthetic dump of 50 access points (accesspoints/part-000.ndjson, links/part-000.json), changed by `change`. */
async function dump(change: (dir: string) => void = () => {}): Promise<string> {
  const dir = path.join(tempDir(), "mydump");
  await writeSynthDump(dir, synthesize({ aps: 50, seed: 9 }));
  change(dir);
  return dir;
}

const errorLines = (stderr: string) => stderr.split("\n").filter((l) => l.startsWith("error: "));

/** An earlier build of a valid dump, which a failing build must leave as it was. */
let out: string;
let before: Map<string, string>;
beforeAll(async () => {
  out = path.join(tempDir(), "dist");
  await build({ data: await dump(), out });
  before = treeDigest(out);
}, 60_000);

describe("a dump folder that holds no access point or link file", () => {
  it("a misnamed folder (access_points/): one error naming what was expected and found, no record errors; build writes nothing", async () => {
    const data = await dump((d) => renameSync(path.join(d, "accesspoints"), path.join(d, "access_points")));
    const v = await command(["validate", "--data", data]);
    expect(v.status).toBe(1);
    expect(errorLines(v.stderr)).toEqual([
      `error: ${data} $: no access point file: expected accesspoints/**/*.ndjson or .json; found, but not read: access_points/`,
    ]);
    const b = await command(["build", "--data", data, "--out", out]);
    expect(b.status).toBe(1);
    expect(errorLines(b.stderr)).toEqual(errorLines(v.stderr));
    expect(b.stderr).toContain("left unchanged");
    expect(treeDigest(out)).toEqual(before);
  });

  it("files of another extension (.jsonl) are named as not read", async () => {
    const data = await dump((d) => {
      renameSync(path.join(d, "accesspoints/part-000.ndjson"), path.join(d, "accesspoints/part-000.jsonl"));
      renameSync(path.join(d, "links/part-000.json"), path.join(d, "links/part-000.jsonl"));
    });
    const v = await command(["validate", "--data", data]);
    expect(v.status).toBe(1);
    expect(errorLines(v.stderr)).toEqual([
      `error: ${data} $: no access point or link file: expected accesspoints/**/*.ndjson or .json and links/**/*.ndjson or .json ` +
        "(a network without links has an empty links/links.ndjson); found, but not read: accesspoints/part-000.jsonl, links/part-000.jsonl",
    ]);
  });

  it("no links/ at all is an error naming links/**/*.ndjson; an empty links file makes a network without links", async () => {
    const data = await dump((d) => renameSync(path.join(d, "links"), path.join(path.dirname(d), "links-elsewhere")));
    const v = await command(["validate", "--data", data]);
    expect(v.status).toBe(1);
    expect(errorLines(v.stderr)).toEqual([
      `error: ${data} $: no link file: expected links/**/*.ndjson or .json (a network without links has an empty links/links.ndjson)`,
    ]);
    mkdirSync(path.join(data, "links"));
    writeFileSync(path.join(data, "links/links.ndjson"), "");
    const again = await command(["validate", "--data", data]);
    expect(again.status, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/^valid: 3 files, 50 access points, .*, 0 links, /m);
  });

  it("an empty folder says so", async () => {
    const data = tempDir();
    const v = await command(["validate", "--data", data]);
    expect(v.status).toBe(1);
    expect(errorLines(v.stderr)).toEqual([
      `error: ${data} $: no access point or link file: expected accesspoints/**/*.ndjson or .json and links/**/*.ndjson or .json ` +
        "(a network without links has an empty links/links.ndjson); the folder is empty",
    ]);
  });
});

describe("files a complete dump holds beside its records", () => {
  it("are named in one warning; the build goes on", async () => {
    const data = await dump((d) => {
      writeFileSync(path.join(d, "README.md"), "notes\n");
      writeFileSync(path.join(d, "links/old.jsonl"), "{}\n");
      mkdirSync(path.join(d, "access_points"));
      writeFileSync(path.join(d, "access_points/x.ndjson"), "{}\n");
      writeFileSync(path.join(d, ".hidden.ndjson"), "{}\n");
    });
    const v = await command(["validate", "--data", data]);
    expect(v.status, v.stderr).toBe(0);
    const warnings = v.stderr.split("\n").filter((l) => l.startsWith("warning: "));
    expect(warnings).toEqual([
      `warning: ${data} $: not read: README.md, access_points/, links/old.jsonl; records are read from accesspoints/ and links/ only, ` +
        "in .ndjson and .json files (hidden ones are skipped silently)",
    ]);
    const fresh = path.join(tempDir(), "dist");
    const b = await command(["build", "--data", data, "--out", fresh]);
    expect(b.status, b.stderr).toBe(0);
    expect(b.stderr).toContain(warnings[0]);
  });
});

describe("a dump folder that is not there", () => {
  it("a file instead of the folder (--data mydump/network.json) is a usage error naming its folder", async () => {
    const data = await dump();
    for (const args of [
      ["validate", "--data", path.join(data, "network.json")],
      ["build", "--data", path.join(data, "network.json"), "--out", out],
    ]) {
      const r = await command(args);
      expect(r.status, args[0]).toBe(2);
      expect(r.stderr, args[0]).toBe(`mesh-api: ${data}/network.json is a file, not a dump folder; name its folder: --data ${data}\n`);
    }
    const inner = await command(["validate", "--data", path.join(data, "links/part-000.json")]);
    expect(inner.stderr).toBe(`mesh-api: ${data}/links/part-000.json is a file, not a dump folder; name its folder: --data ${data}\n`);
    const stray = path.join(tempDir(), "notes.txt");
    writeFileSync(stray, "x\n");
    expect((await command(["validate", "--data", stray])).stderr).toBe(
      `mesh-api: ${stray} is a file, not a dump folder; a dump is a folder that holds network.json, accesspoints/ and links/\n`,
    );
    expect(treeDigest(out)).toEqual(before);
  });

  it("a missing folder is a usage error (exit 2) with one sentence, for validate and build; the library throws UsageError", async () => {
    const missing = path.join(tempDir(), "nodump");
    for (const args of [
      ["validate", "--data", missing],
      ["build", "--data", missing, "--out", out],
    ]) {
      const r = await command(args);
      expect(r.status, args[0]).toBe(2);
      expect(r.stderr, args[0]).toBe(
        `mesh-api: the dump folder ${missing} does not exist; name the folder that holds network.json, accesspoints/ and links/ with --data\n`,
      );
    }
    expect(treeDigest(out)).toEqual(before);
    await expect(validate({ data: missing })).rejects.toThrow(UsageError);
  });
});
