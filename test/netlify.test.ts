import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, startPreview, validate, type Preview } from "../src/index.ts";
import { netlifyRules, netlifyToml, OWN_RULES } from "../src/hosts/netlify.ts";
import { tableRequests } from "./support/requests.ts";
import type { PlaceholderValues } from "../src/core/plan.ts";
import type { Model } from "../src/core/model/model.ts";
import type { HostWarning } from "../src/hosts/host.ts";
import {
  API_HEADERS,
  DOCS_FOLDER,
  fileFor,
  NOT_FOUND_BODY,
  parseRequest,
  QUERY_PLACEHOLDERS,
  resolve,
  RULES,
  TYPED_FILES,
} from "../src/core/routes.ts";
import { isParseableVersion } from "../src/core/values/version.ts";
import { DEFAULTS } from "../src/core/defaults.ts";
import { checkDeployment, requestsFromTree } from "../src/publish/deployment.ts";
import { parseAllRedirects } from "@netlify/redirect-parser";
import { readExpected } from "./support/expected.ts";
import { rawRequest, rawRequests, type RawResponse } from "./support/http.ts";
import { loadNetlify, serveNetlify, type NetlifyAnswer, type NetlifySite } from "./support/netlify.ts";
import { hostileDump, hostileTargets, longHostileValues } from "./support/hostile.ts";
import { previewAnswersOnce } from "./support/answers.ts";
import { detailsByShape, longTargets, networkRequests, publicExpected, runSeed, tableOnce } from "./support/hosts-replay.ts";
import { sharedBuild, type SharedName } from "./support/shared.ts";
import { ROOT, tempDir } from "./support/tree.ts";

/**
 * The Netlify rules as a deploy gets them, evaluated by Netlify's own engine: the netlify.toml of
 * `mesh-api netlify-config --data <dump>` (what the nightly workflow deploys with) merged after the
 * build's `_redirects`. For every expected request of the public sample, every request of the route
 * table's list, every request `check` makes, and hostile filter values, the rule the engine picks
 * leads to a file whose bytes and headers equal what the preview answers. The differences Netlify
 * cannot avoid are listed below by rule; each is recognised by what both sides answer, and counted.
 */

const EXCEPTIONS = {
  noSlash: "a list path without its slash: Netlify answers it as the path with the slash, the preview redirects there (301)",
  detailSlash: "a detail path with a trailing slash: Netlify serves the detail (200), the preview answers 404",
  mixedCase: "a MAC in mixed case: Netlify has literal rules for the lower- and upper-case spellings only (404)",
  malformed: "malformed percent-encoding: the preview answers 400, Netlify an error or 404 of its own",
  colon: 'a filter value starting with ":": Netlify reads it as a placeholder in any rule, so none can hold it (404)',
  del: "a filter value holding U+007F: netlify-cli would write it raw into the deployed netlify.toml, which TOML forbids (404)",
  allow: "the Allow header: Netlify ignores it in header rules in production, so it is not compared",
  unparseable:
    "an unparseable firmware_version__after bound the data does not hold: Netlify cannot test a value against the version pattern (404)",
  bound:
    "a parseable firmware bound the build has no file or rule for: the preview answers it by its class of bounds, Netlify cannot compare versions (404)",
} as const;
type Exception = keyof typeof EXCEPTIONS;

interface Site {
  /** the shared build's name (support/shared.ts), none for a build of the test's own */
  readonly shared?: SharedName;
  readonly out: string;
  readonly result: { readonly model: Model; readonly values: PlaceholderValues; readonly hostWarnings: readonly HostWarning[] };
  /** the deploy's rules as netlify-config makes them (netlifyRules), made once */
  readonly rules: ReturnType<typeof netlifyRules>;
  readonly preview: Preview;
  readonly port: number;
  /** the engine on the deploy's rules */
  readonly netlify: NetlifySite;
  /** the deploy's netlify.toml */
  readonly config: string;
}

const open: Preview[] = [];
afterAll(async () => {
  for (const p of open) await p.close();
});

/** A network of the shared set-up (support/shared.ts, read only) by its name, or a dump built here. */
async function site(network: SharedName | { readonly data: string }): Promise<Site> {
  let out: string, model: Model, values: PlaceholderValues, hostWarnings: readonly HostWarning[];
  if (typeof network === "string") {
    const shared = await sharedBuild(network);
    out = shared.out;
    // the pipeline's report on the same dump and options (the shared builds' default ones)
    const r = await validate({ data: shared.data });
    [model, values, hostWarnings] = [r.model!, r.values!, r.hostWarnings];
  } else {
    out = path.join(tempDir(), "dist");
    const r = await build({ data: network.data, out });
    [model, values, hostWarnings] = [r.model!, r.values, r.hostWarnings];
  }
  const preview = await startPreview({ dir: out, port: 0 });
  open.push(preview);
  // What the workflow does: `netlify-config --data <dump> --write`, then netlify-cli deploys with ./netlify.toml.
  const rules = netlifyRules(values);
  const config = path.join(tempDir(), "netlify.toml");
  writeFileSync(config, rules.config());
  const netlify = await loadNetlify(config, out);
  const shared = typeof network === "string" ? network : undefined;
  return { shared, out, result: { model, values, hostWarnings }, rules, preview, port: Number(new URL(preview.url).port), netlify, config };
}

/** Query parameters and how each folds, from the route table (generic over RULES). */
const FOLD = new Map<string, boolean>();
for (const rule of RULES)
  for (const [param, v] of Object.entries(rule.query))
    if (v.startsWith(":") && QUERY_PLACEHOLDERS[v.slice(1)]?.data) FOLD.set(param, QUERY_PLACEHOLDERS[v.slice(1)].fold === "lower");

function formDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    return undefined;
  }
}

function isMalformed(target: string): boolean {
  const q = target.indexOf("?");
  const [rawPath, rawQuery] = q < 0 ? [target, ""] : [target.slice(0, q), target.slice(q + 1)];
  if (formDecode(rawPath.replace(/\+/g, "%2B")) === undefined) return true;
  return rawQuery.split("&").some((part) => part.split("=").some((x) => formDecode(x) === undefined));
}

function params(target: string): [string, string][] {
  const q = target.indexOf("?");
  if (q < 0) return [];
  return target
    .slice(q + 1)
    .split("&")
    .filter((p) => p !== "")
    .map((p) => {
      const eq = p.indexOf("=");
      return [formDecode(eq < 0 ? p : p.slice(0, eq)) ?? "", formDecode(eq < 0 ? "" : p.slice(eq + 1)) ?? ""];
    });
}

const isNotFound = (n: NetlifyAnswer) => n.status === 404 && n.body?.toString() === NOT_FOUND_BODY;

/** Which listed difference explains Netlify answering `n` where the preview answered `p`; undefined if none does. */
async function explain(s: Site, target: string, p: RawResponse, n: NetlifyAnswer): Promise<Exception | undefined> {
  const q = target.indexOf("?");
  const [rawPath, query] = q < 0 ? [target, ""] : [target.slice(0, q), target.slice(q)];
  if (p.status === 301 && !rawPath.endsWith("/")) {
    const slashed = await rawRequest(s.port, "GET", `${rawPath}/${query}`);
    if (p.headers.location === `${rawPath}/${query}` && n.status === slashed.status && n.body!.equals(slashed.body)) return "noSlash";
  }
  if (p.status === 404 && rawPath.endsWith("/") && n.status === 200) {
    const bare = parseRequest(`${rawPath.slice(0, -1)}${query}`);
    const r = bare && resolve(bare);
    const without = await rawRequest(s.port, "GET", `${rawPath.slice(0, -1)}${query}`);
    if (r?.type === "file" && !r.rule.from.endsWith("/") && without.status === 200 && n.body!.equals(without.body)) return "detailSlash";
  }
  if (p.status === 400 && isMalformed(target) && n.status !== 200) return "malformed";
  if (p.status === 200 && isNotFound(n)) {
    const { values } = s.result.values;
    const bound = params(target).find(([name]) => name === "firmware_version__after")?.[1];
    if (bound && !isParseableVersion(bound) && !values.after.includes(bound)) return "unparseable";
    const absent = (name: string, placeholder: string) =>
      params(target).some(([n, v]) => n === name && isParseableVersion(v) && !values[placeholder].includes(v));
    if (absent("firmware_version__before", "bound") || absent("firmware_version__after", "after")) return "bound";
    for (const [name, value] of params(target)) {
      const fold = FOLD.get(name);
      if (fold === undefined) continue;
      const hit = s.rules.unreachable.find((u) => u.param === name && (u.value === value || (fold && u.value === value.toLowerCase())));
      if (hit) return hit.value.startsWith(":") ? "colon" : "del";
      if (fold && value !== value.toLowerCase() && value !== value.toUpperCase()) return "mixedCase";
    }
  }
  return undefined;
}

interface Comparison {
  readonly requests: number;
  readonly failures: string[];
  readonly counts: Record<Exception, number>;
}

/** The preview's answers by target, kept for the site. */
const kept = new WeakMap<Site, Map<string, RawResponse>>();

/**
 * The preview's answers to `targets`. On a shared build, those to the servers' replay of it
 * (support/hosts-replay.ts) are asked once a run by whichever file comes first (support/answers.ts);
 * a target beyond them is asked here, each once.
 */
async function previewAnswers(s: Site, targets: readonly string[]): Promise<RawResponse[]> {
  let known = kept.get(s);
  if (!known) {
    kept.set(s, (known = new Map()));
    if (s.shared) {
      const replay = await networkRequests(s.shared, s.result.model, s.out);
      const answers = await previewAnswersOnce(s.shared, replay, () => rawRequests(s.port, replay));
      for (const [i, r] of replay.entries()) if (r.method === "GET") known.set(r.target, answers[i]);
    }
  }
  const missing = [...new Set(targets.filter((t) => !known.has(t)))];
  const asked = await rawRequests(
    s.port,
    missing.map((target) => ({ method: "GET", target })),
  );
  for (const [i, t] of missing.entries()) known.set(t, asked[i]);
  return targets.map((t) => known.get(t)!);
}

async function compare(s: Site, targets: readonly string[]): Promise<Comparison> {
  const previewAnswers_ = await previewAnswers(s, targets);
  const counts = Object.fromEntries(Object.keys(EXCEPTIONS).map((k) => [k, 0])) as Record<Exception, number>;
  const failures: string[] = [];
  for (const [i, target] of targets.entries()) {
    const p = previewAnswers_[i];
    const n = s.netlify.answer(target);
    if ("error" in n) {
      if (p.status === 400 && isMalformed(target)) counts.malformed++;
      else failures.push(`${target}: the engine cannot take it (${n.error})`);
      continue;
    }
    if (n.status === p.status && n.body!.equals(p.body)) {
      if (p.status !== 200) continue;
      for (const [name, value] of Object.entries(API_HEADERS)) {
        if (name === "Allow") continue;
        if (n.headers[name] !== value) failures.push(`${target}: Netlify header ${name} is ${n.headers[name]}`);
      }
      if (target.startsWith("/api/")) counts.allow++;
      continue;
    }
    const reason = await explain(s, target, p, n);
    if (reason) counts[reason]++;
    else failures.push(`${target}: preview ${p.status}, Netlify ${n.status} via ${n.match?.from ?? "no rule"} -> ${n.file}`);
  }
  return { requests: targets.length, failures, counts };
}

/** The counts, printed with the test output. */
function report(title: string, c: Comparison): Partial<Record<Exception, number>> {
  const listed = Object.fromEntries(Object.entries(c.counts).filter(([, n]) => n > 0)) as Partial<Record<Exception, number>>;
  const lines = Object.entries(listed).map(([k, n]) => `  ${String(n).padStart(6)}  ${EXCEPTIONS[k as Exception]}`);
  console.log(`${title}: ${c.requests} requests, ${c.failures.length} unexplained differences\n${lines.join("\n")}`);
  return listed;
}

/**
 * Two filters at once where the values have literal rules: every 404 rule of the table with two or
 * more query placeholders, filled with present values that are not their own file name.
 */
function twoFilterRequests(s: Site): string[] {
  const { values } = s.result.values;
  const placeholderOf = new Map<string, string>();
  for (const rule of RULES)
    for (const [param, v] of Object.entries(rule.query))
      if (v.startsWith(":") && QUERY_PLACEHOLDERS[v.slice(1)]?.data) placeholderOf.set(`${rule.from} ${param}`, v.slice(1));
  const out: string[] = [];
  for (const rule of RULES) {
    const names = Object.entries(rule.query).filter(([, v]) => v.startsWith(":"));
    if (rule.to !== null || names.length < 2) continue;
    const options = names.map(([param]) => {
      const name = placeholderOf.get(`${rule.from} ${param}`);
      const present = name ? (values[name] ?? []).filter((v) => v !== v.toLowerCase() || /[^a-z0-9.~-]/.test(v)) : [];
      return present.length ? present.slice(0, 2).map((v) => [param, v]) : [[param, "x"]];
    });
    const combos = options.reduce<string[][][]>((acc, o) => acc.flatMap((c) => o.map((x) => [...c, x])), [[]]);
    for (const c of combos) out.push(`${rule.from}?${c.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("&")}`);
  }
  return out;
}

describe("Netlify's engine on the deploy's rules: the public sample", () => {
  let s: Site;
  beforeAll(async () => {
    s = await site("public");
  });

  it("parses the deploy's netlify.toml and _redirects without errors; each _redirects rule is one of the netlify.toml's", async () => {
    expect(s.netlify.errors.map(String)).toEqual([]);
    // Netlify's parser keeps one copy of two equal rules: the deploy is the route table's order, literal rules in place.
    const toml = await parseAllRedirects({ redirectsFiles: [], netlifyConfigPath: s.config, minimal: false, configRedirects: [] });
    expect(s.rules.rules).toBeGreaterThan(0);
    expect(s.netlify.rules).toBe(toml.redirects.length);
    expect(toml.redirects.length).toBe(OWN_RULES.length + RULES.length + s.rules.configRules);
  });

  it("the committed netlify.toml is exactly what the route table generates", () => {
    expect(readFileSync(path.join(ROOT, "netlify.toml"), "utf8")).toBe(netlifyToml());
  });

  // As on the other hosts (hosts-replay.ts, publicExpected): every list, filter, redirect and
  // not-found, and twenty details of each rule and key shape; the engine routes the other keys of a
  // shape by the same rule, and conformance.test.ts and preview.test.ts answer every recorded detail.
  it("answers the expected requests of the public sample (twenty details of each rule and key shape) like the preview, with headers, but for the listed cases", async () => {
    expect(readExpected()).toHaveLength(4699);
    const expected = publicExpected().map((e) => e.path);
    expect(expected.length).toBeGreaterThan(400);
    const c = await compare(s, expected);
    const listed = report("public sample, expected requests", c);
    expect(c.failures.slice(0, 10)).toEqual([]);
    // The recorded requests meet the slash difference only (and every API answer skips Allow).
    expect(Object.keys(listed).sort()).toEqual(["allow", "noSlash", "unparseable"]);
  });

  it("answers every request of the route table's list like the preview, but for the listed cases", async () => {
    const targets = tableRequests(s.result.model).map((r) => r.target);
    expect(targets.length).toBeGreaterThan(500);
    const c = await compare(s, targets);
    const listed = report("public sample, route table requests", c);
    expect(c.failures.slice(0, 10)).toEqual([]);
    expect(
      Object.keys(listed).every((k) => ["allow", "noSlash", "detailSlash", "mixedCase", "malformed", "unparseable", "bound"].includes(k)),
    ).toBe(true);
  });

  it("answers two filters at once with 404, also when a value has a literal rule", async () => {
    const targets = twoFilterRequests(s);
    expect(targets.some((t) => t.includes("wifi_ssid=") && t.includes("if_hwaddress="))).toBe(true);
    const c = await compare(s, targets);
    report("public sample, two filters at once", c);
    expect(c.failures).toEqual([]);
  });

  it("answers malformed percent-encoding with an error or 404 of its own, where the preview answers 400", async () => {
    const targets = [
      "/api/v1/link/%ZZ",
      "/api/v1/accesspoint/%E9/",
      "/api/v1/interface/?wifi_ssid=%E9",
      "/api/v1/accesspoint/?firmware_version=%",
    ];
    const c = await compare(s, targets);
    expect(c.failures).toEqual([]);
    expect(report("public sample, malformed requests", c)).toEqual({ malformed: targets.length });
  });

  it("answers / with the landing page and /api/v1/ with the API root, like the preview", async () => {
    for (const target of ["/", "/index.html", "/api/v1/", "/api/v1/?format=api"]) {
      const n = s.netlify.answer(target);
      const p = await rawRequest(s.port, "GET", target);
      if ("error" in n) throw new Error(n.error);
      expect([n.status, n.body!.equals(p.body)], target).toEqual([200, true]);
    }
    expect(s.netlify.answer("/api/v1/")).toMatchObject({ file: "/api/v1/index.json", headers: API_HEADERS });
    // The page is HTML: Netlify types it by its name; no JSON header rule covers it.
    expect(s.netlify.answer("/")).toMatchObject({ file: "/index.html", headers: {} });
  });

  it("answers the API reference's page and files (not the API) with their bytes and types; a missing one with the JSON 404", async () => {
    for (const [target, file, type] of [
      [DOCS_FOLDER, fileFor("docs"), "text/html; charset=utf-8"],
      [DOCS_FOLDER.slice(0, -1), fileFor("docs"), "text/html; charset=utf-8"],
      [fileFor("docsScript"), fileFor("docsScript"), "text/javascript; charset=utf-8"],
      [fileFor("swaggerUi", { asset: "swagger-ui.css" }), fileFor("swaggerUi", { asset: "swagger-ui.css" }), "text/css; charset=utf-8"],
    ]) {
      const n = s.netlify.answer(target);
      if ("error" in n) throw new Error(n.error);
      expect([n.status, n.file, n.headers["Content-Type"]], target).toEqual([200, file, type]);
      expect(n.body!.equals(readFileSync(path.join(s.out, file))), target).toBe(true);
    }
    const missing = s.netlify.answer(`${DOCS_FOLDER}nope.js`);
    if ("error" in missing) throw new Error(missing.error);
    expect([missing.status, missing.body!.toString(), missing.headers["Content-Type"]]).toEqual([404, NOT_FOUND_BODY, "application/json"]);
  });

  it("answers each file with a type of its own (/metrics) with its bytes, typed by its [[headers]] rule", () => {
    expect(TYPED_FILES.map((t) => t.file)).toContain(fileFor("metrics"));
    for (const { file, type } of TYPED_FILES) {
      const n = s.netlify.answer(file);
      if ("error" in n) throw new Error(n.error);
      expect([n.status, n.file, n.headers["Content-Type"]], file).toEqual([200, file, type]);
      expect(n.body!.equals(readFileSync(path.join(s.out, file))), file).toBe(true);
    }
  });

  it("answers unknown paths outside /api/ with the 404 page, under the application/json header rule", () => {
    for (const target of ["/nope", "/snapshots/missing.tar.gz", "/api/v1/index.json"]) {
      const n = s.netlify.answer(target);
      if ("error" in n) throw new Error(n.error);
      expect([n.status, n.body!.toString()], target).toEqual([404, NOT_FOUND_BODY]);
      expect(n.headers["Content-Type"], target).toBe("application/json");
    }
  });

  it("would notice a wrong answer (the comparison can fail)", async () => {
    const n = s.netlify.answer("/api/v1/site/1");
    const p = await rawRequest(s.port, "GET", "/api/v1/site/2");
    expect("body" in n && n.body!.equals(p.body)).toBe(false);
  });
});

describe("Netlify's engine on the deploy's rules: the repository's data/", () => {
  let s: Site;
  beforeAll(async () => {
    s = await site("data");
  });

  it("needs netlify.toml for its two SSIDs with a space, and no value is left without a rule", () => {
    expect(s.rules.inexpressible).toEqual([
      { param: "wifi_ssid", value: "Café Meshtest" },
      { param: "wifi_ssid", value: "on-i.de Nord" },
    ]);
    expect(s.rules.unreachable).toEqual([]);
    expect(s.result.hostWarnings).toEqual([]);
  });

  it("passes the nightly workflow's live check (every list and filter, its sample of details) served by the engine", async () => {
    const server = await serveNetlify(s.netlify);
    try {
      // as .github/workflows/publish.yml runs it: `mesh-api check "$SITE_URL"`, the default sample
      const r = await checkDeployment({ base: server.url, dist: s.out, skipHeaders: ["Allow"] });
      const requested = r.rows.reduce((n, row) => n + row.requested, 0);
      const keyed = new Set(RULES.filter((rule) => rule.from.includes(":")).map((rule) => rule.kind));
      const tree = await requestsFromTree(s.out);
      expect(requested).toBe(tree.filter((q) => !keyed.has(q.kind)).length + DEFAULTS.sample);
      expect(r.problems).toEqual([]);
      const ssid = await fetch(`${server.url}/api/v1/interface/?wifi_ssid=Caf%C3%A9+Meshtest`);
      const file = readFileSync(path.join(s.out, fileFor("interfaceListBySsid", { ssid: "Café Meshtest" })));
      expect([ssid.status, Buffer.from(await ssid.arrayBuffer()).equals(file)]).toEqual([200, true]);
    } finally {
      await server.close();
    }
  });

  it("with the committed generic netlify.toml alone, the check misses exactly the two SSIDs (what the deploy did before)", async () => {
    const server = await serveNetlify(await loadNetlify(path.join(ROOT, "netlify.toml"), s.out));
    try {
      const r = await checkDeployment({ base: server.url, dist: s.out, sample: 0, skipHeaders: ["Allow"] });
      expect(r.problems).toEqual([
        { target: "/api/v1/interface/?wifi_ssid=Caf%C3%A9%20Meshtest", problem: "HTTP 404" },
        { target: "/api/v1/interface/?wifi_ssid=on-i.de%20Nord", problem: "HTTP 404" },
      ]);
    } finally {
      await server.close();
    }
  });

  it("answers every request of the route table's list like the preview, but for the listed cases", async () => {
    // format=api once per rule (the public sample's table adds it to every value): support/hosts-replay.ts tableOnce
    const c = await compare(s, [...tableOnce(s.result.model).map((r) => r.target), ...twoFilterRequests(s)]);
    const listed = report("data/, route table requests", c);
    expect(c.failures.slice(0, 10)).toEqual([]);
    expect(
      Object.keys(listed).every((k) => ["allow", "noSlash", "detailSlash", "mixedCase", "malformed", "unparseable", "bound"].includes(k)),
    ).toBe(true);
  });
});

describe("Netlify's engine on the deploy's rules: hostile filter values", () => {
  let s: Site;
  beforeAll(async () => {
    s = await site("hostile");
  });

  it('lists as unreachable exactly the values starting with ":" or holding U+007F, and warns about them', () => {
    const unreachable = new Set(s.rules.unreachable.map((u) => u.value));
    // MACs fold: both spellings of each are listed.
    expect([...unreachable].sort()).toEqual([": LEAD", ": lead", ":LEAD", ":lead", "X\u007fY", "x\u007fy"].sort());
    expect(s.result.hostWarnings.length).toBe(s.rules.unreachable.length);
    for (const w of s.result.hostWarnings) expect(w.message).toMatch(/cannot be a Netlify rule: it (starts with ":"|holds U\+007F)/);
    // Everything else a _redirects line cannot hold is in the deploy's netlify.toml.
    expect(s.rules.inexpressible.length).toBeGreaterThan(unreachable.size);
  });

  it("answers every value, spelled with %20 or + for a space, like the preview; only the listed cases differ", async () => {
    const targets = hostileTargets();
    const c = await compare(s, targets);
    const listed = report("hostile values", c);
    expect(c.failures).toEqual([]);
    expect(Object.keys(listed).sort()).toEqual(["allow", "colon", "del", "mixedCase"]);
    // Two colon values, three requests each, on wifi_ssid and firmware_version, and on if_hwaddress in both letter cases (MACs fold).
    expect(listed.colon).toBe(2 * 3 * (1 + 1 + 2));
  });

  it("answers check's requests (every list and filter, five details of each rule and key shape), the route table's list and two filters at once, but for the listed cases", async () => {
    // every list and filter check makes, and five details of each rule and key shape (support/hosts-replay.ts detailsByShape)
    const fromTree = detailsByShape(
      (await requestsFromTree(s.out)).map((r) => r.target),
      (t) => t,
      5,
    );
    const c = await compare(s, [...fromTree, ...tableOnce(s.result.model).map((r) => r.target), ...twoFilterRequests(s)]);
    const listed = report("hostile values, check, route table and two-filter requests", c);
    expect(c.failures.slice(0, 10)).toEqual([]);
    expect(
      Object.keys(listed).every((k) =>
        ["allow", "noSlash", "detailSlash", "mixedCase", "malformed", "colon", "del", "unparseable", "bound"].includes(k),
      ),
    ).toBe(true);
  });
});

describe("Netlify's parser and engine on values of up to 10,000 characters", () => {
  // A seed a run (support/hosts-replay.ts runSeed): printed, and named in the failures.
  it("parses the deploy's files and answers every value like the preview, but for the listed cases (seed from MESH_API_TEST_SEED or the run)", async () => {
    const seed = runSeed();
    console.log(`netlify: long values of seed ${seed} (MESH_API_TEST_SEED=${seed} repeats them)`);
    const values = longHostileValues(seed);
    const s = await site({ data: hostileDump(values) });
    expect(Math.max(...values.map((v) => v.length))).toBeGreaterThan(5_000);
    const c = await compare(
      s,
      longTargets(values).filter((t) => t.length < 7_000),
    );
    const listed = report(`long values (seed ${seed})`, c);
    expect(c.failures.slice(0, 5), `seed ${seed}`).toEqual([]);
    expect(
      Object.keys(listed).every((k) => ["allow", "mixedCase", "colon", "del"].includes(k)),
      `seed ${seed}`,
    ).toBe(true);
  }, 180_000);
});

describe("why the unreachable values have no rule (measured with Netlify's parser and engine)", () => {
  it('a leading ":" in a netlify.toml query value is a placeholder: a rule for ":lead" catches every value', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, "t"));
    writeFileSync(path.join(dir, "t/lead.json"), "lead");
    const config = path.join(dir, "netlify.toml");
    writeFileSync(
      config,
      `[[redirects]]\n  from = "/q/"\n  query = { s = ":lead" }\n  to = "/t/lead.json"\n  status = 200\n  force = true\n`,
    );
    const n = await loadNetlify(config, dir);
    for (const target of ["/q/?s=%3Alead", "/q/?s=anything"])
      expect(n.answer(target), target).toMatchObject({ status: 200, file: "/t/lead.json" });
  });

  it("U+007F raw in a TOML string, as netlify-cli's JSON-style string escapes would leave it, breaks Netlify's parser; escaped it parses", async () => {
    const dir = tempDir();
    const rule = (value: string) => `[[redirects]]\n  from = "/q/"\n  query = { s = ${value} }\n  to = "/t.json"\n  status = 200\n`;
    const raw = path.join(dir, "raw.toml");
    const escaped = path.join(dir, "escaped.toml");
    writeFileSync(raw, rule(JSON.stringify("x\u007fy")));
    writeFileSync(escaped, rule('"x\\u007Fy"'));
    const parse = (file: string) => parseAllRedirects({ redirectsFiles: [], netlifyConfigPath: file, minimal: true, configRedirects: [] });
    expect((await parse(raw)).errors.map(String).join()).toMatch(/Control characters/);
    expect((await parse(escaped)).redirects).toMatchObject([{ query: { s: "x\u007fy" } }]);
  });
});
