import { OUTPUTS, type OutputKind } from "../outputs/index.ts";

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
  | "accesspoint-changes"
  | "changes"
  | "netjson-history"
  | "netjson-day"
  | "netjson-diff"
  | "interface-list"
  | "interface-detail"
  | "interface-accesspoint"
  | "openapi"
  | OutputKind
  | "not-found";

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
  "accesspoint-changes": "Accesspoint Change List",
  changes: "Change List",
  "netjson-history": "NetJSON History",
  "netjson-day": "NetJSON Network Graph Of A Day",
  "netjson-diff": "NetJSON Diff Of A Day",
  "interface-list": "Interface List",
  "interface-detail": "Interface Detail",
  "interface-accesspoint": "Interface Accesspoint Detail",
  openapi: "OpenAPI Document",
  ...(Object.fromEntries(OUTPUTS.map((o) => [o.kind, o.name])) as Record<OutputKind, string>),
  "not-found": "Not Found",
};

/** The answer to OPTIONS on a route whose file exists, as Django REST framework's metadata gives it. */
export function optionsBody(kind: RouteKind): string {
  return JSON.stringify({ name: ROUTE_NAMES[kind], description: "", renders: [API_HEADERS["Content-Type"]], parses: [] });
}
