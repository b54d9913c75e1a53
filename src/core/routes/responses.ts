import type { OutputKind, OutputRouteKind } from "../outputs/index.ts";
import { OUTPUT_RECORDS, OUTPUT_ROUTES } from "../outputs/derived.ts";

/** Headers of every API response (preview and hosts). */
export const API_HEADERS: Readonly<Record<string, string>> = {
  "Content-Type": "application/json",
  Allow: "GET, HEAD, OPTIONS",
  Vary: "Accept",
  "Access-Control-Allow-Origin": "*",
};
export const NOT_FOUND_BODY = '{"detail":"Not found."}';

/** The preview's other error answers (a static host has its own), worded as Django REST framework words them. */
export const ERROR_DETAILS = {
  malformed: "Malformed request.",
  uriTooLong: "Request URI too long.",
  headerTooLarge: "Request header fields too large.",
  internal: "Internal error.",
} as const;
export const methodNotAllowed = (method: string): string => `Method "${method}" not allowed.`;
export const errorBody = (detail: string): string => JSON.stringify({ detail });

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
  | OutputRouteKind
  | "interface-list"
  | "interface-detail"
  | "interface-accesspoint"
  | "openapi"
  | OutputKind
  | "not-found";

function routeNames(routes: readonly { readonly kind: OutputRouteKind; readonly name: string }[]): Record<OutputRouteKind, string> {
  return Object.fromEntries(routes.map((r) => [r.kind, r.name])) as Record<OutputRouteKind, string>;
}

/** The name of each route in its answer to OPTIONS (Django REST framework's view names, as the original gave them). */
export const ROUTE_NAMES: Readonly<Record<RouteKind, string>> = {
  "api-root": "Api Root",
  "link-list": "Link List",
  "link-detail": "Link Detail",
  "site-list": "Site List",
  "site-detail": "Site Detail",
  "accesspoint-list": "Accesspoint List",
  "accesspoint-detail": "Accesspoint Detail",
  "accesspoint-links": "Accesspoint Link List",
  "accesspoint-interfaces": "Accesspoint Interface List",
  // the outputs' routes: those beside an access point's detail after its own, then those under the API
  ...routeNames(OUTPUT_ROUTES.filter((r) => r.beside === "accesspoint")),
  ...routeNames(OUTPUT_ROUTES.filter((r) => r.beside === undefined)),
  "interface-list": "Interface List",
  "interface-detail": "Interface Detail",
  "interface-accesspoint": "Interface Accesspoint Detail",
  openapi: "OpenAPI Document",
  ...(Object.fromEntries(OUTPUT_RECORDS.map((o) => [o.kind, o.name])) as Record<OutputKind, string>),
  "not-found": "Not Found",
};

/** The answer to OPTIONS on a route whose file exists, as Django REST framework's metadata gives it. */
export function optionsBody(kind: RouteKind): string {
  return JSON.stringify({ name: ROUTE_NAMES[kind], description: "", renders: [API_HEADERS["Content-Type"]], parses: [] });
}
