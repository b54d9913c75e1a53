import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { caddyConfig } from "../../src/hosts/caddy.ts";
import type { PlaceholderValues } from "../../src/core/plan.ts";
import { freePort, spawnServer, type RunningServer } from "./served.ts";
import { tempDir } from "./tree.ts";

/** Debian's caddy; scripts/test-deps.mjs installs it for `npm test`. */
export const CADDY = process.env.MESH_API_CADDY ?? "/usr/bin/caddy";

/**
 * Caddy in the foreground as a child process, serving `root` with the standalone Caddyfile
 * `mesh-api host-config caddy --standalone` prints for these values. Caddy saves its configuration
 * and storage under XDG_CONFIG_HOME and XDG_DATA_HOME (HOME without them): all three point into a
 * temporary folder, and no system service is touched.
 */
export async function startCaddy(root: string, values: PlaceholderValues): Promise<RunningServer> {
  const dir = tempDir();
  const port = await freePort();
  const config = path.join(dir, "Caddyfile");
  writeFileSync(config, caddyConfig(values, { standalone: { root, port } }));
  const env = {
    ...process.env,
    HOME: path.join(dir, "home"),
    XDG_CONFIG_HOME: path.join(dir, "config"),
    XDG_DATA_HOME: path.join(dir, "data"),
  };
  for (const d of [env.HOME, env.XDG_CONFIG_HOME, env.XDG_DATA_HOME]) mkdirSync(d, { recursive: true });
  return spawnServer("caddy", CADDY, ["run", "--config", config, "--adapter", "caddyfile"], port, { env, signal: "SIGTERM" });
}
