import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, startPreview, type Preview } from "../src/index.ts";
import { importOpennet } from "../src/importers/opennet/index.ts";
import { tempDir } from "./support/tree.ts";

/**
 * Issue 42, the status page (/status/) in a real browser with scripting off: the counts of the
 * recorded live sequence's imports as two charts, and the newest changes, with nothing loaded from
 * elsewhere. Its screenshot goes to test-results/status/ (docs/status.png is one).
 */

const CHROMIUM = process.env.MESH_API_CHROMIUM ?? "/usr/bin/chromium";
const LIVE = new URL("./fixtures/live-sample/steps/", import.meta.url).pathname;
const SHOTS = new URL("../test-results/status/", import.meta.url).pathname;
const STEPS = [
  ["00", "2026-11-20T10:00:00Z"],
  ["01", "2026-11-20T10:06:00Z"],
  ["02", "2026-11-20T10:12:00Z"],
  ["04", "2026-11-20T10:18:00Z"],
  ["05", "2026-11-20T10:24:00Z"],
  ["05", "2026-11-20T10:40:00Z"],
  ["05", "2026-11-20T12:00:00Z"],
] as const;

let browser: Browser;
let preview: Preview;

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`test/status.test.ts needs a Chromium at ${CHROMIUM}: install Debian's with "apt-get install chromium"`);
  mkdirSync(SHOTS, { recursive: true });
  const dir = tempDir();
  let previous: string | undefined;
  for (const [i, [step, at]] of STEPS.entries()) {
    const out = path.join(dir, `dump-${i}`);
    await importOpennet(out, {
      olsr: `${LIVE}${step}/olsr.txt`,
      ...(i === 0 && { wiki: `${LIVE}00/wiki_nodes.html`, ondataservice: `${LIVE}00/ondataservice.db`, sites: "detect" as const }),
      previous,
      at,
    });
    previous = out;
  }
  const out = path.join(dir, "dist");
  await build({ data: previous!, out, settings: { brand: "opennet", defaultStatus: "online" } });
  [browser, preview] = await Promise.all([
    chromium.launch({
      executablePath: CHROMIUM,
      args: ["--disable-background-networking", "--disable-component-update", "--no-first-run"],
    }),
    startPreview({ dir: out, port: 0 }),
  ]);
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await preview?.close();
});

describe("the status page", () => {
  it("draws the counts of every import of the window and lists the newest changes, with scripting off and nothing from elsewhere", async () => {
    const context = await browser.newContext({ viewport: { width: 900, height: 1100 }, javaScriptEnabled: false });
    const page = await context.newPage();
    const requests: string[] = [];
    page.on("request", (r) => requests.push(r.url()));
    const response = await page.goto(new URL("/status/", preview.url).href);
    expect(response?.status()).toBe(200);
    expect(await page.locator("script").count()).toBe(0);
    // two charts, a line a status, a point an import (seven imports of the sequence)
    const charts = page.locator("figure svg");
    expect(await charts.count()).toBe(2);
    const lines = page.locator("figure svg polyline");
    expect(await lines.count()).toBe(6);
    for (const points of await lines.evaluateAll((ls) => ls.map((l) => l.getAttribute("points") ?? "")))
      expect(points.split(" ")).toHaveLength(7);
    for (const chart of await charts.all()) {
      const box = (await chart.boundingBox())!;
      expect(box.width).toBeGreaterThan(400);
      expect(box.height).toBeGreaterThan(100);
    }
    // the last import's counts in the legends, as the sequence's README gives them for step 07
    const captions = await page.locator("figcaption").allTextContents();
    expect(captions[0]).toContain("online 278");
    expect(captions[0]).toContain("flapping 3");
    expect(captions[1]).toContain("flapping 10");
    // the newest changes first, each linked to its subject
    const rows = page.locator("table tr td a");
    expect(await rows.count()).toBeGreaterThan(10);
    expect(await rows.first().textContent()).toBe("192.168.1.190 became flapping");
    expect(await rows.first().getAttribute("href")).toBe("/api/v1/accesspoint/192.168.1.190");
    expect(requests.every((u) => u.startsWith(preview.url))).toBe(true);
    await page.screenshot({ path: path.join(SHOTS, "status.png"), fullPage: true });
    await context.close();
  });
});
