/**
 * Where the API lives under a site: the one spelling of its path prefix, for the route table
 * (routes.ts, which re-exports both) and the output records it reads (outputs/), which cannot
 * import the table that imports them.
 */
export const API = "/api/v1";
/** The top folder of every API file (and of the API snapshot archive). */
export const API_DIR = "api";
