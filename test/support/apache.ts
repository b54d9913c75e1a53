import { chmodSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { apacheConfig } from "../../src/hosts/apache.ts";
import type { PlaceholderValues } from "../../src/core/plan.ts";
import { freePort, spawnServer, type RunningServer } from "./served.ts";
import { tempDir } from "./tree.ts";

/** Debian's Apache httpd; scripts/test-deps.mjs installs it for `npm test`. */
export const APACHE = process.env.MESH_API_APACHE ?? "/usr/sbin/apache2";

/** Debian's user for Apache: as root, Apache refuses to serve as root, and this user must read the build. */
const DEBIAN_USER = "www-data";

/**
 * Apache in the foreground (`-X`, one process) as a child process, serving `root` with the standalone
 * configuration `mesh-api host-config apache --standalone` prints for these values (or, with `vhost`,
 * the block it prints without --standalone, in a <VirtualHost>); everything it
 * writes stays in a temporary folder (its ServerRoot), and no system service is touched.
 */
export async function startApache(root: string, values: PlaceholderValues, options: { vhost?: boolean } = {}): Promise<RunningServer> {
  const prefix = tempDir();
  const port = await freePort();
  const config = path.join(prefix, "apache2.conf");
  const asRoot = process.getuid?.() === 0;
  if (asRoot) traversable(root);
  const user = asRoot ? { user: { name: DEBIAN_USER, group: DEBIAN_USER } } : {};
  const standalone = apacheConfig(values, { standalone: { root, port, prefix, ...user } });
  if (!options.vhost) writeFileSync(config, standalone);
  else {
    // As docs/hosting.md shows it: the block `host-config apache --data` prints, included in the operator's <VirtualHost>.
    const block = path.join(prefix, "mesh-api.conf");
    writeFileSync(block, apacheConfig(values));
    const server = standalone.slice(0, standalone.indexOf("\nRewriteEngine On\n"));
    const vhost = [
      `<VirtualHost 127.0.0.1:${port}>`,
      "  ServerName mesh.example",
      `  DocumentRoot "${root}"`,
      `  Include "${block}"`,
      "</VirtualHost>",
    ];
    writeFileSync(config, [server, ...vhost, ""].join("\n"));
  }
  return spawnServer("apache", APACHE, ["-X", "-d", prefix, "-f", config], port, { logs: [path.join(prefix, "error.log")] });
}

/** Lets other users reach `dir`: the test's temporary folders are private (mode 0700); folders others can enter are left alone. */
function traversable(dir: string): void {
  for (let d = path.resolve(dir); d !== path.dirname(d); d = path.dirname(d)) {
    const mode = statSync(d).mode & 0o7777;
    if ((mode & 0o005) !== 0o005) chmodSync(d, mode | 0o005);
  }
}
