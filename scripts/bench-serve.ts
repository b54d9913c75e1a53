import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { nginxConfig } from "../src/hosts/nginx.ts";
import { validate } from "../src/pipeline.ts";
import { requestsFromTree } from "../src/publish/deployment.ts";
import { freePort } from "../test/support/port.ts";

/**
 * How fast a self-hosted server answers a build, against the preview: each server as a process of
 * its own on a loopback port, the same client (keep-alive, CONCURRENCY requests in flight) asking for
 * every response of the build (the route table's requests recovered from its files), the servers in
 * turn, ROUNDS times, so that a slow spell of the machine does not favour one. The figure is the
 * ratio of the medians; absolute rates depend on the machine, and the client shares its cores.
 */
const CONCURRENCY = 16;
const ROUNDS = 3;

export interface ServingRow {
  readonly accesspoints: number;
  readonly requests: number;
  readonly concurrency: number;
  readonly rounds: number;
  readonly previewRequestsPerSecond: number;
  readonly nginxRequestsPerSecond: number;
  /** nginx's rate over the preview's */
  readonly nginxOverPreview: number;
}

export const NGINX = process.env.MESH_API_NGINX ?? "/usr/sbin/nginx";

/** Starts a server process and waits until it answers HTTP on `port`. */
async function start(program: string, args: string[], port: number): Promise<() => Promise<void>> {
  const child: ChildProcess = spawn(program, args, { stdio: ["ignore", "ignore", "inherit"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const agent = new http.Agent();
  for (let i = 0; ; i++) {
    if (child.exitCode !== null || i > 400) {
      child.kill("SIGKILL");
      throw new Error(`${program} did not start`);
    }
    const up = await get(agent, port, "/").then(
      () => true,
      () => false,
    );
    if (up) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  agent.destroy();
  return async () => {
    if (child.exitCode === null) child.kill("SIGQUIT");
    await exited;
  };
}

function get(agent: http.Agent, port: number, target: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: "127.0.0.1", port, path: target, agent }, (res) => {
      res.resume();
      res.once("end", () => resolve(res.statusCode ?? 0));
      res.once("error", reject);
    });
    req.once("error", reject);
  });
}

/** Requests per second for every target once, CONCURRENCY at a time over keep-alive connections. */
async function rate(port: number, targets: readonly string[]): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  let next = 0;
  let failed = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < targets.length) if ((await get(agent, port, targets[next++])) !== 200) failed++;
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  if (failed) throw new Error(`${failed} of ${targets.length} requests did not answer 200 on port ${port}`);
  return targets.length / seconds;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The serving row for the build of `data` in `out`; null when nginx is not installed. */
export async function servingRates(data: string, out: string, accesspoints: number): Promise<ServingRow | null> {
  if (!existsSync(NGINX)) return null;
  const { values } = await validate({ data });
  if (!values) throw new Error(`${data} did not validate`);
  const targets = (await requestsFromTree(out)).map((r) => r.target);
  const prefix = mkdtempSync(path.join(os.tmpdir(), "mesh-bench-nginx-"));
  const root = new URL("../", import.meta.url).pathname;
  try {
    const [previewPort, nginxPort] = [await freePort(), await freePort()];
    const config = path.join(prefix, "nginx.conf");
    const me = os.userInfo().username;
    const user = process.getuid?.() === 0 ? { user: { name: me, group: me } } : {};
    writeFileSync(config, nginxConfig(values, { standalone: { root: out, port: nginxPort, prefix, ...user } }));
    const stops = [
      await start(
        process.execPath,
        ["--import", "tsx", path.join(root, "src/cli/main.ts"), "preview", "--quiet", "--dir", out, "--port", String(previewPort)],
        previewPort,
      ),
      await start(NGINX, ["-p", prefix, "-c", config, "-g", "daemon off;"], nginxPort),
    ];
    try {
      await rate(previewPort, targets.slice(0, 500)); // warm both up (JIT, page cache)
      await rate(nginxPort, targets.slice(0, 500));
      const preview: number[] = [];
      const nginx: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        preview.push(await rate(previewPort, targets));
        nginx.push(await rate(nginxPort, targets));
      }
      const [p, n] = [median(preview), median(nginx)];
      return {
        accesspoints,
        requests: targets.length,
        concurrency: CONCURRENCY,
        rounds: ROUNDS,
        previewRequestsPerSecond: Math.round(p),
        nginxRequestsPerSecond: Math.round(n),
        nginxOverPreview: Math.round((n / p) * 100) / 100,
      };
    } finally {
      for (const stop of stops) await stop();
    }
  } finally {
    // nginx's configuration and logs: too few inodes for the measured commands after to notice (scripts/bench-disk.ts)
    rmSync(prefix, { recursive: true, force: true });
  }
}
