import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { describe, expect, it } from "vitest";
import { readExpected } from "./support/expected.ts";
import { rawRequest } from "./support/http.ts";
import { sharedBuild } from "./support/shared.ts";
import { cliArgs, ROOT } from "./support/tree.ts";

/**
 * The preview under a bounded load of valid requests, unknown paths, bad encodings and odd methods:
 * no 5xx, no crash, and its memory stays flat after warm-up (RSS growth under 50 MB).
 */
const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;

describe("preview under load and abuse", () => {
  it("serves a mixed load with zero 5xx, zero crashes and flat memory", async () => {
    const { out } = await sharedBuild("public");
    const child = spawn(process.execPath, [...cliArgs(), "preview", "--dir", out, "--port", "0", "-q"], { cwd: ROOT });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on("data", (c: Buffer) => {
          const m = /(http:\/\/\S+?)\/api\/v1\//.exec(c.toString());
          if (m) resolve(m[1]);
        });
        child.on("exit", (code) => reject(new Error(`preview exited ${code}`)));
      });
      const port = Number(new URL(url).port);
      const valid = readExpected().map((e) => e.path);
      const abusive = [
        "/api/v1/nothing",
        "/api/v1/link/%E0%A4%A",
        "/api/v1/accesspoint/..%2f..%2f",
        "/api/v1/link/1%00",
        "/api/v1/" + "z".repeat(5000),
        "/api/v1/interface/?wifi_ssid=%ZZ",
      ];
      const methods = ["GET", "GET", "GET", "HEAD", "OPTIONS", "POST", "DELETE"];
      const agent = new Agent({ keepAlive: true, maxSockets: 16 });
      const statuses = new Map<number, number>();
      let i = 0;
      const one = (): Promise<void> => {
        const n = i++;
        const target = n % 5 === 4 ? abusive[n % abusive.length] : valid[(n * 7919) % valid.length];
        const method = methods[n % methods.length];
        if (n % 50 === 0)
          return rawRequest(port, "BREW", target).then((r) => void statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1));
        return new Promise<void>((resolve, reject) => {
          const req = request({ host: "127.0.0.1", port, path: target, method, agent }, (res) => {
            statuses.set(res.statusCode!, (statuses.get(res.statusCode!) ?? 0) + 1);
            res.resume();
            res.on("end", resolve);
          });
          req.on("error", reject);
          req.end();
        });
      };
      const run = async (ms: number) => {
        const until = Date.now() + ms;
        await Promise.all(
          Array.from({ length: 16 }, async () => {
            while (Date.now() < until) await one();
          }),
        );
      };
      await run(2000); // warm-up
      const warm = rssMiB(child.pid!);
      const before = i;
      await run(5000);
      const after = rssMiB(child.pid!);
      agent.destroy();
      expect(i - before).toBeGreaterThan(2000);
      expect([...statuses.keys()].filter((s) => s >= 500)).toEqual([]);
      expect(child.exitCode).toBeNull();
      expect(after - warm).toBeLessThan(50);
      expect(statuses.get(200)).toBeGreaterThan(1000);
      expect(statuses.get(405)).toBeGreaterThan(100);
    } finally {
      child.kill();
    }
  }, 60_000);
});
