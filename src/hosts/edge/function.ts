/**
 * The Netlify edge function (hosts/netlify-edge.ts bundles this file with the route table into one
 * module): it answers every request under the API as the preview does, from the build's files. It
 * runs on Deno with Web APIs only; what it needs of the build it reads from the build's own files,
 * fetched through the platform, so the function is the same for every network.
 *
 * Netlify's edge API (docs.netlify.com/edge-functions/api): the default export receives the
 * request and a context; returning `undefined` hands the request on to the site's static files
 * (and its redirect rules); `context.next(request)` fetches another request of the same site from
 * there, without running edge functions again, and resolves to its response; a returned Response is
 * sent as it is, with its own headers (header rules do not apply to it, and Allow is kept).
 */
import {
  acceptsGzip,
  answerRequest,
  API_HEADERS,
  API_SERVED,
  DOCS_FOLDER,
  FILES,
  hasTwin,
  mayHaveTwin,
  NOT_FOUND_BODY,
  optionsBody,
  parseRouting,
  TWIN,
  twinOf,
  varyWithTwin,
  type Routing,
} from "../../core/routes.ts";

/** The part of Netlify's Context the function uses (@netlify/edge-functions' `Context.next`). */
export interface EdgeContext {
  next(request?: Request): Promise<Response>;
}

/**
 * Netlify's inline declaration: the paths the route table answers (the API, the output records'
 * files outside it, and any path starting with "//", which the preview reads as "/"), but the
 * reference's folder; the routing copy, to refuse it. The site's other files are Netlify's to serve.
 */
export const config = {
  path: [API_SERVED.folder.slice(0, -1), `${API_SERVED.folder}*`, "//*", ...API_SERVED.files, FILES.routingCopy],
  excludedPath: [`${DOCS_FOLDER}*`],
};

let routing: Promise<Routing> | undefined;

/**
 * The build's routing, read once per instance: a deploy's files never change under it. A build
 * without the copy routes by the defaults; a failed read is tried again by the next request.
 */
function routingOf(request: Request, context: EdgeContext): Promise<Routing> {
  routing ??= context
    .next(new Request(new URL(FILES.routingCopy, request.url)))
    .then(async (r) => {
      if (r.status === 200) return parseRouting(await r.text());
      await r.body?.cancel();
      if (r.status !== 404) throw new Error(`the routing copy answered ${r.status}`);
      return parseRouting(undefined);
    })
    .catch((err: unknown) => {
      routing = undefined;
      throw err;
    });
  return routing;
}

function json(status: number, body: string, method: string, extra: Record<string, string> = {}): Response {
  const headers: Record<string, string> = { ...API_HEADERS, ...extra };
  if (body === "") delete headers["Content-Type"];
  return new Response(method === "HEAD" || body === "" ? null : body, { status, headers });
}

export default async function meshApi(request: Request, context: EdgeContext): Promise<Response | undefined> {
  const url = new URL(request.url);
  const method = request.method;
  // The routing file is the function's, no content: answered as every host answers a host file.
  if (url.pathname === FILES.routingCopy) return json(404, NOT_FOUND_BODY, method);
  const a = answerRequest(`${url.pathname}${url.search}`, method, await routingOf(request, context));
  switch (a.kind) {
    case "site":
      // A path starting with "//" that is none of the API's: the site's file, as Netlify serves it.
      return undefined;
    case "error":
      return json(a.status, a.body, method);
    case "redirect":
      return json(301, "", method, { Location: a.location });
  }
  // A client that accepts gzip is sent the file's twin where it has one (core/routes/compression.ts):
  // asked for first, so that the file itself is not fetched too.
  if (!a.options && mayHaveTwin(a.file) && acceptsGzip(request.headers.get("Accept-Encoding") ?? undefined)) {
    const twin = await context.next(new Request(new URL(twinOf(a.file), request.url)));
    if (twin.status === 200)
      return whole(twin, method, () => ({ Vary: varyWithTwin(API_HEADERS.Vary), "Content-Encoding": TWIN.encoding }));
    await twin.body?.cancel();
  }
  const file = await context.next(new Request(new URL(a.file, request.url)));
  if (file.status !== 200) {
    await file.body?.cancel();
    return json(404, NOT_FOUND_BODY, method);
  }
  if (a.options) {
    await file.body?.cancel();
    return json(200, optionsBody(a.route), method);
  }
  return whole(file, method, (bytes): Record<string, string> => (hasTwin(a.file, bytes) ? { Vary: varyWithTwin(API_HEADERS.Vary) } : {}));
}

/** A file's answer, whole, so that it carries its length as the preview's does, with the headers its length calls for. */
async function whole(file: Response, method: string, headersFor: (bytes: number) => Record<string, string>): Promise<Response> {
  const body = await file.arrayBuffer();
  return new Response(method === "HEAD" ? null : body, {
    status: 200,
    headers: { ...API_HEADERS, ...headersFor(body.byteLength), "Content-Length": String(body.byteLength) },
  });
}
