import { describe, expect, it } from "vitest";
import { apiRoot, html, landingExamples, landingPage, listFilters, megabytes, snapshotListing } from "../src/core/documents/pages.ts";
import { outputFiles } from "../src/core/plan.ts";
import { IGNORED_PARAMETERS, parseRequest, resolve, RULES } from "../src/core/routes.ts";
import { ap, model } from "./support/dump.ts";

/** The landing page, the API root and the snapshot listing as pure renderers of the model. */

const NETWORK = { format: "mesh-topology-dump/1", taken_at: "2026-11-22T12:00:00Z" };
const HOSTILE = `<script>alert("x")&'</script>`;

function network() {
  return model(
    [
      ap("10.0.0.1", { site: 7 }, [
        { id: 1, addresses: [{ id: 1, address: "10.0.0.1", netmask_prefixlen: 16 }], wifi: { wifi_ssid: HOSTILE } },
        { id: 2, addresses: [{ id: 2, address: "2001:db8::1", netmask_prefixlen: 64 }], wifi: { wifi_ssid: "has space" } },
      ]),
      ap("10.0.0.2", { site: 7 }),
    ],
    [],
    NETWORK,
  );
}

const hrefs = (page: string) =>
  [...page.matchAll(/href="([^"]*)"/g)].map((m) =>
    m[1]
      .replace(/&amp;/g, "&")
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, "<")
      .replace(/&gt;/g, ">"),
  );

describe("API root", () => {
  it("lists the four endpoints, the filters of each list from the route table, the status values and taken_at, compactly", () => {
    const text = apiRoot(network());
    const root = JSON.parse(text);
    expect(Object.keys(root)).toEqual([
      "accesspoint",
      "interface",
      "link",
      "site",
      "filters",
      "status_values",
      "openapi",
      "netjson",
      "freifunk_nodelist",
      "meshviewer",
      "changes",
      "feed",
      "map",
      "docs",
      "taken_at",
    ]);
    expect([root.openapi, root.netjson, root.map, root.docs]).toEqual([
      "/api/v1/openapi.json",
      "/api/v1/netjson/networkgraph.json",
      "/map/",
      "/api/v1/docs/",
    ]);
    expect(root).toMatchObject({
      accesspoint: "/api/v1/accesspoint/",
      interface: "/api/v1/interface/",
      link: "/api/v1/link/",
      site: "/api/v1/site/",
    });
    expect(root.filters).toEqual({
      accesspoint: ["firmware_version", "firmware_version__before", "firmware_version__after", "data_format", "status"],
      interface: ["wifi_ssid", "if_hwaddress", "is_wireless"],
      link: ["data_format", "with_redundant_site_links", "status"],
      site: ["data_format"],
    });
    // Ignored on every list (a static host cannot cut boxes): no rule names it, so it is no filter.
    expect(RULES.filter((r) => "in_bbox" in r.query)).toEqual([]);
    expect(IGNORED_PARAMETERS.in_bbox.on).toBe("lists");
    expect(root.status_values).toEqual(["online", "flapping", "offline", "all"]);
    expect(root.taken_at).toBe("2026-11-22T12:00:00Z");
    expect(text).toBe(JSON.stringify(root));
    expect(listFilters()).toEqual(root.filters);
  });

  it("is routed by a rule of the route table to the file the build writes", () => {
    const rule = RULES.find((r) => r.kind === "api-root");
    expect(rule).toMatchObject({ from: "/api/v1/", to: "/api/v1/index.json" });
    expect(resolve(parseRequest("/api/v1/")!)).toMatchObject({ type: "file", file: "/api/v1/index.json" });
    expect(resolve(parseRequest("/api/v1/?format=api")!)).toMatchObject({ type: "file", file: "/api/v1/index.json" });
    expect(resolve(parseRequest("/api/v1")!)).toMatchObject({ type: "redirect", location: "/api/v1/" });
    const files = new Map([...outputFiles(network())].map((f) => [f.path, f.body]));
    expect(files.get("/api/v1/index.json")).toBe(apiRoot(network()));
    expect(files.get("/index.html")).toBe(landingPage(network()));
  });

  it("says taken_at null when the dump has no time", () => {
    expect(JSON.parse(apiRoot(model([ap("10.0.0.1")]))).taken_at).toBeNull();
  });
});

describe("landing page", () => {
  it("is an HTML5 page in UTF-8 with no script and nothing loaded from elsewhere", () => {
    const page = landingPage(network());
    expect(page.startsWith("<!DOCTYPE html>\n")).toBe(true);
    expect(page).toContain('<meta charset="utf-8">');
    expect(page).not.toMatch(/<script|<link|<img|<iframe|src=|@import|url\(/i);
    for (const href of hrefs(page)) expect(href.startsWith("/"), href).toBe(true);
  });

  it("escapes what comes from the data, in text and in links", () => {
    const page = landingPage(network());
    expect(page).not.toContain(HOSTILE);
    expect(page).toContain(html(`/api/v1/interface/?wifi_ssid=${HOSTILE}`));
    // The SSID with a space cannot be a `_redirects` value (a host could not answer it): the next one is the example.
    expect(hrefs(page)).toContain(`/api/v1/interface/?wifi_ssid=${encodeURIComponent(HOSTILE)}`);
    expect(html(`<a href="x">'&'</a>`)).toBe("&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  });

  it("shows the counts and taken_at, and one example per endpoint from the data", () => {
    const m = network();
    const page = landingPage(m);
    expect(page).toContain("2026-11-22T12:00:00Z");
    expect(page).toMatch(/Access points<\/th><td class="n">2</);
    expect(page).toMatch(/Interfaces<\/th><td class="n">3</);
    expect(page).toMatch(/Links<\/th><td class="n">0</);
    expect(page).toMatch(/Sites<\/th><td class="n">1</);
    const examples = landingExamples(m).flatMap((e) => e.examples);
    expect(examples).toEqual([
      "/api/v1/accesspoint/",
      "/api/v1/accesspoint/?status=online",
      "/api/v1/accesspoint/10.0.0.1",
      "/api/v1/accesspoint/10.0.0.1/links/",
      "/api/v1/accesspoint/10.0.0.1/interfaces/",
      "/api/v1/accesspoint/10.0.0.1/changes/",
      "/api/v1/changes/",
      "/api/v1/interface/",
      `/api/v1/interface/?wifi_ssid=${encodeURIComponent(HOSTILE)}`,
      "/api/v1/interface/10.0.0.1",
      "/api/v1/interface/10.0.0.1/accesspoint/",
      "/api/v1/link/",
      "/api/v1/link/?status=online",
      "/api/v1/site/",
      "/api/v1/site/7",
    ]);
    // Each example is answered by a file the build writes (no links: no link example).
    const files = new Set([...outputFiles(m)].map((f) => f.path));
    for (const target of examples) {
      const r = resolve(parseRequest(target)!);
      expect(r.type === "file" && files.has(r.file), target).toBe(true);
    }
    expect(hrefs(page)).toContain("/snapshots/");
  });

  it("leaves out the examples the network has no item for", () => {
    const m = model([ap("10.0.0.1", {}, [])], [], NETWORK);
    const examples = landingExamples(m);
    expect(examples.filter((e) => e.examples.length === 0).map((e) => e.template)).toEqual([
      "/api/v1/interface/<ip>",
      "/api/v1/interface/<ip>/accesspoint/",
      "/api/v1/link/<id>",
      "/api/v1/link/<ip_a>-<ip_b>",
      "/api/v1/site/<id>",
    ]);
    expect(landingPage(m)).toContain("none in this network");
  });

  it("is the same for the same model", () => {
    expect(landingPage(network())).toBe(landingPage(network()));
  });
});

describe("snapshot listing", () => {
  const index = {
    snapshots: [
      {
        date: "2026-11-22",
        taken_at: "2026-11-22T11:28:02.756363Z",
        files: [
          { file: "mesh-topology-2026-11-22.tar.gz", kind: "dump", bytes: 123_456, sha256: "a".repeat(64) },
          { file: "mesh-api-v1-2026-11-22.tar.gz", kind: "api", bytes: 1_234_567, sha256: "b".repeat(64) },
        ],
      },
      { date: "2026-11-21", taken_at: null, files: [{ file: `x<y>&"z".tar.gz`, kind: "dump", bytes: 10, sha256: "c".repeat(64) }] },
    ],
  };

  it("is a table of every archive with its link, size in MB and sha256, and links to SHA256SUMS and index.json", () => {
    const page = snapshotListing(index);
    expect(page.startsWith("<!DOCTYPE html>\n")).toBe(true);
    expect(page).not.toMatch(/<script/i);
    const links = hrefs(page);
    expect(links).toEqual(
      expect.arrayContaining(["SHA256SUMS", "index.json", "mesh-topology-2026-11-22.tar.gz", "mesh-api-v1-2026-11-22.tar.gz"]),
    );
    expect(page).toContain("0.12 MB");
    expect(page).toContain("1.23 MB");
    expect(page).toContain("a".repeat(64));
    expect(page).toContain("2026-11-22T11:28:02.756363Z");
    expect(page.indexOf("2026-11-22")).toBeLessThan(page.indexOf("2026-11-21"));
  });

  it("escapes names and encodes their links", () => {
    const page = snapshotListing(index);
    expect(page).not.toContain(`x<y>`);
    expect(page).toContain("x&lt;y&gt;&amp;&quot;z&quot;.tar.gz");
    expect(hrefs(page)).toContain(encodeURIComponent(`x<y>&"z".tar.gz`));
  });

  it("gives sizes in MB with two decimals, never 0.00 for a non-empty file", () => {
    expect([0, 10, 4_999, 5_000, 1_000_000, 609_123_456].map(megabytes)).toEqual([
      "0.00 MB",
      "&lt; 0.01 MB",
      "&lt; 0.01 MB",
      "0.01 MB",
      "1.00 MB",
      "609.12 MB",
    ]);
    expect(snapshotListing(index)).toBe(snapshotListing(structuredClone(index)));
  });
});
