/** What went wrong on the network, in words a user can act on: one function for every command that downloads. */

/**
 * What kept a request from being answered, in words, when `err` is a network error from fetch
 * (undici puts the code on err.cause, sometimes err.cause.cause, or on the errors of an
 * AggregateError); undefined for anything else.
 */
export function describeNetworkError(err: unknown, timeoutMs?: number): string | undefined {
  const chain: { name?: unknown; code?: unknown; message?: unknown }[] = [];
  const visit = (e: unknown, depth: number) => {
    if (!e || typeof e !== "object" || depth > 6) return;
    const x = e as { name?: unknown; code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
    chain.push(x);
    if (Array.isArray(x.errors)) for (const inner of x.errors) visit(inner, depth + 1);
    visit(x.cause, depth + 1);
  };
  visit(err, 0);
  const within = timeoutMs === undefined ? "" : `: no answer within ${timeoutMs >= 1000 ? `${timeoutMs / 1000} s` : `${timeoutMs} ms`}`;
  if (chain.some((e) => e.name === "TimeoutError")) return `timeout${within}`;
  const found = chain.find((e) => typeof e.code === "string");
  const code = found?.code as string | undefined;
  const message = typeof found?.message === "string" ? found.message : "";
  if (code !== undefined) {
    if (code === "ECONNREFUSED") return `connection refused (${code})`;
    if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_FAIL" || code === "EAI_NONAME") return `DNS lookup failed (${code})`;
    if (/^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED|ERR_OSSL)/.test(code) || code === "EPROTO") {
      // OpenSSL's text ("…:SSL routines:ssl3_get_record:wrong version number:…") reduced to its reason.
      const reason = /SSL routines:[^:]*:([^:]+):/.exec(message)?.[1] ?? message.split("\n")[0];
      const plain = /wrong version number|packet length too long|http request/i.test(reason)
        ? "; the server may speak plain http, not https"
        : "";
      return `TLS/certificate error: ${reason ? `${reason} ` : ""}(${code})${plain}`;
    }
    if (code === "ETIMEDOUT" || code === "UND_ERR_CONNECT_TIMEOUT" || code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT")
      return `timeout (${code})`;
    if (code === "ECONNRESET" || code === "EPIPE") return `connection reset (${code})`;
    if (code === "UND_ERR_SOCKET") return `connection closed by the host (${code})`;
    if (code === "EHOSTUNREACH") return `host unreachable (${code})`;
    if (code === "ENETUNREACH") return `network unreachable (${code})`;
  }
  // Any other failure of fetch itself ("fetch failed", or "terminated" while reading a body).
  const top = chain[0];
  if (top?.name === "TypeError" && (top.message === "fetch failed" || top.message === "terminated")) {
    const inner = chain.at(-1);
    if (inner?.message === "bad port") return "fetch refuses to connect to this port, as browsers do (bad port)";
    const text = inner && inner !== top && typeof inner.message === "string" ? inner.message : String(top.message);
    return code ? `${text} (${code})` : text;
  }
  return undefined;
}

/** What stopped a request, in words: the network's reason when there is one, else the error's message; a body that broke off is told by its cause. */
export function networkCause(err: unknown, timeoutMs?: number): string {
  const cause = err instanceof BrokenBody ? err.cause : err;
  return describeNetworkError(cause, timeoutMs) ?? (cause instanceof Error ? cause.message : String(cause));
}

/**
 * Runs `work` with a signal that aborts after `ms` or when `outer` aborts. The signal is the first
 * line; the second is a race that rejects a moment later, because Node 20's fetch can lose its link
 * to a signal under garbage-collection pressure (nodejs/node#55428) and then waits forever: a CI run
 * hung on it. The grace lets work that did see the abort fail with its own, more precise, error.
 */
export async function withDeadline<T>(
  ms: number,
  work: (signal: AbortSignal) => Promise<T>,
  outer?: AbortSignal,
  graceMs = 1000,
): Promise<T> {
  const control = new AbortController();
  const timers: NodeJS.Timeout[] = [];
  let onOuter: (() => void) | undefined;
  const guard = new Promise<never>((_, reject) => {
    const stop = (reason: unknown) => {
      control.abort(reason);
      timers.push(setTimeout(() => reject(reason), graceMs));
    };
    timers.push(setTimeout(() => stop(new DOMException(`no answer within ${ms} ms`, "TimeoutError")), ms));
    if (outer?.aborted) stop(outer.reason);
    else if (outer) outer.addEventListener("abort", (onOuter = () => stop(outer.reason)), { once: true });
  });
  try {
    return await Promise.race([work(control.signal), guard]);
  } finally {
    for (const t of timers) clearTimeout(t);
    if (onOuter) outer?.removeEventListener("abort", onOuter);
  }
}

/** A body read up to a cap: its bytes, or how long it was (declared, or as far as it was read) when it passed the cap. */
export type CappedBody =
  { readonly ok: true; readonly bytes: Buffer } | { readonly ok: false; readonly length: number; readonly declared: boolean };

/** The body broke off (a network error while reading it) after `length` bytes. */
export class BrokenBody extends Error {
  constructor(
    readonly length: number,
    override readonly cause: unknown,
  ) {
    super(`the body broke off after ${length} bytes`);
  }
}

/**
 * Reads a response's body, refusing more than `maxBytes`: a declared length over it at once, else
 * as the bytes come (the rest is cancelled). A network error while reading throws BrokenBody.
 */
export async function readCapped(res: Response, maxBytes: number): Promise<CappedBody> {
  const declared = Number(res.headers.get("content-length") ?? NaN);
  if (declared > maxBytes) {
    await res.body?.cancel().catch(() => {});
    return { ok: false, length: declared, declared: true };
  }
  const chunks: Uint8Array[] = [];
  let length = 0;
  try {
    for await (const chunk of (res.body ?? []) as AsyncIterable<Uint8Array>) {
      length += chunk.byteLength;
      if (length > maxBytes) {
        await res.body?.cancel().catch(() => {});
        return { ok: false, length, declared: false };
      }
      chunks.push(chunk);
    }
  } catch (err) {
    throw new BrokenBody(length, err);
  }
  return { ok: true, bytes: Buffer.concat(chunks) };
}

/** A text source read over HTTP: what stopped it, in words, else its bytes. */
export type FetchedBytes = { readonly ok: true; readonly bytes: Buffer } | { readonly ok: false; readonly reason: string };

/**
 * GETs `url` within `timeoutMs` (the body included), refusing more than `maxBytes`: for the live
 * sources an import reads on every run, where a stalled router must not hold the cycle.
 */
export async function fetchBytes(url: string, timeoutMs: number, maxBytes: number): Promise<FetchedBytes> {
  try {
    return await withDeadline(timeoutMs, async (signal) => {
      const res = await fetch(url, { signal, redirect: "follow" });
      if (!res.ok) {
        await res.body?.cancel();
        return { ok: false, reason: `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ""}` } as const;
      }
      const body = await readCapped(res, maxBytes);
      return body.ok
        ? ({ ok: true, bytes: body.bytes } as const)
        : ({ ok: false, reason: `the answer is longer than ${maxBytes} bytes` } as const);
    });
  } catch (err) {
    return { ok: false, reason: networkCause(err, timeoutMs) };
  }
}
