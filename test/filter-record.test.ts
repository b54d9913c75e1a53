import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { FilterRecord } from "../src/core/filters/records.ts";
import { openApiDocument } from "../src/core/documents/openapi.ts";
import { fileFor, FILES, rulesFor } from "../src/core/routes.ts";
import { HOSTS } from "../src/hosts/index.ts";
import { build, startPreview, type BuildResult, type Preview } from "../src/index.ts";
import { PUBLIC_SAMPLE } from "./support/expected.ts";
import { tempDir } from "./support/tree.ts";

/**
 * Adding a filter is one record (docs/development.md, "Adding a filter"): this file adds one the
 * product does not have, `is_wireless` on the link list, and shows that the route table, the plan,
 * the OpenAPI document, the preview and every host's configuration pick it up. (The product's own
 * link list ignores `is_wireless`, as the original does.)
 */
// hoisted with vi.mock, which runs before this file's other statements
const { DOC } = vi.hoisted(() => ({ DOC: "Test record: `true`: links with a wireless endpoint; `false`: the others." }));

vi.mock("../src/core/filters/records.ts", async (importOriginal) => {
  const original = await importOriginal<typeof import("../src/core/filters/records.ts")>();
  const { linkFacts } = await import("../src/core/model/resources.ts");
  type Link = Parameters<typeof linkFacts>[0];
  const wirelessLinks: FilterRecord = {
    resource: "link",
    param: "is_wireless",
    values: {
      kind: "fixed",
      slot: "wireless",
      choices: [
        { value: "true", spellings: ["true"] },
        { value: "false", spellings: ["false"] },
      ],
      others: "refused",
    },
    empty: "none",
    group: (model, items) => {
      const wireless = (items as readonly Link[]).filter((l) => linkFacts(l, model).wireless);
      return [
        ["true", wireless],
        ["false", (items as readonly Link[]).filter((l) => !wireless.includes(l))],
      ];
    },
    doc: () => DOC,
    fileName: "ByWireless",
    example: () => "true",
  };
  return { ...original, FILTERS: [...original.FILTERS, wirelessLinks] };
});

const FILE = "/api/v1/link/_q/is_wireless/true/index.json";
let out: string;
let result: BuildResult;
let preview: Preview;

beforeAll(async () => {
  out = path.join(tempDir(), "dist");
  result = await build({ data: `${PUBLIC_SAMPLE}dump`, out });
  preview = await startPreview({ dir: out, port: 0 });
});
afterAll(() => preview?.close());

const get = async (target: string) => {
  const res = await fetch(new URL(target, preview.url));
  return { status: res.status, body: await res.text() };
};

describe("a filter record added by a test (is_wireless on links)", () => {
  it("gets its rules in the route table, alone and with the list's other filters, status and GeoJSON", () => {
    const rules = rulesFor({ defaultStatus: "all" }).filter((r) => r.kind === "link-list" && "is_wireless" in r.query);
    expect(rules.find((r) => r.query.is_wireless === "true" && Object.keys(r.query).length === 1)?.to).toBe(FILE);
    expect(rules.find((r) => r.query.is_wireless === ":a" && Object.keys(r.query).length === 1)?.to).toBeNull();
    expect(
      rules.some((r) => r.query.is_wireless === "true" && r.query.data_format === "geojson" && r.query.with_redundant_site_links === "0"),
    ).toBe(true);
  });

  it("gets its files in the build, each the links it selects", () => {
    const all = JSON.parse(readFileSync(path.join(out, "api/v1/link/index.json"), "utf8")) as { is_wireless: boolean }[];
    const wireless = JSON.parse(readFileSync(path.join(out, FILE), "utf8")) as { is_wireless: boolean }[];
    expect(wireless.length).toBe(all.filter((l) => l.is_wireless).length);
    expect(wireless.length).toBeGreaterThan(0);
    expect(wireless.every((l) => l.is_wireless)).toBe(true);
    expect(existsSync(path.join(out, "api/v1/link/_q/is_wireless/false/status/online/index.json"))).toBe(true);
    expect(existsSync(path.join(out, "api/v1/link/_q/with_redundant_site_links/0/is_wireless/true/data_format/geojson/index.json"))).toBe(
      true,
    );
  });

  it("names its list files (FILES) and is a key's folder of none", () => {
    expect(FILES.linkListByWireless).toBe("/api/v1/link/_q/is_wireless/:wireless/index.json");
    expect(fileFor("linkListNoRedundantByWirelessGeojsonByStatus", { wireless: "true", status: "online" })).toBe(
      "/api/v1/link/_q/with_redundant_site_links/0/is_wireless/true/data_format/geojson/status/online/index.json",
    );
  });

  it("shows its example on the landing page, after the link list's own", () => {
    const page = readFileSync(path.join(out, "index.html"), "utf8");
    const at = (target: string) => page.indexOf(`href="${target}"`);
    expect(at("/api/v1/link/?is_wireless=true")).toBeGreaterThan(at("/api/v1/link/?status=online"));
    expect(at("/api/v1/link/?status=online")).toBeGreaterThan(0);
  });

  it("is a parameter of the link list in the OpenAPI document, with its own text", () => {
    const doc = JSON.parse(openApiDocument()) as { paths: Record<string, { parameters: { name: string; description: string }[] }> };
    const parameter = doc.paths["/api/v1/link/"].parameters.find((p) => p.name === "is_wireless");
    expect(parameter?.description.startsWith(DOC)).toBe(true);
  });

  it("is answered by the preview, and a value it refuses is not found", async () => {
    const wireless = await get("/api/v1/link/?is_wireless=true");
    expect(wireless.status).toBe(200);
    expect(wireless.body).toBe(readFileSync(path.join(out, FILE), "utf8"));
    expect((await get("/api/v1/link/?is_wireless=maybe")).status).toBe(404);
    expect((await get("/api/v1/link/?is_wireless=")).body).toBe(readFileSync(path.join(out, "api/v1/link/index.json"), "utf8"));
  });

  it("is in every host's configuration for the build", () => {
    // netlify-edge has no rule: its function bundles the route table and the resolver the preview runs
    // (above), from the sources on disk, which this test's mock does not reach; test/netlify-edge.test.ts.
    for (const host of HOSTS.filter((h) => h.name !== "netlify-edge")) {
      const text = [host.config(result.values), ...[...host.files(result.values)].map((f) => String(f.body))].join("\n");
      expect(text, host.name).toContain("/api/v1/link/_q/is_wireless/true/");
    }
  });
});
