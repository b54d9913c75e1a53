import { existsSync, readFileSync, statSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import path from "node:path";
import { parseAllHeaders } from "@netlify/headers-parser";
import { parseAllRedirects } from "@netlify/redirect-parser";
import { regexEscape } from "../../src/hosts/patterns.ts";

/**
 * Netlify's own routing engine, offline, wired as `netlify dev` wires it: netlify-redirector fed by
 * @netlify/redirect-parser, header rules from @netlify/headers-parser. Answers a request the way the
 * CDN would: the first matching rule, its target file under the publish folder, its headers.
 *
 * The rules are read as `netlify deploy --dir <publish>` reads them: the netlify.toml it is given
 * (netlify-cli takes ./netlify.toml, never one in the publish folder) merged after
 * `<publish>/_redirects` by the same parser call (`parseAllRedirects`), which also drops the earlier
 * of two equal rules. netlify-cli then writes the merged rules into the deployed netlify.toml.
 */
const require = createRequire(import.meta.url);
type Engine = { match(req: unknown): NetlifyMatch | null };
const ENGINE_OPTIONS = { jwtSecret: "", jwtRoleClaim: "" };
const redirector = require("netlify-redirector") as {
  parseJSON(json: string, options: typeof ENGINE_OPTIONS): Promise<Engine>;
};
/** The engine's parser itself, synchronous once the module has started (parseJSON above waits for that). */
const parseNow = (json: string): Engine => {
  const wasm = require("netlify-redirector/lib/redirects.js") as {
    RedirectParser: new (o: typeof ENGINE_OPTIONS) => { parseJSON(json: string): Engine };
  };
  return new wasm.RedirectParser(ENGINE_OPTIONS).parseJSON(json);
};

/**
 * Whether a rule's path (`/a/:b/*`) could match a decoded request path: generously (no case, any
 * trailing slash or repeated slashes, a placeholder or splat matching anything; a path of another shape always could).
 */
function pathTest(pattern: string): (decoded: string) => boolean {
  const segments = pattern.replace(/\/+$/, "").split("/").slice(1);
  if (!pattern.startsWith("/") || pattern.includes("%") || segments.some((s) => s.includes("*") && s !== "*")) return () => true;
  const body = segments.map((s) => (s === "*" ? "(?:/.*)?" : s.startsWith(":") ? "/[^/]*" : `/${regexEscape(s)}`)).join("");
  const re = new RegExp(`^${body}/*$`, "is");
  return (decoded) => re.test(decoded.replace(/\/{2,}/g, "/"));
}

export interface NetlifyMatch {
  readonly from: string;
  readonly to: string;
  readonly status: number;
  readonly force: boolean;
}

export interface NetlifyAnswer {
  readonly match: NetlifyMatch | null;
  readonly status: number;
  /** the file served, relative to the publish folder */
  readonly file?: string;
  readonly body?: Buffer;
  readonly headers: Record<string, string>;
}

export interface NetlifySite {
  readonly errors: readonly Error[];
  /** the rules after the merge, in the order the engine tries them */
  readonly rules: number;
  answer(target: string): NetlifyAnswer | { readonly error: string };
}

/** A request as netlify-redirector takes it: no header, no cookie. */
const request = (path: string, query: string) => ({
  scheme: "http",
  host: "localhost",
  path,
  query,
  headers: {},
  cookieValues: {},
  getHeader: () => "",
  getCookie: () => "",
});

export async function loadNetlify(config: string, publish: string): Promise<NetlifySite> {
  const redirectsFiles = [path.join(publish, "_redirects")].filter(existsSync);
  const { redirects, errors } = await parseAllRedirects({ redirectsFiles, netlifyConfigPath: config, minimal: false, configRedirects: [] });
  const rules = (redirects as Record<string, unknown>[]).map(({ from, query, ...rule }): Record<string, unknown> => ({
    ...rule,
    origin: from,
    params: query,
  }));
  // The engine costs milliseconds a call with the thousands of rules of a build's _redirects, and
  // more the more rules it holds. A rule matches only where its path does, so each request is given
  // to an engine holding only the rules whose path could match its path (in their order: the first
  // match is the same), made once for each such set. "Could match" is judged generously here (no
  // case, any trailing slash, a placeholder or splat matching anything, a path of another shape
  // always a candidate): a rule left in changes nothing, only one left out would. Each answer is
  // kept: it depends on the path and query alone.
  const couldMatch = rules.map((r) => pathTest(String(r.path)));
  await redirector.parseJSON("[]", ENGINE_OPTIONS); // the module started: parseNow may run
  const engines = new Map<string, Engine>();
  const engineFor = (decoded: string): Engine | undefined => {
    const picked: number[] = [];
    couldMatch.forEach((test, i) => test(decoded) && picked.push(i));
    if (picked.length === 0) return undefined;
    const key = picked.join(",");
    let engine = engines.get(key);
    if (!engine) engines.set(key, (engine = parseNow(JSON.stringify(picked.map((i) => rules[i])))));
    return engine;
  };
  const matches = new Map<string, NetlifyMatch | null>();
  const matchOf = (decoded: string, query: string): NetlifyMatch | null => {
    const key = `${decoded.length}:${decoded}${query}`;
    if (matches.has(key)) return matches.get(key)!;
    const match = engineFor(decoded)?.match(request(decoded, query)) ?? null;
    matches.set(key, match);
    return match;
  };
  const parsed = await parseAllHeaders({ headersFiles: [], netlifyConfigPath: config, configHeaders: [], minimal: false });
  const headerRules = parsed.headers as { forRegExp: RegExp; values: Record<string, string> }[];
  const headersFor = (file: string) => Object.assign({}, ...headerRules.filter((h) => h.forRegExp.test(file)).map((h) => h.values));
  const serve = (file: string, status: number): NetlifyAnswer & { match: null } => {
    // A folder is served by its index.html, with or without the slash (the CDN's "pretty URLs").
    if (existsSync(path.join(publish, file)) && statSync(path.join(publish, file)).isDirectory())
      file = path.posix.join(file, "index.html");
    const full = path.join(publish, file);
    if (!full.startsWith(publish) || !existsSync(full)) {
      return {
        match: null,
        status: 404,
        file: "/404.html",
        body: readFileSync(path.join(publish, "404.html")),
        headers: headersFor("/404.html"),
      };
    }
    return { match: null, status, file, body: readFileSync(full), headers: headersFor(file) };
  };
  return {
    errors: [...errors, ...parsed.errors] as Error[],
    rules: rules.length,
    answer(target: string) {
      // Malformed percent-encoding in the path, or in a query value the engine puts into a target, is an error.
      try {
        const url = new URL(target, "http://localhost");
        const decoded = decodeURIComponent(url.pathname);
        const match = matchOf(decoded, url.search.slice(1));
        if (!match) return serve(decoded, 200);
        const to = new URL(match.to, "http://localhost");
        return { ...serve(decodeURIComponent(to.pathname), match.status), match };
      } catch (err) {
        return { error: String(err) };
      }
    },
  };
}

/** The engine behind an HTTP server on a loopback port, so `mesh-api check` can be run against it. */
export async function serveNetlify(site: NetlifySite): Promise<{ readonly url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const a = site.answer(req.url ?? "/");
    if ("error" in a) {
      res.writeHead(400).end();
      return;
    }
    res.writeHead(a.status, { ...a.headers, "Content-Length": a.body?.length ?? 0 });
    res.end(req.method === "HEAD" ? undefined : a.body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // a client's kept-alive connections (the edge stand-in's) would hold the close open
        server.closeAllConnections();
      }),
  };
}
