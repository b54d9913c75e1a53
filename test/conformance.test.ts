import { readFileSync } from "node:fs";
import { getIssues } from "@placemarkio/check-geojson";
import fg from "fast-glob";
import { beforeAll, describe, expect, it } from "vitest";
import { answerFromBuild, mismatch, readExpected, type Answer } from "./support/expected.ts";
import { sharedBuild } from "./support/shared.ts";

/**
 * Every recorded response of the original server on the public sample, answered from the files the
 * build wrote, found through the route table (the HTTP layer has its own test over the preview).
 */
const expected = readExpected();
let out: string;
let answer: (target: string) => Answer;

beforeAll(async () => {
  ({ out } = await sharedBuild("public"));
  answer = answerFromBuild(out);
}, 60_000);

describe("public sample conformance (files)", () => {
  it("covers all 4,699 expected responses", () => {
    expect(expected).toHaveLength(4699);
  });

  it("answers every expected response by its match rule", () => {
    const failures = expected.map((e) => mismatch(e, answer(e.path))).filter(Boolean);
    expect(failures.slice(0, 20)).toEqual([]);
    expect(failures).toHaveLength(0);
  });

  it("answers at least one request of every match kind, so the rules themselves are exercised", () => {
    const kinds = new Set(expected.map((e) => e.match));
    expect([...kinds].sort()).toEqual(["empty_or_not_found", "exact", "exact_or_not_found", "not_found", "redirect_or_same"]);
  });

  it("has no recorded response for the API root, which the original answered 404: /api/v1/ is a deliberate addition", () => {
    expect(expected.filter((e) => /^\/api(\/v1)?\/?(\?|$)/.test(e.path)).map((e) => e.path)).toEqual([]);
    const root = answer("/api/v1/");
    expect(root.status).toBe(200);
    expect(Object.keys(JSON.parse(root.body!)).slice(0, 4)).toEqual(["accesspoint", "interface", "link", "site"]);
    expect(answer("/api/").status).toBe(404);
  });

  it("writes every GeoJSON list as valid GeoJSON (RFC 7946, checked by @placemarkio/check-geojson)", () => {
    const files = fg.sync("api/v1/*/_q/**/data_format/geojson/**/index.json", { cwd: out });
    // access points and links: alone and with three statuses, also without redundant site links; sites alone
    expect(files).toHaveLength(4 + 4 + 4 + 1);
    for (const file of files) expect(getIssues(readFileSync(`${out}/${file}`, "utf8")), file).toEqual([]);
  });

  it("fails on a wrong body (the comparison can fail)", () => {
    const e = expected.find((x) => x.path === "/api/v1/site/1")!;
    const a = answer("/api/v1/site/2");
    expect(mismatch(e, a)).toBeDefined();
  });

  it("takes a list in another order as the same answer, and a list with one entry changed as another", () => {
    const e = expected.find((x) => x.match === "exact" && Array.isArray(x.body) && x.body.length > 2)!;
    const list = e.body as unknown[];
    expect(mismatch(e, { status: e.status, body: JSON.stringify([...list].reverse()) })).toBeUndefined();
    expect(mismatch(e, { status: e.status, body: JSON.stringify([list[1], ...list.slice(1)]) })).toBeDefined();
  });
});
