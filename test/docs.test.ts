import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { DomUtils, parseDocument } from "htmlparser2";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPreview, type Preview } from "../src/index.ts";
import { CONTENT_SECURITY_POLICY } from "../src/core/documents/map.ts";
import { DOCS_FOLDER, fileFor, urlFor } from "../src/core/routes.ts";
import { sharedBuild } from "./support/shared.ts";
import { ROOT, TSC } from "./support/tree.ts";

/**
 * The API reference at /api/v1/docs/ in a real browser (Debian's chromium through playwright-core,
 * as test/map.test.ts): the shared `--brand opennet --default-status online` build of the public
 * sample (test/support/shared.ts), served by the preview. One page of one browser for the file: the
 * tests below run in their order on it (Swagger UI renders an opened operation in a second or two of a
 * busy machine, most of this file's time).
 */

const CHROMIUM = process.env.MESH_API_CHROMIUM ?? "/usr/bin/chromium";
const SHOTS = path.join(ROOT, "test-results", "docs");
const BRAND = "opennet";

let browser: Browser;
let preview: Preview;
let out: string;
/** the page all tests use, with what it reported since it was opened */
let page: Page;
const errors: string[] = [];
/** tsc on the page's script, started with the browser (a child process: it overlaps the page's work) */
let typeCheck: Promise<{ code: number; output: string }>;

interface Parameter {
  name?: string;
  in?: string;
  $ref?: string;
}
interface OpenApi {
  paths: Record<string, Record<string, { operationId: string; tags: string[] }> & { parameters?: Parameter[] }>;
  components: { parameters: Record<string, Parameter> };
}
const METHODS = ["get", "head", "options", "put", "post", "delete", "patch", "trace"];

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `test/docs.test.ts needs a Chromium at ${CHROMIUM}: install Debian's with "apt-get install chromium" ` +
        `(or set MESH_API_CHROMIUM to a Chromium binary). playwright-core drives it and downloads no browser.`,
    );
  typeCheck = new Promise((done) =>
    execFile(process.execPath, [TSC, "-p", path.join(ROOT, "assets/docs")], (err, stdout, stderr) =>
      done({ code: err ? Number(err.code ?? 1) : 0, output: stdout + stderr }),
    ),
  );
  mkdirSync(SHOTS, { recursive: true });
  [browser, { out }] = await Promise.all([chromium.launch({ executablePath: CHROMIUM }), sharedBuild("public-opennet")]);
  preview = await startPreview({ dir: out, port: 0 });
  page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  // console errors, uncaught exceptions and CSP violations, of every page loaded from here on
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`${m.text()} (${m.location().url})`);
  });
  page.on("pageerror", (e) => errors.push(`uncaught: ${e.message}`));
  await page.exposeFunction("__violation", (v: string) => errors.push(`CSP: ${v}`));
  await page.addInitScript({
    content: 'document.addEventListener("securitypolicyviolation", (e) => window.__violation(e.violatedDirective + " " + e.blockedURI));',
  });
});

afterAll(async () => {
  await typeCheck;
  await browser?.close();
  await preview?.close();
});

/** Loads the reference into the page until Swagger UI has rendered. */
async function open(url: string): Promise<void> {
  await page.goto(url);
  await page.waitForSelector("html[data-docs=ready]", { timeout: 20_000 });
  await page.waitForSelector("#swagger-ui .opblock", { timeout: 20_000 });
}

describe("the API reference (core/documents/docs.ts)", () => {
  it("has a script that type-checks (tsc -p assets/docs)", async () => {
    expect(await typeCheck).toEqual({ code: 0, output: "" });
  });

  it("is an HTML page with the map's policy, no inline script, the document's URL and Swagger UI beside it", () => {
    const text = readFileSync(path.join(out, fileFor("docs")), "utf8");
    const doc = parseDocument(text);
    const meta = DomUtils.findOne((e) => e.name === "meta" && e.attribs["http-equiv"] === "Content-Security-Policy", doc.children);
    expect(meta?.attribs.content).toBe(CONTENT_SECURITY_POLICY);
    const scripts = DomUtils.findAll((e) => e.name === "script", doc.children);
    expect(scripts.map((s) => s.attribs.src)).toEqual([fileFor("swaggerUi", { asset: "swagger-ui-bundle.js" }), fileFor("docsScript")]);
    expect(scripts.every((s) => s.children.length === 0)).toBe(true);
    expect(DomUtils.findOne((e) => e.attribs.id === "swagger-ui", doc.children)?.attribs["data-url"]).toBe(urlFor("openapi"));
    for (const asset of ["swagger-ui-bundle.js", "swagger-ui.css", "LICENSE", "NOTICE", "swagger-ui-bundle.js.LICENSE.txt"])
      expect(existsSync(path.join(out, fileFor("swaggerUi", { asset }))), asset).toBe(true);
    expect(readFileSync(path.join(out, fileFor("docsScript")))).toEqual(readFileSync(path.join(ROOT, "assets/docs/docs.js")));
  });

  it("answers 200 text/html on the preview, with and without the slash, and is linked from the landing page and the API root", async () => {
    const answer = await fetch(`${preview.url}${DOCS_FOLDER}`);
    expect([answer.status, answer.headers.get("content-type")]).toEqual([200, "text/html; charset=utf-8"]);
    const bare = await fetch(`${preview.url}${DOCS_FOLDER.slice(0, -1)}`, { redirect: "manual" });
    expect([bare.status, bare.headers.get("location")]).toEqual([301, DOCS_FOLDER]);
    const script = await fetch(`${preview.url}${fileFor("docsScript")}`);
    expect([script.status, script.headers.get("content-type")]).toEqual([200, "application/javascript; charset=UTF-8"]);
    const root = (await (await fetch(`${preview.url}${urlFor("api-root")}`)).json()) as Record<string, unknown>;
    expect(root.docs).toBe(DOCS_FOLDER);
    expect(await (await fetch(`${preview.url}/`)).text()).toContain(`<a href="${DOCS_FOLDER}">`);
  });

  it("shows every path and method of the OpenAPI document, the brand's field names, and a request tried", async () => {
    const document = readJson<OpenApi>(fileFor("openapi"));
    const want = Object.entries(document.paths).flatMap(([p, item]) =>
      Object.keys(item)
        .filter((m) => METHODS.includes(m))
        .map((m) => `${m.toUpperCase()} ${p}`),
    );
    expect(want.length).toBeGreaterThan(60);
    await open(`${preview.url}${DOCS_FOLDER}`);
    const shown = await page
      .locator("#swagger-ui .opblock")
      .evaluateAll((blocks) =>
        blocks.map(
          (b) =>
            `${b.querySelector(".opblock-summary-method")?.textContent} ${b.querySelector(".opblock-summary-path")?.getAttribute("data-path")}`,
        ),
      );
    expect(shown.sort()).toEqual(want.sort());
    expect(await page.locator("#swagger-ui .errors-wrapper").count()).toBe(0);

    // Try it: an access point's detail, the first of the list.
    const ip = readJson<{ main_ip: string }[]>(fileFor("accesspointList"))[0].main_ip;
    const op = page.locator("#operations-accesspoint-accesspointDetail");
    await op.locator(".opblock-summary-control").click();
    // The brand's names come from the document: the detail's example answer, made from its schema.
    await expect.poll(() => op.locator(".responses-wrapper").innerText()).toContain(`"${BRAND}_version"`);
    await op.locator("button.try-out__btn").click();
    await op.locator('tr[data-param-name="ip"][data-param-in="path"] input').fill(ip);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith(urlFor("accesspoint-detail", { ip }))),
      op.locator("button.execute").click(),
    ]);
    expect(response.status()).toBe(200);
    await expect.poll(() => op.locator(".live-responses-table tbody .response-col_status").first().innerText()).toBe("200");
    expect(await op.locator(".live-responses-table .microlight").first().innerText()).toContain(`"main_ip": "${ip}"`);
    await page.screenshot({ path: path.join(SHOTS, "docs.png") });
    expect(errors).toEqual([]);
  });

  // Swagger UI renders an opened operation in a second or two on a busy 2-core machine, and the
  // operations are many (35 GETs) while their parameter lists are few: the paths with and without
  // the slash, the lists and details of a kind share them. So one operation of each distinct list of
  // parameter objects (resolved, path-level and the operation's apart) is opened: every parameter
  // object of the document, and every way the document lists them, is rendered once. They are opened
  // together, and the test waits for the tables to hold the wanted rows, with a limit for the set.
  it("shows every parameter of every path, referenced ones too", { timeout: 240_000 }, async () => {
    const spec = readJson<OpenApi>(fileFor("openapi"));
    const resolved = (p: Parameter) => (p.$ref ? spec.components.parameters[p.$ref.split("/").pop()!] : p);
    const want: Record<string, string[]> = {};
    const byParameters = new Map<string, string[]>();
    let referenced = 0;
    for (const item of Object.values(spec.paths)) {
      const get = item.get as { operationId: string; tags: string[]; parameters?: Parameter[] };
      const id = `operations-${get.tags[0]}-${get.operationId}`;
      const own = [item.parameters ?? [], get.parameters ?? []];
      referenced += own.flat().filter((p) => p.$ref).length;
      want[id] = own
        .flat()
        .map(resolved)
        .map((x) => `${x.name}/${x.in}`)
        .sort();
      const key = JSON.stringify(own.map((list) => list.map(resolved)));
      byParameters.set(key, [...(byParameters.get(key) ?? []), id]);
    }
    expect(Object.keys(want).length).toBeGreaterThan(20);
    expect(referenced).toBeGreaterThan(20);
    const opened = [...byParameters.values()].map((ids) => ids[0]);
    expect(opened.length).toBeGreaterThan(8);
    // the page holds every operation (and the try-it above left one open: it is not clicked shut)
    await page
      .locator("#swagger-ui .opblock")
      .evaluateAll(
        (blocks, ids) =>
          blocks
            .filter((b) => ids.includes(b.id) && !b.classList.contains("is-open"))
            .forEach((b) => (b.querySelector(".opblock-summary-control") as unknown as { click(): void }).click()),
        opened,
      );
    // Swagger UI fills each table after its container appears: wait for every table to hold the rows wanted.
    const shown = () =>
      page
        .locator("#swagger-ui .opblock")
        .evaluateAll(
          (blocks, ids) =>
            Object.fromEntries(
              blocks
                .filter((b) => ids.includes(b.id))
                .map((b) => [
                  b.id,
                  [...b.querySelectorAll("tr[data-param-name]")]
                    .map((r) => `${r.getAttribute("data-param-name")}/${r.getAttribute("data-param-in")}`)
                    .sort(),
                ]),
            ),
          opened,
        );
    await expect.poll(shown, { timeout: 180_000 }).toEqual(Object.fromEntries(opened.map((id) => [id, want[id]])));
    expect(errors).toEqual([]);
  });

  it("renders at its file's URL too (its URLs are absolute)", async () => {
    await open(`${preview.url}${DOCS_FOLDER}index.html`);
    expect(await page.locator("#swagger-ui .opblock").count()).toBeGreaterThan(60);
    expect(errors).toEqual([]);
  });
});

function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(path.join(out, file), "utf8")) as T;
}
