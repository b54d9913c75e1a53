import { connect } from "node:net";

/** A raw HTTP/1.1 exchange over a socket: the target goes out byte for byte, as the reference crawler sent it. */
export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

export function rawRequest(
  port: number,
  method: string,
  target: string | Buffer,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (c) => chunks.push(c));
    socket.on("error", reject);
    socket.on("end", () => {
      const all = Buffer.concat(chunks);
      const split = all.indexOf("\r\n\r\n");
      if (split < 0) return reject(new Error(`no HTTP response for ${method} ${String(target).slice(0, 80)}`));
      const [statusLine, ...lines] = all.subarray(0, split).toString("latin1").split("\r\n");
      const out: Record<string, string> = {};
      for (const line of lines) {
        const i = line.indexOf(":");
        out[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      const raw = all.subarray(split + 4);
      resolve({
        status: Number(statusLine.split(" ")[1]),
        headers: out,
        body: /chunked/i.test(out["transfer-encoding"] ?? "") ? dechunked(raw) : raw,
      });
    });
    const head = Object.entries({ Host: "127.0.0.1", Connection: "close", ...headers })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join("");
    // Not end(): a half-closed socket lets the server drop a response it is still preparing.
    socket.write(Buffer.concat([Buffer.from(`${method} `), Buffer.from(target), Buffer.from(` HTTP/1.1\r\n${head}\r\n`)]));
  });
}

/** Runs `fn` over `items` with at most `limit` at a time, keeping result order. */
export async function pool<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await fn(items[i]);
      }
    }),
  );
  return results;
}

/** A chunked body's payload (RFC 9112, 7.1): Caddy sends a precompressed file so, without its length. */
function dechunked(raw: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = raw.indexOf("\r\n", at);
    if (eol < 0) throw new Error("a chunked body without its last chunk");
    const size = parseInt(raw.subarray(at, eol).toString("latin1").split(";")[0], 16);
    if (!Number.isFinite(size)) throw new Error("a chunk without its size");
    if (size === 0) return Buffer.concat(parts);
    parts.push(raw.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}
