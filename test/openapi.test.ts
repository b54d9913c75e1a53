import { readFileSync } from "node:fs";
import path from "node:path";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsPlugin from "ajv-formats";
import fg from "fast-glob";
import { beforeAll, describe, expect, it } from "vitest";
import { openApiDocument, openApiPath, queryDoc } from "../src/core/documents/openapi.ts";
import { PREVIEW_ERRORS, RESPONSE_SCHEMAS } from "../src/core/documents/response-schemas.ts";
import {
  API_HEADERS,
  FILES,
  parseRequest,
  requestsForFile,
  resolve,
  RULES,
  templateOf,
  type Rule,
  API_SERVED_GLOBS,
  varyWithTwin,
} from "../src/core/routes.ts";
import { DEFAULT_SETTINGS } from "../src/core/settings.ts";
import { synthesize, writeSynthDump } from "../src/gen/synth.ts";
import { build, startPreview } from "../src/index.ts";
import { readExpected } from "./support/expected.ts";
import { rawRequest } from "./support/http.ts";
import { FREIFUNK_API_SETTINGS } from "./support/site.ts";
import { tempDir } from "./support/tree.ts";

/**
 * The OpenAPI document (core/documents/openapi.ts) is valid OpenAPI 3.1, names every path form and query
 * parameter of the route table, and its response schemas accept every body the API gives: the 4,699
 * expected responses of the public sample and every JSON file of a synthetic network's build, each
 * against the schema of its own path, status and query variant.
 */

type Json = Record<string, unknown>;
const text = openApiDocument();
const doc = JSON.parse(text) as { paths: Record<string, Json>; components: Record<string, Record<string, Json>> };
const DOC_ID = "https://mesh-static-api.invalid/openapi.json";

// ajv-formats is CommonJS with a default export; under NodeNext its type is the module object.
const addFormats = addFormatsPlugin as unknown as (ajv: Ajv2020) => Ajv2020;
const ajv = new Ajv2020({ strict: true });
addFormats(ajv);
// The document is not a schema; its components are, found by JSON pointer from the schemas that refer to them.
ajv.addVocabulary(["components"]);
ajv.addSchema({ $id: DOC_ID, components: doc.components });

/** The document's `#/…` references made absolute, so a schema taken out of the document still finds them. */
function absolute(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(absolute);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, k === "$ref" && typeof v === "string" && v.startsWith("#") ? DOC_ID + v : absolute(v)]),
  );
}

/** A `{"$ref": "#/components/<group>/<name>"}` resolved in the document; anything else as it is. */
function deref(value: Json): Json {
  const target = value.$ref;
  if (typeof target !== "string") return value;
  const [, , group, name] = target.split("/");
  return doc.components[group][name];
}

const PREVIEW_STATUS: Record<string, number> = Object.fromEntries(PREVIEW_ERRORS.map((e) => [e.name, e.status]));

let expectedResponses: ReturnType<typeof readExpected> | undefined;
const expected = () => (expectedResponses ??= readExpected());

const compiled = new Map<string, ValidateFunction>();
function validator(key: string, schema: unknown): ValidateFunction {
  let v = compiled.get(key);
  if (!v) compiled.set(key, (v = ajv.compile(absolute(schema) as Json)));
  return v;
}

/** The document path a request of this rule was made to: the rule's path form, or its twin without the slash. */
function templateFor(rule: Rule, requestPath: string): string {
  const template = openApiPath(rule.from);
  return template.endsWith("/") && !requestPath.endsWith("/") ? template.slice(0, -1) : template;
}

interface Check {
  /** what the body was checked against: path template, status, variant */
  readonly against: string;
  readonly validate: ValidateFunction;
}

/**
 * The schema the document gives for a request answered by `rule` (undefined: no rule but the
 * catch-all) with `status`: the operation's response, and of a response that is a list or a
 * FeatureCollection, the branch `data_format` selects.
 */
function schemaFor(rule: Rule | undefined, requestPath: string, status: number): Check {
  if (!rule || rule.kind === "not-found") {
    expect(status).toBe(404);
    const content = deref(doc.components.responses.NotFound).content as Record<string, Json>;
    return { against: "components NotFound", validate: validator("NotFound", content["application/json"].schema) };
  }
  const template = templateFor(rule, requestPath);
  const operation = doc.paths[template]?.get as { responses: Record<string, Json> } | undefined;
  if (!operation) throw new Error(`no GET ${template} in the document (rule ${rule.kind} ${rule.from})`);
  const response = operation.responses[String(status)];
  if (!response) throw new Error(`GET ${template} has no ${status} response`);
  const schema = (deref(response).content as Record<string, Json>)["application/json"].schema as Json;
  const geojson = rule.query.data_format === "geojson";
  let key = `${template} ${status}`;
  let chosen: Json = schema;
  if (Array.isArray(schema.oneOf)) {
    const branches = schema.oneOf as Json[];
    const isCollection = (branch: Json) =>
      ((deref(branch).properties as Json | undefined)?.type as Json | undefined)?.const === "FeatureCollection";
    const index = branches.findIndex((b) => isCollection(b) === geojson);
    expect(index, `${template}: a ${geojson ? "GeoJSON" : "list"} branch`).toBeGreaterThanOrEqual(0);
    chosen = branches[index];
    key += ` oneOf/${index}`;
    // the variant alone, and the whole oneOf: a body that fits both branches would fail the latter
    const whole = validator(`${template} ${status}`, schema);
    const branch = validator(key, chosen);
    const both = ((body: unknown) => whole(body) && branch(body)) as ValidateFunction;
    Object.defineProperty(both, "errors", { get: () => whole.errors ?? branch.errors });
    return { against: `${key} (${geojson ? "GeoJSON" : "list"})`, validate: both };
  }
  return { against: key, validate: validator(key, chosen) };
}

function failure(check: Check, target: string, body: unknown): string | undefined {
  if (check.validate(body)) return undefined;
  const errors = (check.validate.errors ?? []).slice(0, 3).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
  return `${target} against ${check.against}: ${errors.join("; ")}`;
}

describe("the OpenAPI document", () => {
  it("is valid OpenAPI 3.1 (@seriousme/openapi-schema-validator)", async () => {
    const result = await new Validator().validate(JSON.parse(text));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(JSON.parse(text).openapi).toBe("3.1.0");
  });

  it("is deterministic and compact: two calls give the same bytes", () => {
    expect(openApiDocument()).toBe(text);
    expect(JSON.stringify(JSON.parse(text))).toBe(text);
  });

  it("has exactly the path forms of the route table, a list form also without its slash, and one link detail path for both keys", () => {
    const forms = [...new Set(RULES.filter((r) => r.kind !== "not-found").map((r) => openApiPath(r.from)))];
    const twins = forms.filter((t) => t.endsWith("/")).map((t) => t.slice(0, -1));
    expect(Object.keys(doc.paths).sort()).toEqual([...forms, ...twins].sort());
    for (const p of ["/api/v1/", "/api/v1", "/api/v1/openapi.json", "/api/v1/netjson/networkgraph.json", "/api/v1/link/{key}"])
      expect(doc.paths, p).toHaveProperty([p]);
    const key = (doc.paths["/api/v1/link/{key}"].parameters as Json[]).find((p) => p.name === "key" && p.in === "path")!;
    const accepts = validator("link key", key.schema);
    expect(["7", "10.0.0.1-10.0.0.2", "2001:db8::1-2001:db8::2", "x", "1-2-3"].map((v) => accepts(v))).toEqual([
      true,
      true,
      true,
      false,
      false,
    ]);
  });

  it("names every query parameter of the route table on each of its paths, with a description, and accepts each value a rule answers", () => {
    const problems: string[] = [];
    for (const rule of RULES) {
      if (rule.kind === "not-found") continue;
      {
        const template = openApiPath(rule.from);
        const parameters = (doc.paths[template].parameters as Json[]).map(deref);
        for (const [name, value] of Object.entries(rule.query)) {
          const parameter = parameters.find((p) => p.name === name && p.in === "query");
          if (!parameter) {
            problems.push(`${template}: no query parameter ${name}`);
            continue;
          }
          // the text of this parameter on this kind of path (a filter's is its resource's), then what values do
          const own = queryDoc(rule.kind, name, DEFAULT_SETTINGS);
          if (!String(parameter.description).startsWith(`${own} `))
            problems.push(`${template}: ${name} is not described as ${rule.kind}'s`);
          const accepts = validator(`${template} ${name}`, parameter.schema);
          if (rule.to !== null && !value.startsWith(":") && !accepts(value)) problems.push(`${template}: ${name}=${value} refused`);
        }
      }
    }
    expect(problems).toEqual([]);
    const status = (doc.paths["/api/v1/accesspoint/"].parameters as Json[]).find((p) => p.name === "status")!;
    expect((status.schema as Json).enum).toEqual(["all", "", "online", "flapping", "offline"]);
    const detailStatus = (doc.paths["/api/v1/site/{id}"].parameters as Json[]).find((p) => p.name === "status");
    expect(detailStatus, "site details ignore status").toBeUndefined();
    const wireless = (doc.paths["/api/v1/interface/"].parameters as Json[]).find((p) => p.name === "is_wireless")!;
    expect((wireless.schema as Json).enum).toEqual(expect.arrayContaining(["true", "TRUE", "1", "false", "False", "0", ""]));
    expect((wireless.schema as Json).enum).not.toContain("maybe");
  });

  it("describes a filter by its own resource, and refuses a parameter a kind does not describe rather than borrow another's text", () => {
    const settings = { brand: "opennet", defaultStatus: "online" } as const;
    expect(queryDoc("interface-list", "is_wireless", settings)).toMatch(/^`true` or `1`: interfaces/);
    expect(queryDoc("accesspoint-list", "firmware_version", settings)).toContain("`opennet_version`");
    expect(queryDoc("link-list", "status", settings)).toContain("`online` on the access point and link lists");
    expect(() => queryDoc("link-list", "is_wireless", settings)).toThrow("names is_wireless on link-list");
    expect(() => queryDoc("site-list", "wifi_ssid", settings)).toThrow();
  });

  it("gives every operation a unique operationId and the API headers on every JSON answer", () => {
    const ids = Object.values(doc.paths).flatMap((item) =>
      ["get", "head", "options"].map((m) => (item[m] as Json | undefined)?.operationId).filter(Boolean),
    );
    expect(new Set(ids).size).toBe(ids.length);
    expect(Object.keys(doc.components.headers).sort()).toEqual(["Access-Control-Allow-Origin", "Allow", "Vary"]);
    expect(doc.components.headers.Allow.schema).toEqual({ type: "string", const: "GET, HEAD, OPTIONS" });
    for (const [template, item] of Object.entries(doc.paths)) {
      const ok = deref((item.get as { responses: Record<string, Json> }).responses["200"]);
      expect(Object.keys(ok.headers as Json), template).toEqual(["Allow", "Vary", "Access-Control-Allow-Origin"]);
      expect(Object.keys(ok.content as Json), template).toEqual(["application/json"]);
    }
  });

  it("describes the 404 body exactly, and the list or GeoJSON answer by data_format", () => {
    const notFound = schemaFor(undefined, "/api/nothing", 404);
    expect(notFound.validate({ detail: "Not found." })).toBe(true);
    expect(notFound.validate({ detail: "Gone." })).toBe(false);
    const list = schemaFor(
      RULES.find((r) => r.kind === "site-list" && r.to !== null && !r.query.data_format)!,
      "/api/v1/site/",
      200,
    );
    const geo = schemaFor(
      RULES.find((r) => r.kind === "site-list" && r.query.data_format === "geojson")!,
      "/api/v1/site/",
      200,
    );
    const collection = { type: "FeatureCollection", features: [] };
    expect([list.validate([]), list.validate(collection), geo.validate([]), geo.validate(collection)]).toEqual([true, false, false, true]);
  });
});

describe("the response schemas against the bodies", () => {
  it("accept every one of the 4,699 expected responses of the public sample, each against its own path, status and variant", () => {
    expect(expected()).toHaveLength(4699);
    const failures: string[] = [];
    const against = new Set<string>();
    for (const e of expected()) {
      const request = parseRequest(e.path);
      const r = request ? resolve(request) : undefined;
      const check = schemaFor(r?.rule, request?.path ?? e.path, e.status);
      const linkKey = r?.rule?.kind === "link-detail" ? (/^[0-9]+$/.test(request!.path.split("/")[4]) ? " by id" : " by peers") : "";
      against.add(check.against + linkKey);
      const problem = failure(check, e.path, e.body);
      if (problem) failures.push(problem);
    }
    expect(failures.slice(0, 10)).toEqual([]);
    expect(failures).toHaveLength(0);
    // the bodies reach the lists, details, sub-resources, both link forms and every GeoJSON variant
    for (const part of [
      "/api/v1/link/{key} 200 by peers",
      "/api/v1/link/{key} 200 by id",
      "(GeoJSON)",
      "/api/v1/interface/{ip}/accesspoint/ 200",
    ])
      expect(
        [...against].some((a) => a.includes(part)),
        part,
      ).toBe(true);
  });

  it("refuse a body that does not fit: an extra member, a wrong type, a missing member, the wrong variant", () => {
    const detail = expected().find(
      (e) => e.path.startsWith("/api/v1/accesspoint/") && /^\/api\/v1\/accesspoint\/[\d.]+$/.test(e.path) && e.status === 200,
    )!;
    const rule = resolve(parseRequest(detail.path)!).rule!;
    const check = schemaFor(rule, detail.path, 200);
    const body = detail.body as Json;
    expect(failure(check, detail.path, body)).toBeUndefined();
    expect(failure(check, detail.path, { ...body, extra: 1 })).toContain("additional properties");
    expect(failure(check, detail.path, { ...body, main_ip: 5 })).toBeDefined();
    expect(failure(check, detail.path, { ...body, lastseen_timestamp: "yesterday" })).toBeDefined();
    const { site: _site, ...withoutSite } = body;
    expect(failure(check, detail.path, withoutSite)).toBeDefined();
    const list = expected().find(
      (e) => e.path === "/api/v1/link/?data_format=geojson" || e.path.startsWith("/api/v1/link/?data_format=geojson&"),
    )!;
    const listRule = resolve(parseRequest("/api/v1/link/")!).rule!;
    expect(failure(schemaFor(listRule, "/api/v1/link/", 200), "/api/v1/link/", list.body)).toBeDefined();
  });

  describe("every JSON file of a synthetic network's build", () => {
    let out: string;
    beforeAll(async () => {
      const data = path.join(tempDir(), "data");
      await writeSynthDump(data, synthesize({ aps: 120, seed: 14 }));
      out = path.join(tempDir(), "dist");
      await build({ data, out, settings: FREIFUNK_API_SETTINGS });
    }, 120_000);

    it("fits the schema of its path and variant, for every request that reaches it", () => {
      // Every file the route table answers as the API does: the API's and the output records' beside it.
      const files = fg
        .sync([...API_SERVED_GLOBS], { cwd: out })
        .filter((f) => f.endsWith(".json"))
        .map((f) => `/${f}`);
      const failures: string[] = [];
      let requests = 0;
      const reachedTemplates = new Set<string>();
      for (const file of files) {
        const body = JSON.parse(readFileSync(path.join(out, file), "utf8")) as unknown;
        if (file === FILES.notFound) {
          const problem = failure(schemaFor(undefined, "/api/", 404), file, body);
          if (problem) failures.push(problem);
          continue;
        }
        let reached = requestsForFile(file);
        // a filter value whose file name is a hash cannot be turned back into the request: the rule is enough
        if (reached.length === 0) {
          const name = templateOf(file);
          reached = RULES.filter((r) => r.to !== null && name !== undefined && templateOf(r.to) === name).map((rule) => ({
            rule,
            target: rule.from,
          }));
        }
        if (reached.length === 0) failures.push(`${file}: no rule of the route table answers with it`);
        for (const { rule, target } of reached) {
          requests++;
          const requestPath = parseRequest(target)?.path ?? target;
          reachedTemplates.add(templateFor(rule, requestPath));
          const problem = failure(schemaFor(rule, requestPath, 200), `${target} (${file})`, body);
          if (problem) failures.push(problem);
        }
      }
      expect(failures.slice(0, 10)).toEqual([]);
      const forms = [...new Set(RULES.filter((r) => r.kind !== "not-found").map((r) => openApiPath(r.from)))];
      expect(
        forms.filter((t) => !reachedTemplates.has(t)),
        "path forms no file of the build answers",
      ).toEqual([]);
      expect(files.length).toBeGreaterThan(1000);
      expect(requests).toBeGreaterThan(files.length);
      console.log(`openapi: ${files.length} JSON files of a synthetic build, ${requests} requests, every body fits`);
    });

    it("holds the document as /api/v1/openapi.json, byte for byte, which the preview serves as application/json", async () => {
      expect(readFileSync(path.join(out, FILES.openapi), "utf8")).toBe(openApiDocument());
      const preview = await startPreview({ dir: out, port: 0 });
      try {
        // fetch accepts gzip and decodes: the document is long enough to be sent as its gzip twin
        const res = await fetch(preview.url + FILES.openapi);
        expect(res.status).toBe(200);
        expect(res.headers.get("content-encoding")).toBe("gzip");
        for (const [name, value] of Object.entries({ ...API_HEADERS, Vary: varyWithTwin(API_HEADERS.Vary) }))
          expect(res.headers.get(name), name).toBe(value);
        expect(await res.text()).toBe(openApiDocument());
      } finally {
        await preview.close();
      }
    });

    it("describes what the preview answers besides the files: OPTIONS, redirects, 404 and its other errors", async () => {
      const preview = await startPreview({ dir: out, port: 0 });
      const port = Number(new URL(preview.url).port);
      const component = (name: string) => {
        const content = deref(doc.components.responses[name]).content as Record<string, Json>;
        return validator(`response ${name}`, content["application/json"].schema);
      };
      const operation = (template: string, method: string) =>
        (doc.paths[template][method] as { responses: Record<string, Json> }).responses;
      const declared = (template: string, method: string, status: number) => deref(operation(template, method)[String(status)]);
      try {
        const options = await rawRequest(port, "OPTIONS", "/api/v1/site/");
        expect(options.status).toBe(200);
        expect(declared("/api/v1/site/", "options", 200).content).toBeDefined();
        expect(component("Options")(JSON.parse(options.body.toString()))).toBe(true);

        const head = await rawRequest(port, "HEAD", FILES.openapi);
        expect([head.status, head.body.length, declared(FILES.openapi, "head", 200).content]).toEqual([200, 0, undefined]);

        const redirect = await rawRequest(port, "GET", "/api/v1/site?data_format=geojson");
        expect([redirect.status, redirect.headers.location]).toEqual([301, "/api/v1/site/?data_format=geojson"]);
        expect(declared("/api/v1/site", "get", 301).headers).toHaveProperty("Location");

        const missing = await rawRequest(port, "GET", "/api/v1/site/999999");
        expect(missing.status).toBe(404);
        expect(
          failure(
            schemaFor(resolve(parseRequest("/api/v1/site/999999")!).rule, "/api/v1/site/999999", 404),
            "site 999999",
            JSON.parse(missing.body.toString()),
          ),
        ).toBeUndefined();

        const errors: [string, string, string, Record<string, string>?][] = [
          ["POST", "/api/v1/site/", "MethodNotAllowed"],
          ["GET", "/api/v1/site/%zz", "MalformedRequest"],
          ["GET", `/api/v1/site/?wifi_ssid=${"x".repeat(9000)}`, "UriTooLong"],
          ["GET", "/api/v1/site/", "HeaderFieldsTooLarge", { "X-Padding": "x".repeat(20_000) }],
        ];
        for (const [method, target, name, headers] of errors) {
          const res = await rawRequest(port, method, target, headers);
          expect(res.status, name).toBe(PREVIEW_STATUS[name]);
          expect(res.headers["content-type"], name).toBe("application/json");
          const body = JSON.parse(res.body.toString()) as unknown;
          if (name === "MethodNotAllowed") {
            // no operation of the document answers a method it does not have: the 405 is in words, its body checked by its zod schema
            expect(RESPONSE_SCHEMAS.MethodNotAllowed.safeParse(body).success, res.body.toString()).toBe(true);
            expect(doc.components.responses).not.toHaveProperty([name]);
            expect((doc as unknown as { info: Json }).info.description).toContain(
              'answers 405 with `{"detail":"Method \\"<method>\\" not allowed."}`',
            );
            continue;
          }
          expect(component(name)(body), `${name}: ${res.body.toString()}`).toBe(true);
          expect(Object.keys(operation("/api/v1/site/", "get")), name).toContain(String(res.status));
        }
      } finally {
        await preview.close();
      }
    });
  });
});
