import { fileFor, urlFor } from "../core/routes.ts";
import { BRAND_RULE, COMMUNITY_URL_PATTERN, type DefaultStatus, isBrand } from "../core/settings.ts";
import { parseInstant } from "../core/values/timestamp.ts";
import { httpUrl, type UrlNeed } from "../core/values/url.ts";
import { getJson, type JsonRequest } from "../io/read/http.ts";
import { assertReplaceable } from "../io/write/ownership.ts";
import { importTime, writeImportedDump } from "../io/write/write-dump.ts";
import { CommandError } from "../core/problems.ts";
import {
  API_LISTS,
  ApiShapeError,
  apiToDump,
  describe,
  isObj,
  type ApiListName,
  type ApiLists,
  type DumpRecords,
} from "./api-transform.ts";

export { API_LISTS, ApiShapeError, apiToDump, detectBrand, detectDefaultStatus } from "./api-transform.ts";
export type { ApiListName, ApiLists, DumpRecords, TransformOptions } from "./api-transform.ts";

/**
 * `import api`: mirrors a running instance of the original dynamic API ("Geronimo",
 * github.com/opennet-initiative/api) into a dump in the format `mesh-topology-dump/1`.
 *
 * Two halves: `apiToDump` is pure (the lists as parsed JSON in, dump records out; api-transform.ts) and
 * `importApi`, here, does the rest: the ownership check, the downloads (time-outs, retries with backoff for
 * 5xx and network errors, a size limit), validation of the records with the dump's own validator,
 * and the atomic write. Whatever fails, nothing is written.
 */

/** What each list holds, for the progress lines. */
const LIST_NOUNS: Readonly<Record<ApiListName, string>> = {
  accesspoints: "access points",
  accesspointsByDefault: "access points without a status filter",
  interfaces: "interfaces",
  links: "links",
  sites: "sites",
};

/** The base URL's answer is not what the API gives: the CLI prints the message and exits 1. */
export class ImportApiError extends CommandError {
  readonly ending = "input";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ImportApiError";
  }
}

/** How import api requests when not told otherwise; the command line's defaults too. */
export const IMPORT_API_DEFAULTS = {
  timeoutMs: 30_000,
  retries: 3,
  retryDelayMs: 1000,
  maxBytes: 512 * 1024 * 1024,
} as const;

/** Left out, the request settings are those of IMPORT_API_DEFAULTS. */
export interface ImportApiOptions {
  readonly brand?: string;
  /** `taken_at`; the time of the mirror when absent */
  readonly at?: string;
  readonly name?: string | null;
  /** per request, body included */
  readonly timeoutMs?: number;
  /** further tries after a 5xx answer or a network error */
  readonly retries?: number;
  /** the wait before the first retry, doubled for each further one */
  readonly retryDelayMs?: number;
  /** the largest body accepted per list */
  readonly maxBytes?: number;
  readonly log?: (line: string) => void;
  readonly warn?: (line: string) => void;
  /** for the ownership check; the process's own by default */
  readonly cwd?: string;
  readonly home?: string;
}

export interface ImportApiResult {
  readonly accesspoints: number;
  readonly interfaces: number;
  readonly links: number;
  readonly brand?: string;
  readonly defaultStatus: DefaultStatus | null;
  readonly takenAt: string;
}

/** What import api asks of its base URL, for the messages of core/values/url.ts. */
export const IMPORT_API_URL: UrlNeed = {
  command: "import api",
  needs: "the API's address as http(s)://host[:port][/path]",
  example: "https://api.opennet-initiative.de/",
  name: "the API's address",
};

/** `/api/v1/` under the base URL (the base may name it already). A base that is no http(s) URL throws UrlError. */
export function apiRoot(base: string): URL {
  const u = httpUrl(base, IMPORT_API_URL);
  u.search = "";
  u.hash = "";
  if (!u.pathname.endsWith("/")) u.pathname += "/";
  const root = urlFor("api-root");
  if (!u.pathname.endsWith(root)) u.pathname += root.slice(1);
  return u;
}

export async function importApi(base: string, out: string, options: ImportApiOptions = {}): Promise<ImportApiResult> {
  const root = apiRoot(base);
  if (options.at !== undefined) importTime(options.at, (message) => new ImportApiError(message)); // refused before any request
  if (options.brand !== undefined && !isBrand(options.brand))
    throw new ImportApiError(`--brand ${JSON.stringify(options.brand)}: ${BRAND_RULE}`);
  await assertReplaceable({ out, option: "--out", kind: "dump", cwd: options.cwd, home: options.home });

  const log = options.log ?? (() => {});
  // A static copy publishes when its data was taken (the API root's taken_at) and its community (the
  // nodelist): a mirror keeps both, so its status lists are the site's. The original publishes neither.
  const published = await publishedFacts(root, options);
  const takenAt =
    options.at !== undefined || published.takenAt === undefined ? importTime(options.at, (m) => new ImportApiError(m)) : published.takenAt;
  if (published.takenAt !== undefined && options.at === undefined) log(`taken_at ${takenAt}, as ${root.href} says`);
  const urls = Object.fromEntries(Object.entries(API_LISTS).map(([k, p]) => [k, new URL(p, root).href])) as Record<ApiListName, string>;
  const lists: Partial<Record<ApiListName, unknown>> = {};
  for (const name of Object.keys(API_LISTS) as ApiListName[]) {
    lists[name] = await getList(urls[name], options);
    log(`read ${urls[name]}: ${(lists[name] as unknown[]).length} ${LIST_NOUNS[name]}`);
  }

  let records: DumpRecords;
  try {
    records = apiToDump(lists as ApiLists, { brand: options.brand, takenAt, name: options.name ?? published.name });
  } catch (err) {
    if (err instanceof ApiShapeError)
      throw new ImportApiError(`${urls[err.list]} ${err.message}; is ${base} the Mesh Network Topology API?`, { cause: err });
    throw err;
  }
  if (published.communityUrl !== undefined) (records.network as Record<string, unknown>).community_url = published.communityUrl;
  const counts = await writeImportedDump(out, records, {
    sources: { accesspoints: urls.accesspoints, links: urls.links },
    verdict: `${base}: the API's data does not make a valid dump`,
    error: (message) => new ImportApiError(message),
    warn: options.warn,
  });
  return {
    ...counts,
    brand: records.brand,
    defaultStatus: records.defaultStatus,
    takenAt,
  };
}

/**
 * What a site built by this tool publishes about its data beside the lists: `taken_at` in its API root,
 * the community's name and address in its Freifunk nodelist. Anything else (the original's root, no
 * nodelist, a value that is not one) is no fact; the mirror then records its own time and no name.
 */
async function publishedFacts(root: URL, options: ImportApiOptions): Promise<{ takenAt?: string; name?: string; communityUrl?: string }> {
  const quiet = { ...requestOf(options), retries: 0 };
  const facts: { takenAt?: string; name?: string; communityUrl?: string } = {};
  const rootJson = (await getJson(root.href, quiet).catch(() => undefined)) as { taken_at?: unknown } | undefined;
  if (typeof rootJson?.taken_at === "string" && typeof parseInstant(rootJson.taken_at) !== "string") facts.takenAt = rootJson.taken_at;
  const nodelist = (await getJson(new URL(fileFor("freifunkNodelist"), root).href, quiet).catch(() => undefined)) as
    { community?: { name?: unknown; href?: unknown } } | undefined;
  if (typeof nodelist?.community?.name === "string" && nodelist.community.name !== "") facts.name = nodelist.community.name;
  if (typeof nodelist?.community?.href === "string" && COMMUNITY_URL_PATTERN.test(nodelist.community.href))
    facts.communityUrl = nodelist.community.href;
  return facts;
}

const MAX_PAGES = 100_000;

/** One list, following Django REST framework's `next` links if the server paginates. */
async function getList(url: string, options: ImportApiOptions): Promise<unknown[]> {
  const items: unknown[] = [];
  const seen = new Set<string>();
  for (let next: string | null = url; next !== null;) {
    if (seen.has(next) || seen.size >= MAX_PAGES) throw new ImportApiError(`${url}: the pages of the list do not end (${next} again)`);
    seen.add(next);
    const page = await getJson(next, requestOf(options));
    if (Array.isArray(page)) {
      items.push(...page);
      next = null;
    } else if (isObj(page) && Array.isArray(page.results) && (page.next === null || typeof page.next === "string")) {
      items.push(...page.results);
      next = page.next === null ? null : new URL(page.next, next).href;
      if (next !== null && new URL(next).origin !== new URL(url).origin)
        throw new ImportApiError(`${url}: the next page ${next} is on another host`);
    } else {
      throw new ImportApiError(`${next}: expected a JSON list, got ${describe(page)}; is this the Mesh Network Topology API?`);
    }
  }
  return items;
}

/** How this command requests: its options, else IMPORT_API_DEFAULTS; failures as its own error. */
function requestOf(options: ImportApiOptions): JsonRequest {
  return {
    timeoutMs: options.timeoutMs ?? IMPORT_API_DEFAULTS.timeoutMs,
    retries: options.retries ?? IMPORT_API_DEFAULTS.retries,
    retryDelayMs: options.retryDelayMs ?? IMPORT_API_DEFAULTS.retryDelayMs,
    maxBytes: options.maxBytes ?? IMPORT_API_DEFAULTS.maxBytes,
    warn: options.warn,
    error: (message) => new ImportApiError(message),
  };
}
