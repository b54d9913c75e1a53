/**
 * The route table: every URL form of the API and where its answer lives under the build output.
 * It is the single source of truth for the preview server's routing (serve/server.ts), every
 * host's rules (hosts/), the API root (pages.ts) and the list of requests the tests make. What a rule
 * means, for the preview and every host alike: the first matching rule wins; a query condition is a
 * literal value (compared with the decoded request value, case-sensitively) or a `:placeholder`;
 * parameters a rule does not name are ignored; placeholders stand for whole path segments only.
 *
 * One module per job in routes/: the responses' headers, bodies and names (responses.ts), how a
 * query value becomes a file-name key (placeholders.ts), the file templates (files.ts), the rules
 * (table.ts), matching a request (resolve.ts), the build's routing file (routing.ts), requests
 * and URLs from files and kinds (requests.ts), and a request's whole answer for whoever serves the
 * build (answer.ts). Code outside imports this file.
 */

export { API, API_DIR } from "./base.ts";
export * from "./routes/responses.ts";
export * from "./routes/compression.ts";
export * from "./routes/placeholders.ts";
export {
  API_ARCHIVE_PARTIAL,
  API_SERVED,
  API_SERVED_GLOBS,
  DOCS_FOLDER,
  isApiServed,
  fileFor,
  FILES,
  FOLDER_INDEX,
  HIDDEN,
  isDocsPath,
  MAP_FOLDER,
  STATUS_FOLDER,
  SNAPSHOT_DIR,
  SNAPSHOT_FILES,
  snapshotArchive,
  TYPED_FILES,
  type FileName,
} from "./routes/files.ts";
export * from "./routes/table.ts";
export * from "./routes/resolve.ts";
export * from "./routes/layout.ts";
export * from "./routes/routing.ts";
export * from "./routes/requests.ts";
export * from "./routes/answer.ts";
export * from "./routes/places.ts";
