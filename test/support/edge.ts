import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { edgeFunction, edgeToml } from "../../src/hosts/netlify-edge.ts";
import { loadNetlify, serveNetlify } from "./netlify.ts";
import { freePort, spawnServer, type RunningServer } from "./served.ts";
import { tempDir } from "./tree.ts";

/**
 * Deno from the npm registry (the `deno` package carries the binary in @deno/<platform>): nothing is
 * downloaded at run time. The binary itself, found by the package's own resolver, not its `bin.cjs`:
 * that wrapper runs Deno as its child, and stopping the wrapper left Deno serving after the tests.
 */
export const DENO: string = (createRequire(import.meta.url)("deno/install_api.cjs") as { runInstall(): string }).runInstall();
export const STANDIN = new URL("../deno/standin.ts", import.meta.url).pathname;

/**
 * A build deployed to Netlify with the edge function, offline: the module `host-config netlify-edge`
 * writes runs in Deno behind the stand-in of Netlify's edge (test/deno/standin.ts), whose origin is
 * Netlify's own redirect engine on the build's files with the netlify.toml it prints (test/support/netlify.ts).
 */
export async function startEdge(root: string): Promise<RunningServer> {
  const dir = tempDir();
  const fn = path.join(dir, "mesh-api.js");
  writeFileSync(fn, edgeFunction());
  const config = path.join(dir, "netlify.toml");
  writeFileSync(config, edgeToml());
  const origin = await serveNetlify(await loadNetlify(config, root));
  const port = await freePort();
  const deno = await spawnServer(
    "deno",
    DENO,
    ["run", "--quiet", "--no-prompt", "--allow-net=127.0.0.1", `--allow-read=${dir}`, STANDIN, fn, origin.url, String(port)],
    port,
    { env: { ...process.env, DENO_NO_UPDATE_CHECK: "1", DENO_DIR: path.join(dir, "deno-cache"), NO_COLOR: "1" } },
  );
  return {
    port,
    stop: async () => {
      await deno.stop();
      await origin.close();
    },
  };
}
