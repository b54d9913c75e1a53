import { existsSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { parseAllHeaders } from "@netlify/headers-parser";
import { parseAllRedirects } from "@netlify/redirect-parser";

/**
 * Netlify's own routing engine, offline, wired as `netlify dev` wires it: netlify-redirector fed by
 * @netlify/redirect-parser, header rules from @netlify/headers-parser. Answers a request the way the
 * CDN would: the first matching rule, its target file under the publish folder, its headers.
 */
const require = createRequire(import.meta.url);
const redirector = require("netlify-redirector") as {
  parseJSON(json: string, options: { jwtSecret: string; jwtRoleClaim: string }): Promise<{ match(req: unknown): NetlifyMatch | null }>;
};

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
  answer(target: string): NetlifyAnswer | { readonly error: string };
}

export async function loadNetlify(config: string, publish: string): Promise<NetlifySite> {
  const redirectsFiles = [path.join(publish, "_redirects")].filter(existsSync);
  const { redirects, errors } = await parseAllRedirects({ redirectsFiles, netlifyConfigPath: config, minimal: false, configRedirects: [] });
  const rules = (redirects as Record<string, unknown>[]).map(({ from, query, ...rule }) => ({ ...rule, origin: from, params: query }));
  const matcher = await redirector.parseJSON(JSON.stringify(rules), { jwtSecret: "", jwtRoleClaim: "" });
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
    answer(target: string) {
      const url = new URL(target, "http://localhost");
      let decoded: string;
      try {
        decoded = decodeURIComponent(url.pathname);
      } catch (err) {
        return { error: String(err) };
      }
      const match = matcher.match({
        scheme: "http",
        host: "localhost",
        path: decoded,
        query: url.search.slice(1),
        headers: {},
        cookieValues: {},
        getHeader: () => "",
        getCookie: () => "",
      });
      if (!match) return serve(decoded, 200);
      const to = new URL(match.to, "http://localhost");
      return { ...serve(decodeURIComponent(to.pathname), match.status), match };
    },
  };
}
