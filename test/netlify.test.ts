import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Preview } from "../src/index.ts";
import { sampleSite } from "./support/site.ts";
import { netlifyToml } from "../src/hosts/netlify.ts";
import { tableRequests } from "../src/core/requests.ts";
import { API_HEADERS } from "../src/core/routes.ts";
import { readExpected } from "./support/expected.ts";
import { pool, rawRequest, type RawResponse } from "./support/http.ts";
import { loadNetlify, type NetlifySite } from "./support/netlify.ts";
import { ROOT } from "./support/tree.ts";
import type { Model } from "../src/core/model.ts";

/**
 * The generated Netlify rules, evaluated by Netlify's own engine: for every expected request of the
 * public sample and every request of the route table's list, the rule the engine picks leads to a
 * file whose bytes equal what the preview answers. The differences Netlify cannot avoid are the ones
 * the README lists under "Hosting", each recognised here by its reason.
 */

let out: string;
let model: Model;
let preview: Preview;
let port: number;
let netlify: NetlifySite;

beforeAll(async () => {
  const site = await sampleSite();
  ({ out, preview, port } = site);
  model = site.result.model!;
  netlify = await loadNetlify(path.join(ROOT, "netlify.toml"), out);
});

afterAll(() => preview?.close());

/** Why Netlify may answer a request differently from the preview (README, "Hosting"). */
function knownDifference(target: string, p: RawResponse): string | undefined {
  const pathPart = target.split("?")[0];
  if (p.status === 301) return "no redirect for a list path without its slash: Netlify serves the list itself";
  if (p.status === 404 && /^\/api\/v1\/(link|site|accesspoint|interface)\/[^/]+\/$/.test(pathPart)) {
    return "a detail path with a trailing slash: Netlify matches both slash forms alike";
  }
  if (p.status === 400) return "malformed percent-encoding: the preview answers 400";
  if (/if_hwaddress=[^&]*/.test(target)) {
    const mac = decodeURIComponent(/if_hwaddress=([^&]*)/.exec(target)![1]);
    if (mac !== mac.toLowerCase() && mac !== mac.toUpperCase())
      return "a MAC in mixed case: Netlify has rules for lower and upper case only";
  }
  return undefined;
}

async function compare(targets: readonly string[]) {
  const previewAnswers = await pool(targets, 8, (t) => rawRequest(port, "GET", t));
  const differences: { target: string; reason: string }[] = [];
  const failures: string[] = [];
  targets.forEach((target, i) => {
    const p = previewAnswers[i];
    const n = netlify.answer(target);
    const reason = knownDifference(target, p);
    if ("error" in n) {
      if (reason) differences.push({ target, reason });
      else failures.push(`${target}: engine cannot take it (${n.error})`);
      return;
    }
    const same = n.status === p.status && n.body!.equals(p.body);
    if (same) {
      if (p.status === 200) {
        for (const [name, value] of Object.entries(API_HEADERS)) {
          if (n.headers[name] !== value) failures.push(`${target}: Netlify header ${name} is ${n.headers[name]}`);
        }
      }
      return;
    }
    if (reason) differences.push({ target, reason });
    else failures.push(`${target}: preview ${p.status}, Netlify ${n.status} via ${n.match?.from ?? "no rule"} -> ${n.file}`);
  });
  return { failures, differences };
}

describe("Netlify's engine on the generated rules", () => {
  it("parses netlify.toml and _redirects without errors", () => {
    expect(netlify.errors.map(String)).toEqual([]);
  });

  it("the committed netlify.toml is exactly what the route table generates", () => {
    expect(readFileSync(path.join(ROOT, "netlify.toml"), "utf8")).toBe(netlifyToml());
  });

  it("answers every expected request of the public sample like the preview, except the listed cases", async () => {
    const expected = readExpected();
    const { failures, differences } = await compare(expected.map((e) => e.path));
    expect(failures.slice(0, 10)).toEqual([]);
    // The recorded requests hit exactly the slash differences.
    expect([...new Set(differences.map((d) => d.reason))].sort()).toEqual([
      "no redirect for a list path without its slash: Netlify serves the list itself",
    ]);
    expect(differences).toHaveLength(7);
  });

  it("answers every request of the route table's list like the preview, except the listed cases", async () => {
    const requests = tableRequests(model).map((r) => r.target);
    expect(requests.length).toBeGreaterThan(500);
    const { failures, differences } = await compare(requests);
    expect(failures.slice(0, 10)).toEqual([]);
    expect(differences.length).toBeLessThan(requests.length / 4);
  });

  it("answers / with the landing page and /api/v1/ with the API root, like the preview", async () => {
    for (const target of ["/", "/index.html", "/api/v1/", "/api/v1/?format=api"]) {
      const n = netlify.answer(target);
      const p = await rawRequest(port, "GET", target);
      if ("error" in n) throw new Error(n.error);
      expect([n.status, n.body!.equals(p.body)], target).toEqual([200, true]);
    }
    expect(netlify.answer("/api/v1/")).toMatchObject({ file: "/api/v1/index.json", headers: API_HEADERS });
    // The page is HTML: Netlify types it by its name; no JSON header rule covers it.
    expect(netlify.answer("/")).toMatchObject({ file: "/index.html", headers: {} });
  });

  it("answers unknown paths outside /api/ with the 404 page, under the application/json header rule", () => {
    for (const target of ["/nope", "/snapshots/missing.tar.gz", "/api/v1/index.json"]) {
      const n = netlify.answer(target);
      if ("error" in n) throw new Error(n.error);
      expect([n.status, n.body!.toString()], target).toEqual([404, '{"detail":"Not found."}']);
      expect(n.headers["Content-Type"], target).toBe("application/json");
    }
  });

  it("would notice a wrong answer (the comparison can fail)", async () => {
    const n = netlify.answer("/api/v1/site/1");
    const p = await rawRequest(port, "GET", "/api/v1/site/2");
    expect("body" in n && n.body!.equals(p.body)).toBe(false);
  });
});
