import {
  API_HEADERS,
  API_SERVED,
  ERROR_DETAILS,
  errorBody,
  FILES,
  FOLDER_INDEX,
  HIDDEN,
  methodNotAllowed,
  NOT_FOUND_BODY,
  optionsBody,
  ROUTE_NAMES,
  TWIN,
  TWIN_NAME,
  TYPED_FILES,
  varyWithTwin,
} from "../core/routes.ts";

/** The answers and places every server writes beside the rules (core/routes), as the servers name them. */
export const SERVED = {
  headers: API_HEADERS,
  notFound: NOT_FOUND_BODY,
  malformed: errorBody(ERROR_DETAILS.malformed),
  /** the 405's body for a method (a server may pass a placeholder of its own) */
  refused: (method: string) => errorBody(methodNotAllowed(method)),
  /** the answer to OPTIONS on a route of this kind */
  options: optionsBody,
  names: ROUTE_NAMES,
  /** the paths the API section answers: under /api/ but `except`, and `files` outside it */
  api: API_SERVED,
  files: FILES,
  folderIndex: FOLDER_INDEX,
  /** the site's files with a Content-Type of their own (the metrics file): a rule each */
  typed: TYPED_FILES,
  /** the prefix of paths a server keeps for itself (internal locations), hidden from the build's files */
  hidden: HIDDEN,
  /** a long answer's gzip twin beside its file (core/routes/compression.ts): its suffix, and the Vary of a file that has one */
  twin: { suffix: TWIN.suffix, encoding: TWIN.encoding, vary: varyWithTwin, name: TWIN_NAME },
} as const;
