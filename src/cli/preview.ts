import type { Command } from "commander";
import { startPreview } from "../serve/preview.ts";
import { port, quietOption } from "./options.ts";

export function register(program: Command): void {
  program
    .command("preview")
    .description("serve the build like the static host does, on a local address")
    .option("--dir <dir>", "build output to serve", "dist")
    .option("--port <port>", "port (0 picks a free one)", port, 8080)
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .addOption(quietOption())
    .action(async (opts: { dir: string; port: number; host: string; quiet?: boolean }) => {
      process.noDeprecation = true; // http-server's router touches OutgoingMessage._headers on every request
      const preview = await startPreview({ ...opts, log: opts.quiet ? undefined : (line) => process.stderr.write(line + "\n") });
      process.stdout.write(`serving ${opts.dir} at ${preview.url}/api/v1/\n`);
      const stop = () => void preview.close().then(() => process.exit(0));
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
}
