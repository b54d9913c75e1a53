import { API_SERVED, isDocsPath } from "./files.ts";
import { parseRequest } from "./requests.ts";
import { resolve } from "./resolve.ts";
import { ERROR_DETAILS, errorBody, methodNotAllowed, NOT_FOUND_BODY, type RouteKind } from "./responses.ts";
import type { Routing } from "./routing.ts";

/** The methods the API answers; any other is 405. */
export const API_METHODS: readonly string[] = ["GET", "HEAD", "OPTIONS"];
/** The longest request target answered; a longer one is 414. */
export const MAX_TARGET = 8192;

/**
 * What a request gets, decided from the request alone and the build's routing, the same for the
 * preview (serve/server.ts) and a host that runs code per request (hosts/): whoever serves the
 * build only looks the file up and sends it.
 *
 * - `site`: no part of the API (the map, the reference's folder, the landing page): the build's files
 *   as a static host serves them.
 * - `error`: a JSON answer with the API's headers (400, 404, 405, 414).
 * - `redirect`: 301 to the list's path with its slash, the query kept, without a body.
 * - `file`: the route's file; a missing file is the JSON 404. OPTIONS answers the route's
 *   description (optionsBody) instead of the file, GET and HEAD the file with the API's headers.
 */
export type ApiAnswer =
  | { readonly kind: "site"; readonly path: string }
  | { readonly kind: "error"; readonly status: number; readonly body: string }
  | { readonly kind: "redirect"; readonly location: string }
  | { readonly kind: "file"; readonly file: string; readonly route: RouteKind; readonly options: boolean };

const notFound: ApiAnswer = { kind: "error", status: 404, body: NOT_FOUND_BODY };

export function answerRequest(target: string, method: string, routing: Routing): ApiAnswer {
  const pathPart = target.split("?")[0];
  const { folder, files } = API_SERVED;
  const isApi = pathPart === folder.slice(0, -1) || pathPart.startsWith(folder);
  if (target.length > MAX_TARGET) return { kind: "error", status: 414, body: errorBody(ERROR_DETAILS.uriTooLong) };
  const request = parseRequest(target);
  if (!request || request.path.includes("\0")) return { kind: "error", status: 400, body: errorBody(ERROR_DETAILS.malformed) };
  // The API, and the files of the route table outside it (the output records'), are routed by the table;
  // the reference's folder inside it is the site's files like the map's.
  if (isDocsPath(request.path) || (!isApi && !request.path.startsWith(folder) && !files.includes(request.path)))
    return { kind: "site", path: request.path };
  if (!API_METHODS.includes(method)) return { kind: "error", status: 405, body: errorBody(methodNotAllowed(method)) };
  const resolution = resolve(request, routing);
  if (resolution.type === "redirect") {
    // From the normalised path: "//api/v1/link" must not become a redirect to a host named "api".
    const q = target.indexOf("?");
    const location = resolution.location
      .split("/")
      .map((seg) => encodeURIComponent(seg).replace(/%3A/gi, ":"))
      .join("/");
    return { kind: "redirect", location: `${location}${q < 0 ? "" : target.slice(q)}` };
  }
  if (resolution.type === "not-found") return notFound;
  // A file name never climbs out of the build (resolve.ts refuses such segments); checked once more here.
  if (resolution.file.split("/").includes("..")) return notFound;
  return { kind: "file", file: resolution.file, route: resolution.rule.kind, options: method === "OPTIONS" };
}
