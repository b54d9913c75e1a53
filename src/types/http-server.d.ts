// The parts of http-server 14's programmatic API the preview uses (its own typings are outdated).
declare module "http-server" {
  import type { IncomingMessage, Server, ServerResponse } from "node:http";
  export interface Options {
    root?: string;
    cache?: number;
    showDir?: "true" | "false";
    autoIndex?: "true" | "false";
    gzip?: boolean;
    brotli?: boolean;
    headers?: Record<string, string>;
    before?: ((req: IncomingMessage, res: ServerResponse & { emit(event: "next"): boolean }) => void)[];
  }
  export interface HttpServer {
    server: Server;
  }
  const httpServer: { createServer(options?: Options): HttpServer };
  export default httpServer;
}
