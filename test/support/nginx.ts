import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, connect } from "node:net";
import { userInfo } from "node:os";
import path from "node:path";
import { nginxConfig } from "../../src/hosts/nginx.ts";
import type { PlaceholderValues } from "../../src/core/plan.ts";
import { tempDir } from "./tree.ts";

/** Debian's nginx; scripts/test-deps.mjs installs it for `npm test`. */
export const NGINX = process.env.MESH_API_NGINX ?? "/usr/sbin/nginx";

export interface RunningNginx {
  readonly port: number;
  /** the folder holding its configuration, pid, log and temporary files */
  readonly prefix: string;
  readonly config: string;
  stop(): Promise<void>;
}

/** A free loopback port: one the system hands out, released for nginx to take. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });
}

/**
 * nginx in the foreground as a child process, serving `root` with the standalone configuration
 * `mesh-api host-config nginx --standalone` prints for these values; everything it writes stays in
 * a temporary folder, and no system service is touched.
 */
export async function startNginx(root: string, values: PlaceholderValues): Promise<RunningNginx> {
  const prefix = tempDir();
  const port = await freePort();
  const config = path.join(prefix, "nginx.conf");
  writeFileSync(
    config,
    nginxConfig(values, { standalone: { root, port, prefix, ...(process.getuid?.() === 0 && { user: userInfo().username }) } }),
  );
  const child: ChildProcess = spawn(NGINX, ["-p", prefix, "-c", config, "-g", "daemon off;"], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  for (let i = 0; ; i++) {
    if (child.exitCode !== null || i > 200) {
      const log = path.join(prefix, "error.log");
      child.kill();
      throw new Error(`nginx did not start: ${stderr}${existsSync(log) ? readFileSync(log, "utf8") : ""}`);
    }
    if (await answers(port)) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  return {
    port,
    prefix,
    config,
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGQUIT");
      await exited;
    },
  };
}
