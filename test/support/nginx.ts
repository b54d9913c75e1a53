import { writeFileSync } from "node:fs";
import { userInfo } from "node:os";
import path from "node:path";
import { nginxConfig } from "../../src/hosts/nginx.ts";
import type { PlaceholderValues } from "../../src/core/plan.ts";
import { freePort, spawnServer, type RunningServer } from "./served.ts";
import { tempDir } from "./tree.ts";

/** Debian's nginx; scripts/test-deps.mjs installs it for `npm test`. */
export const NGINX = process.env.MESH_API_NGINX ?? "/usr/sbin/nginx";

/**
 * nginx in the foreground as a child process, serving `root` with the standalone configuration
 * `mesh-api host-config nginx --standalone` prints for these values; everything it writes stays in
 * a temporary folder, and no system service is touched.
 */
export async function startNginx(root: string, values: PlaceholderValues): Promise<RunningServer> {
  const prefix = tempDir();
  const port = await freePort();
  const config = path.join(prefix, "nginx.conf");
  writeFileSync(
    config,
    nginxConfig(values, {
      standalone: {
        root,
        port,
        prefix,
        ...(process.getuid?.() === 0 && { user: { name: userInfo().username, group: userInfo().username } }),
      },
    }),
  );
  return spawnServer("nginx", NGINX, ["-p", prefix, "-c", config, "-g", "daemon off;"], port, {
    logs: [path.join(prefix, "error.log")],
    signal: "SIGQUIT",
  });
}
