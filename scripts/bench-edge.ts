import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { edgeFunction, edgeToml } from "../src/hosts/netlify-edge.ts";
import { requestsFromTree } from "../src/publish/deployment.ts";

/**
 * Netlify's edge function on one build (issue 30): the deploy's files (the function and its
 * netlify.toml, the same for every network) and the rules they hold, and the function's time per
 * request. The function runs in this process on the bundle as deployed, with a context whose
 * `next()` reads the build's files, so what is timed is the function's own work and a read from the
 * page cache, against the 50 ms of CPU Netlify allows: per request, over every request `check`
 * recovers from the build (up to `limit`, spread evenly), after one warm-up pass. The figures are the
 * function's own time, without the time its `next()` took (Netlify counts the function's CPU, not
 * the wait for the origin's answer; reading a 54 MB list here took tens of milliseconds); the
 * slowest request with that read is kept apart (`maxWithNextMs`).
 */
export interface EdgeRow {
  accesspoints: number;
  functionBytes: number;
  tomlBytes: number;
  /** redirect rules of the deploy: none, whatever the network */
  rules: number;
  requests: number;
  medianMs: number;
  p99Ms: number;
  maxMs: number;
  /** the slowest request with the time its next() took: a read of the file from the page cache */
  maxWithNextMs: number;
  limitMs: 50;
}

interface Module {
  default(request: Request, context: { next(request?: Request): Promise<Response> }): Promise<Response | undefined>;
}

export async function edgeRow(accesspoints: number, dist: string, work: string, limit = 20_000): Promise<EdgeRow> {
  const source = edgeFunction();
  const file = path.join(work, `edge-${accesspoints}.mjs`);
  writeFileSync(file, source);
  // A fresh module per build: the function keeps the routing it read for the instance's life.
  const fn = ((await import(`${pathToFileURL(file).href}?${accesspoints}`)) as Module).default;
  const all = await requestsFromTree(dist);
  const step = Math.max(1, Math.ceil(all.length / limit));
  const targets = all.filter((_, i) => i % step === 0).map((r) => r.target);
  // Read when asked (a 40,000-access-point list is tens of MB; the warm-up pass leaves them in the
  // page cache): the time of a request includes reading its file there, an upper bound of the work.
  const read = (pathname: string): Buffer | undefined => {
    try {
      return readFileSync(path.join(dist, decodeURIComponent(pathname)));
    } catch {
      return undefined;
    }
  };
  let inNext = 0; // of the request being timed
  const context = (request: Request) => ({
    next: async (next?: Request) => {
      const started = performance.now();
      const { pathname } = new URL((next ?? request).url);
      const body = read(pathname);
      const response = body === undefined ? new Response(null, { status: 404 }) : new Response(body);
      inNext += performance.now() - started;
      return response;
    },
  });
  const run = async (target: string) => {
    const request = new Request(`https://mesh.example${target}`);
    inNext = 0;
    const started = performance.now();
    const r = await fn(request, context(request));
    const ms = performance.now() - started;
    await r?.arrayBuffer();
    return { own: ms - inNext, all: ms };
  };
  for (const t of targets) await run(t); // warm-up: the routing read, the files in memory, the code compiled
  const runs: { own: number; all: number }[] = [];
  for (const t of targets) runs.push(await run(t));
  const times = runs.map((r) => r.own).sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))];
  const toml = edgeToml();
  return {
    accesspoints,
    functionBytes: Buffer.byteLength(source),
    tomlBytes: Buffer.byteLength(toml),
    rules: (toml.match(/^\[\[redirects\]\]/gm) ?? []).length,
    requests: times.length,
    medianMs: Math.round(at(0.5) * 1000) / 1000,
    p99Ms: Math.round(at(0.99) * 1000) / 1000,
    maxMs: Math.round(times[times.length - 1] * 1000) / 1000,
    maxWithNextMs: Math.round(Math.max(...runs.map((r) => r.all)) * 1000) / 1000,
    limitMs: 50,
  };
}
