import { existsSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { userInfo } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPreview, type Preview } from "../src/index.ts";
import { rawSources } from "../src/gen/raw.ts";
import { synthesize } from "../src/gen/synth.ts";
import { nginx } from "../src/hosts/nginx.ts";
import { cycle, type CycleResult } from "../src/live/cycle.ts";
import { rawRequest } from "./support/http.ts";
import { NGINX } from "./support/nginx.ts";
import { freePort, spawnServer, type RunningServer } from "./support/served.ts";
import { tempDir } from "./support/tree.ts";

/**
 * Issue 26, serving through swaps: `cycle` runs on a 3,000-access-point synthetic network whose raw
 * sources change from run to run (src/gen/raw.ts), while Debian's nginx (the standalone configuration
 * of `host-config nginx`, its root the link the cycle repoints) and the preview serve the link. A
 * client keeps a bounded stream of requests going to both during three cycles: every answer must be
 * 200 with a complete JSON body, from one build or the other.
 */

const APS = 3000;
const AT = ["2026-11-20T10:00:00Z", "2026-11-20T10:06:00Z", "2026-11-20T10:12:00Z", "2026-11-20T10:18:00Z"];

let dir: string;
let serve: string;
let state: string;
let server: RunningServer;
let preview: Preview;
const results: CycleResult[] = [];
const seconds: number[] = [];
const failures: string[] = [];
const answered = { nginx: 0, preview: 0 };
const sources = (step: number) => ({ olsr: path.join(dir, `olsr-${step}.txt`), wiki: path.join(dir, `wiki-${step}.html`) });

describe("cycle: three runs over changing sources while nginx and the preview serve", () => {
  beforeAll(async () => {
    dir = tempDir();
    const network = synthesize({ aps: APS, seed: 5 });
    for (let step = 0; step < AT.length; step++) {
      const raw = rawSources(network, step, 5);
      writeFileSync(sources(step).olsr, raw.olsr);
      writeFileSync(sources(step).wiki, raw.wiki);
    }
    state = path.join(dir, "state");
    serve = path.join(dir, "www");
    const prefix = tempDir();
    const port = await freePort();
    const file = path.join(prefix, "nginx.conf");
    const run = (step: number) =>
      cycle({
        state,
        serve,
        olsr: { source: sources(step).olsr, every: 1 },
        wiki: { source: sources(step).wiki, every: "changed" },
        sitesEvery: 2,
        at: AT[step],
        keep: 30,
        settings: { brand: "opennet", defaultStatus: "online" },
        host: {
          host: nginx,
          options: { standalone: true, root: serve, port, ...(process.getuid?.() === 0 && { user: `${userInfo().username}:root` }) },
          file,
          test: `${NGINX} -t -q -p ${prefix} -c ${file}`,
          // nginx is started after the first run
          reload: `if [ -s ${prefix}/nginx.pid ]; then kill -HUP "$(cat ${prefix}/nginx.pid)"; fi`,
        },
      });
    const timed = async (step: number) => {
      const started = performance.now();
      const r = await run(step);
      seconds.push((performance.now() - started) / 1000);
      return r;
    };
    results.push(await timed(0));
    server = await spawnServer("nginx", NGINX, ["-p", prefix, "-c", file, "-g", "daemon off;"], port, {
      logs: [path.join(prefix, "error.log")],
      signal: "SIGQUIT",
    });
    preview = await startPreview({ dir: serve, port: 0 });
    const previewPort = Number(new URL(preview.url).port);
    // What every build answers: lists, and details of access points and links that exist from the first run on.
    const first = JSON.parse((await rawRequest(previewPort, "GET", "/api/v1/accesspoint/?status=all")).body.toString("utf8")) as {
      main_ip: string;
    }[];
    const targets = [
      "/api/v1/",
      "/api/v1/accesspoint/",
      "/api/v1/accesspoint/?status=all",
      "/api/v1/accesspoint/?status=online&data_format=geojson",
      "/api/v1/link/?status=all",
      "/api/v1/link/",
      "/api/v1/interface/",
      "/api/v1/site/",
      ...first.slice(0, 40).map((ap) => `/api/v1/accesspoint/${ap.main_ip}`),
      ...first.slice(0, 20).map((ap) => `/api/v1/accesspoint/${ap.main_ip}/links/?status=all`),
      ...[1, 2, 3, 10, 100].map((id) => `/api/v1/link/${id}`),
    ];
    let running = true;
    const client = async (name: keyof typeof answered, port: number, lane: number) => {
      for (let i = lane; running && i < 100_000; i += 4) {
        const target = targets[i % targets.length];
        try {
          const r = await rawRequest(port, "GET", target);
          JSON.parse(r.body.toString("utf8"));
          if (r.status !== 200) failures.push(`${name} ${target}: ${r.status}`);
          answered[name]++;
        } catch (err) {
          failures.push(`${name} ${target}: ${(err as Error).message}`);
        }
        // bounded: a steady client, not a load test that would starve the cycles of the 2 cores
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    const clients = [0, 1, 2, 3].flatMap((lane) => [client("nginx", port, lane), client("preview", previewPort, lane)]);
    try {
      for (let step = 1; step < AT.length; step++) results.push(await timed(step));
    } finally {
      running = false;
      await Promise.all(clients);
    }
  }, 600_000);

  afterAll(async () => {
    await preview?.close();
    await server?.stop();
  });

  it("publishes every run, importing what is due", () => {
    expect(results.map((r) => r.outcome)).toEqual(["published", "published", "published", "published"]);
    expect(results[0].line).toMatch(
      /^cycle 1 at 2026-11-20T10:00:00Z: imported olsr, wiki, sites; 3000 access points, \d+ links, \d+ sites; serving builds\/00000001, snapshot written; nginx configuration updated and reloaded$/,
    );
    // the wiki's file did not change; sites every second run; one new access point a step
    expect(results[1].line).toMatch(/^cycle 2 at 2026-11-20T10:06:00Z: imported olsr; 3001 access points, .*serving builds\/00000002$/);
    expect(results[2].line).toMatch(/^cycle 3 at 2026-11-20T10:12:00Z: imported olsr, sites; 3002 access points/);
    expect(results.map((r) => r.configRefused)).toEqual([undefined, undefined, undefined, undefined]);
  });

  it("answered every request of the stream, on nginx and on the preview, with a complete JSON body", () => {
    console.log(
      `cycle: ${answered.nginx} answers from nginx, ${answered.preview} from the preview during three cycles; ` +
        `the four runs took ${seconds.map((s) => s.toFixed(1)).join(", ")} s`,
    );
    expect(failures.slice(0, 10)).toEqual([]);
    expect(answered.nginx).toBeGreaterThan(100);
    expect(answered.preview).toBeGreaterThan(100);
  });

  it("serves the last build through a link, keeps the one before it, and removes the older ones", () => {
    expect(readlinkSync(serve)).toBe("state/builds/00000004");
    expect(readdirSync(path.join(state, "builds")).filter((n) => !n.startsWith("."))).toEqual(["00000003", "00000004"]);
    expect(JSON.parse(readFileSync(path.join(state, "cycle.json"), "utf8"))).toMatchObject({
      runs: 4,
      sources: { olsr: { run: 4 }, wiki: { run: 1 } },
      sitesRun: 3,
      snapshotDay: "2026-11-20",
      build: "builds/00000004",
    });
    // the snapshot of the day is carried from build to build
    expect(existsSync(path.join(serve, "snapshots/index.json"))).toBe(true);
  });

  it("keeps what OLSR no longer shows, with its last timestamp", async () => {
    const answer = await rawRequest(Number(new URL(preview.url).port), "GET", "/api/v1/link/?status=all");
    const links = JSON.parse(answer.body.toString("utf8")) as { timestamp: string }[];
    const stamps = new Set(links.map((l) => l.timestamp));
    expect(stamps.has("2026-11-20T10:18:00Z")).toBe(true);
    expect([...stamps].some((t) => t < "2026-11-20T10:18:00Z")).toBe(true);
  });
});
