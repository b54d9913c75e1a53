import { fileKey } from "./names.ts";

/**
 * The route table: every URL form of the API and where its answer lives under the build output.
 * It is the single source of truth for the preview server's routing (serve/preview.ts), the Netlify
 * rules (hosts/netlify.ts), the API root (pages.ts) and the list of requests the tests make. Rules
 * follow Netlify's semantics, which the preview reproduces: the first matching rule wins; a query
 * condition is a literal value or a `:placeholder`; parameters a rule does not name are ignored;
 * placeholders stand for whole path segments only.
 */

export const API = "/api/v1";

/** Headers of every API response (preview and hosts). */
export const API_HEADERS: Readonly<Record<string, string>> = {
  "Content-Type": "application/json",
  Allow: "GET, HEAD, OPTIONS",
  Vary: "Accept",
  "Access-Control-Allow-Origin": "*",
};
export const NOT_FOUND_FILE = "/api/404.json";
export const NOT_FOUND_BODY = '{"detail":"Not found."}';

export type RouteKind =
  | "api-root"
  | "link-list"
  | "link-detail"
  | "site-list"
  | "site-detail"
  | "accesspoint-list"
  | "accesspoint-detail"
  | "accesspoint-links"
  | "accesspoint-interfaces"
  | "interface-list"
  | "interface-detail"
  | "interface-accesspoint"
  | "not-found";

export interface Rule {
  readonly kind: RouteKind;
  /** canonical request path; `:name` segments are placeholders; a trailing "/" marks a list form */
  readonly from: string;
  /** query conditions: a literal value (possibly "") or a `:placeholder` */
  readonly query: Readonly<Record<string, string>>;
  /** target file under the output root, with placeholders; null for a 404 */
  readonly to: string | null;
}

/** How a query placeholder's value becomes part of a file name. */
export interface QueryPlaceholder {
  /** values are compared case-insensitively (the preview folds them; hosts need a rule per case) */
  readonly fold?: "lower";
  /** whether the values come from the data (and so may need explicit per-value rules on a host) */
  readonly data: boolean;
}

export const QUERY_PLACEHOLDERS: Readonly<Record<string, QueryPlaceholder>> = {
  status: { data: false },
  version: { data: true },
  bound: { data: true },
  ssid: { data: true },
  mac: { data: true, fold: "lower" },
  a: { data: false },
  b: { data: false },
};

/** Where a filtered list lives: `<list>/_q/<param>/<key>[/status/<s>]/index.json`. */
export function filterDir(listPath: string, param: string, key: string): string {
  return `${listPath}_q/${param}/${key}/`;
}

export function fileOf(dir: string): string {
  return `${dir.endsWith("/") ? dir : dir + "/"}index.json`;
}

const r = (kind: RouteKind, from: string, query: Record<string, string>, to: string | null): Rule => ({ kind, from, query, to });

/** `status=all` and `status=` mean "no status filter"; other values pick the precomputed status file. */
function withStatus(kind: RouteKind, from: string, query: Record<string, string>, dir: string, statusDir = dir): Rule[] {
  return [
    r(kind, from, { ...query, status: "all" }, fileOf(dir)),
    r(kind, from, { ...query, status: "" }, fileOf(dir)),
    r(kind, from, { ...query, status: ":status" }, fileOf(statusDir + "status/:status/")),
    r(kind, from, query, fileOf(dir)),
  ];
}

/** Detail and sub-resource paths take no filters; `status=all` (or empty) is accepted, any other status is not precomputed. */
function unfiltered(kind: RouteKind, from: string): Rule[] {
  const file = fileOf(from);
  return [r(kind, from, { status: "all" }, file), r(kind, from, { status: "" }, file), r(kind, from, { status: ":status" }, null), r(kind, from, {}, file)];
}

function buildRules(): Rule[] {
  const ap = `${API}/accesspoint/`;
  const link = `${API}/link/`;
  const iface = `${API}/interface/`;
  const site = `${API}/site/`;
  const fv = "firmware_version";
  const fvb = "firmware_version__before";
  return [
    // The API root: the endpoints and their filters (pages.ts). Not in the recorded original, which answered 404.
    r("api-root", `${API}/`, {}, fileOf(`${API}/`)),
    // Link list and link by id or by peers (one path form on hosts: placeholders cannot split a segment).
    ...withStatus("link-list", link, {}, link, `${link}_q/`),
    ...unfiltered("link-detail", `${link}:key`),
    // Sites ignore every parameter, as the original does.
    r("site-list", site, {}, fileOf(site)),
    r("site-detail", `${site}:id`, {}, fileOf(`${site}:id`)),
    // Access point list: one firmware filter, optionally with status. Two firmware filters are not precomputed.
    r("accesspoint-list", ap, { [fv]: ":a", [fvb]: ":b" }, null),
    ...withStatus("accesspoint-list", ap, { [fv]: "" }, filterDir(ap, fv, "_null")),
    ...withStatus("accesspoint-list", ap, { [fv]: ":version" }, filterDir(ap, fv, ":version")),
    ...withStatus("accesspoint-list", ap, { [fvb]: "" }, ap, `${ap}_q/`),
    ...withStatus("accesspoint-list", ap, { [fvb]: ":bound" }, filterDir(ap, fvb, ":bound")),
    ...withStatus("accesspoint-list", ap, {}, ap, `${ap}_q/`),
    ...unfiltered("accesspoint-detail", `${ap}:ip`),
    ...unfiltered("accesspoint-links", `${ap}:ip/links/`),
    ...unfiltered("accesspoint-interfaces", `${ap}:ip/interfaces/`),
    // Interface list: one of wifi_ssid or if_hwaddress; an empty value means no filter. Status is ignored.
    r("interface-list", iface, { wifi_ssid: ":a", if_hwaddress: ":b" }, null),
    r("interface-list", iface, { wifi_ssid: "" }, fileOf(iface)),
    r("interface-list", iface, { wifi_ssid: ":ssid" }, fileOf(filterDir(iface, "wifi_ssid", ":ssid"))),
    r("interface-list", iface, { if_hwaddress: "" }, fileOf(iface)),
    r("interface-list", iface, { if_hwaddress: ":mac" }, fileOf(filterDir(iface, "if_hwaddress", ":mac"))),
    r("interface-list", iface, {}, fileOf(iface)),
    ...unfiltered("interface-detail", `${iface}:ip`),
    ...unfiltered("interface-accesspoint", `${iface}:ip/accesspoint/`),
    r("not-found", "/api/*", {}, null),
  ];
}

export const RULES: readonly Rule[] = buildRules();

export interface Request {
  /** decoded path */
  readonly path: string;
  /** decoded query parameters; for a repeated name the last value counts (as on Netlify) */
  readonly params: ReadonlyMap<string, string>;
}

export type Resolution =
  | { readonly type: "file"; readonly rule: Rule; readonly file: string }
  | { readonly type: "redirect"; readonly rule: Rule; readonly location: string }
  | { readonly type: "not-found"; readonly rule?: Rule };

/**
 * Resolves a request the way the preview serves it: Netlify's matching, plus the original API's
 * path-form rules that static hosts cannot express (a list path without its slash redirects; a
 * detail path with a trailing slash is not found). Placeholder values become file-name keys.
 * `dataRules` are the build's literal rules (its `_redirects`), which come first, as on Netlify.
 */
export function resolve(req: Request, dataRules: readonly Rule[] | DataRuleIndex = []): Resolution {
  const index = dataRules instanceof DataRuleIndex ? dataRules : new DataRuleIndex(dataRules);
  for (const rule of index.candidates(req)) {
    const m = matchPath(rule.from, req.path);
    if (!m) continue;
    const values = matchQuery(rule.query, req.params);
    if (!values) continue;
    // A placeholder with an empty value names no file (on Netlify too: the target is missing).
    if (rule.kind === "not-found" || rule.to === null || Object.values(values).includes("")) return { type: "not-found", rule };
    if (rule.from.endsWith("/") && !m.slash) return { type: "redirect", rule, location: `${req.path}/` };
    if (!rule.from.endsWith("/") && m.slash) continue;
    return { type: "file", rule, file: substitute(rule.to, { ...m.values, ...values }) };
  }
  return { type: "not-found" };
}

/**
 * A build's literal rules can number hundreds of thousands (two per MAC): indexed by their first
 * literal query condition, a request only meets the few whose literal it carries, in their order,
 * followed by the route table.
 */
export class DataRuleIndex {
  readonly #byLiteral = new Map<string, { at: number; rule: Rule }[]>();
  readonly #always: { at: number; rule: Rule }[] = [];
  /** what a request carrying none of the literals meets: built once, it is most requests */
  readonly #plain: readonly Rule[];

  constructor(rules: readonly Rule[]) {
    rules.forEach((rule, at) => {
      const literal = Object.entries(rule.query).find(([, v]) => !v.startsWith(":"));
      if (!literal) return void this.#always.push({ at, rule });
      const key = `${literal[0]}=${literal[1]}`;
      const list = this.#byLiteral.get(key);
      if (list) list.push({ at, rule });
      else this.#byLiteral.set(key, [{ at, rule }]);
    });
    this.#plain = [...this.#always.map((c) => c.rule), ...RULES];
  }

  candidates(req: Request): readonly Rule[] {
    const found: { at: number; rule: Rule }[] = [];
    for (const [name, value] of req.params) found.push(...(this.#byLiteral.get(`${name}=${value}`) ?? []));
    if (found.length === 0) return this.#plain;
    return [...[...this.#always, ...found].sort((a, b) => a.at - b.at).map((c) => c.rule), ...RULES];
  }
}

function matchPath(pattern: string, path: string): { values: Record<string, string>; slash: boolean } | undefined {
  if (pattern.endsWith("/*")) return path === pattern.slice(0, -2) || path.startsWith(pattern.slice(0, -1)) ? { values: {}, slash: false } : undefined;
  const slash = path.endsWith("/") && path.length > 1;
  const want = patternSegments(pattern);
  const got = (slash ? path.slice(0, -1) : path).split("/");
  if (want.length !== got.length) return undefined;
  const values: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i].startsWith(":")) {
      if (!isSafeSegment(got[i])) return undefined;
      values[want[i].slice(1)] = got[i];
    } else if (want[i] !== got[i]) return undefined;
  }
  return { values, slash };
}

/** Patterns are few (the route table's and the build's), requests many: each pattern is split once. */
const splitPatterns = new Map<string, readonly string[]>();
function patternSegments(pattern: string): readonly string[] {
  let segments = splitPatterns.get(pattern);
  if (!segments) splitPatterns.set(pattern, (segments = pattern.replace(/\/$/, "").split("/")));
  return segments;
}

/** A path placeholder is used verbatim in a file name: refuse anything that could leave its folder. */
function isSafeSegment(segment: string): boolean {
  return segment !== "" && segment !== "." && segment !== ".." && !/[\\\0\u0001-\u001f\u007f]/.test(segment);
}

function matchQuery(query: Readonly<Record<string, string>>, params: ReadonlyMap<string, string>): Record<string, string> | undefined {
  const values: Record<string, string> = {};
  for (const [name, want] of Object.entries(query)) {
    const got = params.get(name);
    if (got === undefined) return undefined;
    if (want.startsWith(":")) {
      const placeholder = want.slice(1);
      const fold = QUERY_PLACEHOLDERS[placeholder]?.fold;
      const value = fold === "lower" ? got.toLowerCase() : got;
      values[placeholder] = fileKey(value);
    } else if (want !== got) return undefined;
  }
  return values;
}

function substitute(pattern: string, values: Record<string, string>): string {
  return pattern.replace(/:([a-z]+)/g, (_, name: string) => values[name] ?? `:${name}`);
}

/** Parses a raw request target (path and query as sent) like a host does; undefined for bad encoding. */
export function parseRequest(target: string): Request | undefined {
  const q = target.indexOf("?");
  const rawPath = q < 0 ? target : target.slice(0, q);
  const rawQuery = q < 0 ? "" : target.slice(q + 1);
  let path: string;
  try {
    path = decodeURIComponent(rawPath);
  } catch {
    return undefined;
  }
  const params = new Map<string, string>();
  for (const part of rawQuery.split("&")) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    const rawName = eq < 0 ? part : part.slice(0, eq);
    const rawValue = eq < 0 ? "" : part.slice(eq + 1);
    try {
      params.set(formDecode(rawName), formDecode(rawValue));
    } catch {
      return undefined;
    }
  }
  return { path: path.replace(/\/{2,}/g, "/"), params };
}

function formDecode(text: string): string {
  return decodeURIComponent(text.replace(/\+/g, " "));
}
