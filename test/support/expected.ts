import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { fileFor, parseRequest, parseRouting, resolve } from "../../src/core/routes.ts";
import { isParseableVersion } from "../../src/core/values/version.ts";

/** The recorded responses of the original server, and the comparison rule the reference README defines. */

export interface Expected {
  readonly path: string;
  readonly status: number;
  readonly body: unknown;
  readonly match: "exact" | "not_found" | "empty_or_not_found" | "exact_or_not_found" | "redirect_or_same";
  readonly source_seq: number;
  readonly why?: string;
}

export const PUBLIC_SAMPLE = new URL("../fixtures/public-sample/", import.meta.url).pathname;

export function readExpected(file = `${PUBLIC_SAMPLE}expected.ndjson.gz`): Expected[] {
  return gunzipSync(readFileSync(file))
    .toString("utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Expected);
}

/** JSON equality where lists are multisets and numbers compare to 12 significant digits. */
export function canonical(value: unknown): string {
  if (typeof value === "number") return `n${Number(value.toPrecision(12))}`;
  if (Array.isArray(value)) return `[${value.map(canonical).sort().join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

export interface Answer {
  readonly status: number;
  readonly body?: string;
  readonly location?: string;
}

const NOT_FOUND = canonical({ detail: "Not found." });
const NOT_JSON = Symbol("not JSON");

/** Returns undefined when the answer satisfies the expectation, else a short description of the mismatch. */
export function mismatch(e: Expected, a: Answer): string | undefined {
  let value: { readonly json: unknown } | undefined;
  const parsed = () => {
    if (!value)
      try {
        value = { json: a.body === undefined ? undefined : (JSON.parse(a.body) as unknown) };
      } catch {
        value = { json: NOT_JSON };
      }
    return value.json;
  };
  let canonicalBody: string | undefined;
  const body = () => {
    const json = parsed();
    return (canonicalBody ??= json === undefined ? "(no body)" : json === NOT_JSON ? "(not JSON)" : canonical(json));
  };
  // The same JSON in the same order is the same canonical form; comparing that first spares the
  // canonical forms (sorted lists) of most answers, which were most of a replay's comparisons.
  const sameJson = () => {
    const json = parsed();
    return json !== undefined && json !== NOT_JSON && JSON.stringify(json) === JSON.stringify(e.body);
  };
  const isNotFound = a.status === 404 && body() === NOT_FOUND;
  const isExact = a.status === e.status && (sameJson() || body() === canonical(e.body));
  let ok: boolean;
  switch (e.match) {
    case "exact":
      ok = isExact;
      break;
    case "not_found":
      ok = isNotFound;
      break;
    case "empty_or_not_found":
      ok = isNotFound || (a.status === 200 && body() === "[]");
      break;
    case "exact_or_not_found":
      ok = isExact || isNotFound;
      break;
    case "redirect_or_same": {
      const target = e.path.includes("?") ? e.path.replace("?", "/?") : `${e.path}/`;
      ok =
        isExact ||
        ([301, 302, 308].includes(a.status) &&
          a.location !== undefined &&
          new URL(a.location, "http://x").pathname + new URL(a.location, "http://x").search === target);
      break;
    }
  }
  return ok ? undefined : `${e.match} ${e.path}: got ${a.status} ${(a.body ?? "").slice(0, 120)}`;
}

export const EXPECTED_OPENNET = `${PUBLIC_SAMPLE}expected-opennet.ndjson.gz`;

/**
 * What Netlify's engine cannot answer, by rule (docs/hosting.md, "What each host answers"): it cannot
 * test a value against a pattern, so an unparseable `firmware_version__after` bound that is not in the
 * data gets its JSON 404 where the preview answers every non-null version. Undefined when the answer
 * is not that limit.
 */
export function netlifyLimit(e: Expected, a: Answer): string | undefined {
  const bound = parseRequest(e.path)?.params.get("firmware_version__after");
  if (bound && !isParseableVersion(bound) && mismatch({ ...e, match: "not_found" }, a) === undefined)
    return "an unparseable firmware bound";
  return undefined;
}

/**
 * Answers from a build's files, as a host following the route table gives them: the file a request
 * resolves to (with the build's filter aliases), a redirect, or the JSON 404.
 */
export function answerFromBuild(out: string): (target: string) => Answer {
  const routing = parseRouting(readFileSync(out + fileFor("aliases"), "utf8"));
  const notFound = () => ({ status: 404, body: readFileSync(out + fileFor("notFound"), "utf8") });
  return (target) => {
    const req = parseRequest(target);
    const r = req ? resolve(req, routing) : ({ type: "not-found" } as const);
    if (r.type === "redirect") return { status: 301, location: r.location };
    if (r.type === "not-found") return notFound();
    try {
      return { status: 200, body: readFileSync(out + r.file, "utf8") };
    } catch {
      return notFound();
    }
  };
}
