import { cpSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkDeployment, parseBaseUrl, requestsFromTree, UnreachableError } from "../src/publish/deployment.ts";
import { UrlError } from "../src/core/values/url.ts";
import { unkey } from "../src/core/values/names.ts";
import { describeNetworkError, withDeadline } from "../src/io/read/net.ts";
import { build, startPreview, type Preview } from "../src/index.ts";
import { fileKey } from "../src/core/values/names.ts";
import { RULES } from "../src/core/routes.ts";
import { OUTPUT_RECORDS, OUTPUT_ROUTES } from "../src/core/outputs/derived.ts";
import { PUBLIC_SAMPLE } from "./support/expected.ts";
import { command, tempDir } from "./support/tree.ts";
import { FREIFUNK_API_SETTINGS } from "./support/site.ts";

/** `mesh-api check` against the preview: identical for the build itself, named routes for an altered copy. */

let out: string;
let altered: string;
let good: Preview;
let bad: Preview;

beforeAll(async () => {
  out = path.join(tempDir(), "dist");
  // with the operator's Freifunk API file: every route of the table has a file to check
  await build({ data: `${PUBLIC_SAMPLE}dump`, out, settings: FREIFUNK_API_SETTINGS });
  altered = path.join(tempDir(), "dist");
  cpSync(out, altered, { recursive: true });
  writeFileSync(path.join(altered, "api/v1/site/3/index.json"), "[]");
  writeFileSync(path.join(altered, "api/v1/interface/_q/wifi_ssid/_5A10-_4Blinikum/index.json"), "[]");
  rmSync(path.join(altered, "api/v1/accesspoint/_q/status/online"), { recursive: true });
  // the link list's gzip twin no longer the list: only a client accepting gzip sees it
  writeFileSync(path.join(altered, "api/v1/link/index.json.gz"), gzipSync("[]"));
  [good, bad] = await Promise.all([startPreview({ dir: out, port: 0 }), startPreview({ dir: altered, port: 0 })]);
});

afterAll(async () => {
  await good?.close();
  await bad?.close();
});

describe("live check", () => {
  it("recovers a request for every response file, through the route table", async () => {
    const requests = await requestsFromTree(out);
    expect(requests.length).toBeGreaterThan(4000);
    expect(requests.find((r) => r.file === "/api/v1/accesspoint/_q/firmware_version/_null/index.json")?.target).toBe(
      "/api/v1/accesspoint/?firmware_version=",
    );
    expect(requests.find((r) => r.file.includes("/wifi_ssid/_5A10"))?.target).toBe("/api/v1/interface/?wifi_ssid=Z10-Klinikum");
    for (const v of ["Z10-Klinikum", "00:13:10:27:d6:a4", "Café Meshtest", "a_b"]) expect(unkey(fileKey(v))).toBe(v);
  });

  it("reports every route identical against the preview of the same build", async () => {
    const r = await checkDeployment({ base: good.url, dist: out, sample: 200 });
    const total = r.rows.reduce((s, x) => s + x.requested, 0);
    expect(r.problems).toEqual([]);
    expect(r.rows.every((x) => x.identical === x.requested)).toBe(true);
    // Every route without a key in its path (lists, filters, the API root, the outputs) is requested; details are sampled.
    const keyed = new Set(RULES.filter((rule) => rule.from.includes(":")).map((rule) => rule.kind));
    expect(r.rows.filter((x) => keyed.has(x.kind)).reduce((s, x) => s + x.requested, 0)).toBe(200);
    expect(total).toBeGreaterThan(200);
    // Every kind the route table answers with a file has its row, in the table's order.
    const kinds = [...new Set(RULES.filter((rule) => rule.to !== null).map((rule) => rule.kind))];
    expect(r.rows.map((x) => x.kind)).toEqual(kinds);
    // the outputs' own URLs and their further routes (the history's) among them
    expect(kinds).toEqual(expect.arrayContaining(["openapi", ...OUTPUT_RECORDS.map((o) => o.kind), ...OUTPUT_ROUTES.map((o) => o.kind)]));
  });

  it("names the altered routes and exits 1 against an altered deployment", async () => {
    const r = await command(["check", bad.url, "--dist", out, "--sample", "2000"]);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/^kind +requested +identical +differing +missing$/m);
    expect(r.stdout).toContain("/api/v1/site/3: body differs");
    expect(r.stdout).toContain("/api/v1/interface/?wifi_ssid=Z10-Klinikum: body differs");
    expect(r.stdout).toContain("/api/v1/accesspoint/?status=online: HTTP 404");
    expect(r.stdout).toMatch(/\/api\/v1\/link\/: body differs \(Accept-Encoding: gzip\) \(2 bytes, \d+ built\)\n/);
    expect(r.stdout).toMatch(/^total +\d+ +\d+ +3 +1$/m);
  });

  it("checks headers and can skip the ones a host cannot set", async () => {
    const r = await checkDeployment({ base: good.url, dist: out, sample: 5, skipHeaders: ["Allow"] });
    expect(r.problems).toEqual([]);
    // the command against the same deployment: exit 0 (with the site's /api/v1/ for its address, below)
  });
});

/** A port on 127.0.0.1 that nothing listens on: bound, read, closed. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((ok) => server.close(() => ok()));
  return port;
}

/** A server whose handler the test writes, counting the requests it got. */
async function server(handle: http.RequestListener): Promise<{ url: string; requests: () => number; close: () => Promise<void> }> {
  let requests = 0;
  const s = http.createServer((req, res) => {
    requests++;
    handle(req, res);
  });
  await new Promise<void>((ok) => s.listen(0, "127.0.0.1", ok));
  const { port } = s.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    close: () => new Promise<void>((ok) => (s.close(() => ok()), s.closeAllConnections())),
  };
}

describe("the base URL", () => {
  it("is the site: http(s)://host[:port], IPv6 in brackets, a trailing / or /api/v1/ taken off", () => {
    expect(parseBaseUrl("https://mesh.example.org")).toEqual({ base: "https://mesh.example.org" });
    expect(parseBaseUrl("https://mesh.example.org/")).toEqual({ base: "https://mesh.example.org" });
    expect(parseBaseUrl(" HTTP://Mesh.Example.org:8080/ ")).toEqual({ base: "http://mesh.example.org:8080" });
    expect(parseBaseUrl("http://[::1]:4173")).toEqual({ base: "http://[::1]:4173" });
    const note = "checking https://mesh.example.org (the base URL is the site, not its /api/v1/)";
    expect(parseBaseUrl("https://mesh.example.org/api/v1/")).toEqual({ base: "https://mesh.example.org", note });
    expect(parseBaseUrl("https://mesh.example.org/api/v1")).toEqual({ base: "https://mesh.example.org", note });
    expect(parseBaseUrl("http://[::1]:4173/api/v1/").base).toBe("http://[::1]:4173");
  });

  it("refuses anything else with one sentence that says what is wrong and shows the expected form", () => {
    const refused = (text: string) => {
      try {
        parseBaseUrl(text);
      } catch (err) {
        expect(err).toBeInstanceOf(UrlError);
        const message = (err as Error).message;
        expect(message).toContain("http(s)://host[:port]");
        expect(message).not.toContain("\n");
        return message;
      }
      throw new Error(`${text} was accepted`);
    };
    expect(refused("mesh.example.org")).toBe(
      "mesh.example.org has no scheme; check needs the site's address as http(s)://host[:port], e.g. https://mesh.example.org",
    );
    expect(refused("localhost:4173")).toMatch(/^localhost:4173 has no scheme; .* e\.g\. https:\/\/localhost:4173$/);
    expect(refused("ftp://mesh.example.org/")).toMatch(
      /^ftp:\/\/mesh\.example\.org\/ uses ftp:, which check cannot request; .* e\.g\. https:\/\/mesh\.example\.org$/,
    );
    const userInfo = refused("https://me:secret@mesh.example.org");
    expect(userInfo).toMatch(/user info/);
    expect(userInfo).not.toContain("secret");
    expect(refused("https://mesh.example.org/?page=2")).toMatch(/has a query \(\?page=2\)/);
    expect(refused("https://mesh.example.org/#top")).toMatch(/has a fragment \(#top\)/);
    expect(refused("https://mesh.example.org/mesh/api/v1/")).toMatch(
      /has a path \(\/mesh\/api\/v1\/\), .* a site under a sub-path cannot be checked; .* e\.g\. https:\/\/mesh\.example\.org$/,
    );
    expect(refused("https://mesh.example.org/API/V1/")).toMatch(/has a path/);
    expect(refused("http://")).toMatch(/has no host/);
    expect(refused("")).toMatch(/empty/);
    expect(refused("http://::1:4173")).toMatch(/IPv6 address goes in brackets/);
    expect(refused("http://mesh.example.org:70000")).toMatch(/port 70000/);
  });
});

describe("network errors", () => {
  // Shaped like Node's fetch (undici): a TypeError whose cause, or its cause, carries the code.
  const failed = (cause: unknown, message = "fetch failed") => new TypeError(message, { cause });
  const coded = (code: string, message = code) => Object.assign(new Error(message), { code });

  it("are named by their cause", () => {
    expect(describeNetworkError(failed(coded("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:9")))).toBe(
      "connection refused (ECONNREFUSED)",
    );
    expect(describeNetworkError(failed(coded("ENOTFOUND", "getaddrinfo ENOTFOUND mesh.invalid")))).toBe("DNS lookup failed (ENOTFOUND)");
    expect(describeNetworkError(failed(new Error("wrapped", { cause: coded("EAI_AGAIN") })))).toBe("DNS lookup failed (EAI_AGAIN)");
    expect(describeNetworkError(failed(coded("DEPTH_ZERO_SELF_SIGNED_CERT", "self-signed certificate")))).toBe(
      "TLS/certificate error: self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT)",
    );
    expect(
      describeNetworkError(failed(coded("ERR_TLS_CERT_ALTNAME_INVALID", "Hostname/IP does not match certificate's altnames"))),
    ).toMatch(/^TLS\/certificate error: .*\(ERR_TLS_CERT_ALTNAME_INVALID\)$/);
    for (const code of ["CERT_HAS_EXPIRED", "UNABLE_TO_VERIFY_LEAF_SIGNATURE", "SELF_SIGNED_CERT_IN_CHAIN"])
      expect(describeNetworkError(failed(coded(code)))).toMatch(/^TLS\/certificate error: /);
    const openssl = "809C:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../deps/openssl/ssl/record/ssl3_record.c:350:\n";
    expect(describeNetworkError(failed(coded("ERR_SSL_WRONG_VERSION_NUMBER", openssl)))).toBe(
      "TLS/certificate error: wrong version number (ERR_SSL_WRONG_VERSION_NUMBER); the server may speak plain http, not https",
    );
    expect(describeNetworkError(new DOMException("The operation was aborted due to timeout", "TimeoutError"), 30_000)).toBe(
      "timeout: no answer within 30 s",
    );
    expect(describeNetworkError(failed(coded("UND_ERR_CONNECT_TIMEOUT")))).toBe("timeout (UND_ERR_CONNECT_TIMEOUT)");
    expect(describeNetworkError(failed(coded("ECONNRESET", "read ECONNRESET")))).toBe("connection reset (ECONNRESET)");
    expect(describeNetworkError(failed(coded("UND_ERR_SOCKET", "other side closed"), "terminated"))).toBe(
      "connection closed by the host (UND_ERR_SOCKET)",
    );
    // Happy eyeballs: both addresses refused, in an AggregateError.
    expect(describeNetworkError(failed(new AggregateError([coded("ECONNREFUSED"), coded("ECONNREFUSED")])))).toBe(
      "connection refused (ECONNREFUSED)",
    );
    expect(describeNetworkError(failed(new Error("bad port")))).toMatch(/bad port/);
  });

  it("end at the deadline even when the work never sees its signal abort (Node 20 fetch can lose it)", async () => {
    const deaf = () => new Promise<never>(() => {});
    const started = Date.now();
    const err = await withDeadline(50, deaf, undefined, 50).catch((e: unknown) => e);
    expect(describeNetworkError(err, 50)).toBe("timeout: no answer within 50 ms");
    expect(Date.now() - started).toBeGreaterThanOrEqual(95);
    const outer = new AbortController();
    const stopped = withDeadline(60_000, deaf, outer.signal, 10).catch((e: unknown) => e);
    outer.abort(new Error("stopped by the run"));
    expect(((await stopped) as Error).message).toBe("stopped by the run");
    // Work that hears the abort fails with its own error within the grace.
    const own = await withDeadline(
      20,
      (signal) => new Promise((_, no) => signal.addEventListener("abort", () => no(new Error("own")))),
      undefined,
      10_000,
    ).catch((e: unknown) => e);
    expect((own as Error).message).toBe("own");
    expect(await withDeadline(1000, async () => 7)).toBe(7);
  });

  it("are told apart from other errors", () => {
    expect(describeNetworkError(coded("ENOENT", "no such file"))).toBeUndefined();
    expect(describeNetworkError(new Error("boom"))).toBeUndefined();
    expect(describeNetworkError("fetch failed")).toBeUndefined();
    expect(describeNetworkError(undefined)).toBeUndefined();
  });
});

describe("check messages", () => {
  it("says so when --dist holds no build, instead of printing an empty table (exit 2)", async () => {
    const r = await command(["check", "http://127.0.0.1:9", "--dist", path.join(tempDir(), "nothing")]);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^mesh-api: .*nothing holds no build of mesh-api to compare with; run build first/);
  });

  it("refuses a base URL without a scheme before requesting anything (exit 2)", async () => {
    const site = await server((_, res) => res.end());
    try {
      const r = await command(["check", site.url.replace("http://", ""), "--dist", out]);
      expect(r.status).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(
        /^mesh-api: 127\.0\.0\.1:\d+ has no scheme; check needs the site's address as http\(s\):\/\/host\[:port\], e\.g\. https:\/\/127\.0\.0\.1:\d+\n$/,
      );
      expect(site.requests()).toBe(0);
    } finally {
      await site.close();
    }
  });

  it("refuses another scheme and a sub-path (exit 2)", async () => {
    const [ftp, sub] = await Promise.all([
      command(["check", "ftp://mesh.example.org", "--dist", out]),
      command(["check", "https://mesh.example.org/mesh/", "--dist", out]),
    ]);
    expect(ftp.status).toBe(2);
    expect(ftp.stderr).toMatch(
      /^mesh-api: ftp:\/\/mesh\.example\.org uses ftp:, which check cannot request; .*http\(s\):\/\/host\[:port\].*\n$/,
    );
    expect(sub.status).toBe(2);
    expect(sub.stderr).toMatch(
      /^mesh-api: https:\/\/mesh\.example\.org\/mesh\/ has a path \(\/mesh\/\), .*sub-path cannot be checked; .*\n$/,
    );
    expect(sub.stdout).toBe("");
  });

  it("takes the site's /api/v1/ for the site, with a note, and shows no progress when stderr is not a terminal", async () => {
    const r = await command(["check", `${good.url.replace(/\/$/, "")}/api/v1/`, "--dist", out, "--sample", "5"]);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe(`note: checking ${good.url.replace(/\/$/, "")} (the base URL is the site, not its /api/v1/)\n`);
    expect(r.stdout).toMatch(/^total +\d+ +\d+ +0 +0$/m);
  });

  it("says once that a host cannot be reached, with the cause (exit 1, no table)", async () => {
    const port = await closedPort();
    const r = await command(["check", `http://127.0.0.1:${port}`, "--dist", out]);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(`mesh-api: cannot reach http://127.0.0.1:${port}: connection refused (ECONNREFUSED)\n`);
    await expect(checkDeployment({ base: `http://127.0.0.1:${port}`, dist: out, sample: 5 })).rejects.toBeInstanceOf(UnreachableError);
  });

  it("gives up on a host that does not answer within the timeout", async () => {
    const site = await server(() => {});
    try {
      const run = checkDeployment({ base: site.url, dist: out, sample: 5, timeoutMs: 200 });
      await expect(run).rejects.toThrow(`cannot reach ${site.url}: timeout: no answer within 200 ms`);
      expect(site.requests()).toBe(1);
    } finally {
      await site.close();
    }
  });

  /** Passes the first `n` requests on to the preview, then shuts down. */
  const goesAway = (n: number) => {
    let passed = 0;
    const site = server((req, res) => {
      if (++passed > n) {
        void site.then((s) => s.close());
        return;
      }
      // One connection per request (no kept-alive socket the preview may close under it), and an
      // upstream failure ends the client's connection instead of becoming an uncaught error.
      http
        .request(new URL(req.url!, good.url), { headers: req.headers, agent: false }, (answer) => {
          res.writeHead(answer.statusCode!, answer.headers);
          answer.pipe(res);
        })
        .on("error", () => res.destroy())
        .end();
    });
    return site;
  };

  it("stops once when the host goes away part-way, with the count of requests not made", async () => {
    const site = await goesAway(30);
    const r = await checkDeployment({ base: site.url, dist: out, sample: 200, concurrency: 4 });
    expect(r.stopped?.cause).toMatch(/^connection (refused|reset|closed by the host) \(/);
    expect(r.stopped!.answered).toBeLessThanOrEqual(30);
    expect(r.stopped!.answered).toBeGreaterThan(20);
    expect(r.stopped!.total).toBeGreaterThan(200);
    expect(r.rows.reduce((s, x) => s + x.requested, 0)).toBe(r.stopped!.answered);
    expect(r.problems).toEqual([]);
    expect(site.requests()).toBeLessThan(40);

    const other = await goesAway(10);
    const c = await command(["check", other.url, "--dist", out]);
    expect(c.status).toBe(1);
    expect(c.stdout).toMatch(/^total +\d+ +\d+ +0 +0$/m);
    const line = new RegExp(
      `^mesh-api: cannot reach ${other.url} any more: connection (refused|reset|closed by the host) \\([A-Z_]+\\); stopped after (\\d+) of (\\d+) requests, (\\d+) not made\n$`,
    );
    expect(c.stderr).toMatch(line);
    const [, , answered, total, notMade] = line.exec(c.stderr)!;
    expect(Number(answered) + Number(notMade)).toBe(Number(total));
  });
});
