import { stat } from "node:fs/promises";
import type { Command } from "commander";
import { DEFAULTS } from "../core/defaults.ts";
import { startPreview, type Preview } from "../serve/server.ts";
import { MARKER, owned } from "../io/write/ownership.ts";
import { UsageError } from "./exit.ts";
import { port, quietOption } from "./options.ts";

export function register(program: Command): void {
  program
    .command("preview")
    .description("serve the build like the static host does, on a local address")
    .option("--dir <dir>", "build output to serve", DEFAULTS.dist)
    .option("--port <port>", "port (0 picks a free one)", port, DEFAULTS.port)
    .option("--host <host>", "address to listen on", DEFAULTS.host)
    .addOption(quietOption())
    .action(async (opts: { dir: string; port: number; host: string; quiet?: boolean }) => {
      process.noDeprecation = true; // http-server's router touches OutgoingMessage._headers on every request
      let preview: Preview;
      if (!(await stat(opts.dir).catch(() => undefined))?.isDirectory()) {
        throw new UsageError(`nothing to serve: ${opts.dir} is not a folder; run build first, or name the build's folder with --dir`);
      }
      // Any other folder would be served as if it were the API: its 404s and missing files would mislead.
      if ((await owned(opts.dir).catch(() => undefined)) !== "build")
        throw new UsageError(
          `nothing to serve: ${opts.dir} holds no build of mesh-api (no ${MARKER} file in it); run build --out ${opts.dir} first, or name the build's folder with --dir`,
        );
      try {
        preview = await startPreview({ ...opts, log: opts.quiet ? undefined : (line) => process.stderr.write(line + "\n") });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE") throw err;
        throw new UsageError(`port ${opts.port} is in use; choose another with --port, or --port 0 for any free port`);
      }
      process.stdout.write(`serving ${opts.dir} at ${preview.url}/ (the API root: ${preview.url}/api/v1/)\n`);
      const stop = () => void preview.close().then(() => process.exit(0));
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
}
