import { BrokenBody, type CappedBody, networkCause, readCapped, withDeadline } from "./net.ts";

/**
 * The HTTP client of the commands that read JSON from a server (import api): a time limit per
 * request (the body included), a cap on the body, retries with a doubling wait after a 5xx answer
 * or a network error, and every failure in words. Each command makes its own error of the message
 * (`error`), so that it carries the command's exit class.
 */

export interface JsonRequest {
  /** per request, body included */
  readonly timeoutMs: number;
  /** further tries after a 5xx answer or a network error */
  readonly retries: number;
  /** the wait before the first retry, doubled for each further one */
  readonly retryDelayMs: number;
  /** the largest body accepted */
  readonly maxBytes: number;
  /** told of each failed try that is tried again */
  readonly warn?: (line: string) => void;
  /** the command's error for a request that failed for good (`<url>: <why>`) */
  readonly error: (message: string) => Error;
}

/** Fails one try; `retry` says whether another may help (5xx, network errors, time-outs). */
class Attempt extends Error {
  constructor(
    message: string,
    readonly retry: boolean,
  ) {
    super(message);
  }
}

/** GETs `url` as JSON, trying again as `request` allows; the answer parsed. */
export async function getJson(url: string, request: JsonRequest): Promise<unknown> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await tryGetJson(url, request);
    } catch (err) {
      if (!(err instanceof Attempt)) throw err;
      if (!err.retry || attempt >= request.retries) {
        const tries = attempt > 0 ? ` (after ${attempt + 1} tries)` : "";
        throw request.error(`${url}: ${err.message}${tries}`);
      }
      request.warn?.(`${url}: ${err.message}; trying again`);
      await new Promise((r) => setTimeout(r, request.retryDelayMs * 2 ** attempt));
    }
  }
}

async function tryGetJson(url: string, request: JsonRequest): Promise<unknown> {
  const network = (err: unknown) => new Attempt(networkCause(err, request.timeoutMs), true);
  return withDeadline(request.timeoutMs, (signal) => getJsonOnce(url, request.maxBytes, signal, network)).catch((err: unknown) => {
    throw err instanceof Attempt ? err : network(err);
  });
}

async function getJsonOnce(url: string, maxBytes: number, signal: AbortSignal, network: (err: unknown) => Attempt): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: "application/json" }, redirect: "follow", signal });
  } catch (err) {
    throw network(err);
  }
  const type = res.headers.get("content-type") ?? "";
  if (res.status !== 200) {
    await res.body?.cancel().catch(() => {});
    const hint = res.status === 404 ? "; is this the base URL of the Mesh Network Topology API?" : "";
    throw new Attempt(`HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ""}${hint}`, res.status >= 500);
  }
  if (!/^application\/(?:[\w.+-]*\+)?json\b/i.test(type.trim())) {
    await res.body?.cancel().catch(() => {});
    throw new Attempt(`answered ${type || "no Content-Type"}, not JSON; is this the base URL of the Mesh Network Topology API?`, false);
  }
  let body: CappedBody;
  try {
    body = await readCapped(res, maxBytes);
  } catch (err) {
    if (!(err instanceof BrokenBody)) throw err;
    throw new Attempt(`the answer broke off after ${err.length} bytes: ${network(err.cause).message}`, true);
  }
  if (!body.ok)
    throw new Attempt(
      body.declared
        ? `the answer is ${body.length} bytes, more than --max-bytes ${maxBytes}`
        : `the answer is longer than --max-bytes ${maxBytes}`,
      false,
    );
  try {
    return JSON.parse(body.bytes.toString("utf8"));
  } catch (err) {
    throw new Attempt(`the answer is not valid JSON (${(err as Error).message}) after ${body.bytes.length} bytes`, false);
  }
}
