/// <reference lib="deno.ns" />
/**
 * A stand-in for Netlify's edge in front of a site, for the tests: Deno (the runtime Netlify's edge
 * functions run on) serves 127.0.0.1:<port>; a request on a path the function declares (its inline
 * `config`: URLPattern paths and excluded paths, docs.netlify.com/edge-functions/declarations) goes to
 * the function, any other to the origin, which stands for Netlify's CDN serving the deploy (a server
 * of the test: Netlify's own redirect engine on the build's files).
 *
 * The context is the part of Netlify's published API the function uses
 * (docs.netlify.com/edge-functions/api, @netlify/edge-functions' Context): `next(request?)` sends the
 * request, or the one given (same site only), to the origin and resolves to its response, without
 * running edge functions again; a function returning `undefined` hands the request to the origin, a
 * `URL` rewrites to that path of the same site, a Response is sent as it is.
 *
 * deno run --allow-net=127.0.0.1 --allow-read=<function> standin.ts <function.js> <origin URL> <port>
 */

interface Context {
  next(request?: Request): Promise<Response>;
}
type EdgeFunction = (request: Request, context: Context) => Promise<Response | URL | undefined> | Response | URL | undefined;
interface Declaration {
  path?: string | string[];
  excludedPath?: string | string[];
}

const [functionFile, origin, port] = Deno.args;
const mod = (await import(new URL(`file://${functionFile}`).href)) as { default: EdgeFunction; config?: Declaration };
const list = (v: string | string[] | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
const patterns = (v: string | string[] | undefined) => list(v).map((pathname) => new URLPattern({ pathname }));
const included = patterns(mod.config?.path);
const excluded = patterns(mod.config?.excludedPath);

const site = new URL(origin);

/** The request as the origin gets it: the same path and query, method and headers. */
function toOrigin(request: Request): Promise<Response> {
  const url = new URL(request.url);
  const target = new URL(`${url.pathname}${url.search}`, site);
  return fetch(target, { method: request.method, headers: request.headers, redirect: "manual" });
}

Deno.serve({ hostname: "127.0.0.1", port: Number(port), onListen: () => {} }, async (request) => {
  const url = new URL(request.url);
  const runs = included.some((p) => p.test({ pathname: url.pathname })) && !excluded.some((p) => p.test({ pathname: url.pathname }));
  if (!runs) return toOrigin(request);
  const context: Context = {
    next(next?: Request) {
      if (next && new URL(next.url).origin !== url.origin) throw new Error("Edge functions can only rewrite requests to the same host.");
      return toOrigin(next ?? request);
    },
  };
  const result = await mod.default(request, context);
  if (result === undefined) return toOrigin(request);
  if (result instanceof URL) return toOrigin(new Request(result, request));
  return result;
});
