import { cpSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkDeployment, requestsFromTree, unkey } from "../src/publish/check.ts";
import { build, startPreview, type Preview } from "../src/index.ts";
import { fileKey } from "../src/core/names.ts";
import { PUBLIC_SAMPLE } from "./support/expected.ts";
import { cliAsync, tempDir } from "./support/tree.ts";

/** `mesh-api check` against the preview: identical for the build itself, named routes for an altered copy. */

let out: string;
let altered: string;
let good: Preview;
let bad: Preview;

beforeAll(async () => {
  out = path.join(tempDir(), "dist");
  await build({ data: `${PUBLIC_SAMPLE}dump`, out });
  altered = path.join(tempDir(), "dist");
  cpSync(out, altered, { recursive: true });
  writeFileSync(path.join(altered, "api/v1/site/3/index.json"), "[]");
  writeFileSync(path.join(altered, "api/v1/interface/_q/wifi_ssid/_5A10-_4Blinikum/index.json"), "[]");
  rmSync(path.join(altered, "api/v1/accesspoint/_q/status/online"), { recursive: true });
  [good, bad] = await Promise.all([startPreview({ dir: out, port: 0 }), startPreview({ dir: altered, port: 0 })]);
});

afterAll(async () => {
  await good?.close();
  await bad?.close();
});

describe("live check", () => {
  it("recovers a request for every response file, through the route table", async () => {
    const requests = await requestsFromTree(out);
    expect(requests.length).toBeGreaterThan(4000);
    expect(requests.find((r) => r.file === "/api/v1/accesspoint/_q/firmware_version/_null/index.json")?.target).toBe("/api/v1/accesspoint/?firmware_version=");
    expect(requests.find((r) => r.file.includes("/wifi_ssid/_5A10"))?.target).toBe("/api/v1/interface/?wifi_ssid=Z10-Klinikum");
    for (const v of ["Z10-Klinikum", "00:13:10:27:d6:a4", "Café Meshtest", "a_b"]) expect(unkey(fileKey(v))).toBe(v);
  });

  it("reports every route identical against the preview of the same build", async () => {
    const r = await checkDeployment({ base: good.url, dist: out, sample: 200 });
    const total = r.rows.reduce((s, x) => s + x.requested, 0);
    expect(r.problems).toEqual([]);
    expect(r.rows.every((x) => x.identical === x.requested)).toBe(true);
    const lists = r.rows.filter((x) => x.kind.endsWith("-list")).reduce((s, x) => s + x.requested, 0);
    expect(total - lists).toBe(200);
    expect(r.rows.map((x) => x.kind)).toEqual([
      "link-list", "link-detail", "site-list", "site-detail", "accesspoint-list", "accesspoint-detail",
      "accesspoint-links", "accesspoint-interfaces", "interface-list", "interface-detail", "interface-accesspoint",
    ]);
  });

  it("names the altered routes and exits 1 against an altered deployment", async () => {
    const r = await cliAsync(["check", bad.url, "--dist", out, "--sample", "2000"]);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/^kind +requested +identical +differing +missing$/m);
    expect(r.stdout).toContain("/api/v1/site/3: body differs");
    expect(r.stdout).toContain("/api/v1/interface/?wifi_ssid=Z10-Klinikum: body differs");
    expect(r.stdout).toContain("/api/v1/accesspoint/?status=online: HTTP 404");
    expect(r.stdout).toMatch(/^total +\d+ +\d+ +2 +1$/m);
  });

  it("checks headers and can skip the ones a host cannot set", async () => {
    const r = await checkDeployment({ base: good.url, dist: out, sample: 5, skipHeaders: ["Allow"] });
    expect(r.problems).toEqual([]);
    const c = await cliAsync(["check", good.url, "--dist", out, "--sample", "5"]);
    expect(c.status).toBe(0);
  });
});
