import { spawn, spawnSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { userInfo } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { synthesize } from "../src/gen/synth.ts";
import { rawSources } from "../src/gen/raw.ts";
import { ondataserviceDb } from "../src/gen/ondataservice-db.ts";
import { rawRequest } from "./support/http.ts";
import { NGINX } from "./support/nginx.ts";
import { freePort, spawnServer, type RunningServer } from "./support/served.ts";
import { cliArgs, tempDir } from "./support/tree.ts";

/**
 * Issue 41, items 5 and 7: docs/live.md's set-up, run as written. The cron line of docs/live.md and the
 * file it runs (examples/mesh-api-cycle, which the systemd service runs too) are taken from the
 * repository's text; only what must not be touched on a developer's machine is moved: the paths under
 * /var, /etc/nginx and /usr/local/bin into a temporary root, the OLSR and wiki addresses to a loopback
 * server, and `sudo`, `systemctl` and `/usr/sbin/nginx` to stand-ins that drive a real nginx started
 * here (systemctl's try-reload-or-restart reloads it when it runs and does nothing when it does not).
 * The steps follow docs/live.md's order: the include file first (host-config --write), then nginx,
 * then the first run.
 */

const ROOT_REPO = new URL("..", import.meta.url).pathname;
const docs = readFileSync(path.join(ROOT_REPO, "docs/live.md"), "utf8");
const script = readFileSync(path.join(ROOT_REPO, "examples/mesh-api-cycle"), "utf8");
const cronBlock = /```cron\n([\s\S]*?)```/.exec(docs)?.[1] ?? "";

let root: string;
let stubs: string;
let nginx: RunningServer | undefined;
let sources: Server;
let port: number;
let step = 0;
const network = synthesize({ aps: 120, seed: 11 });

/** The repository's text with its system paths and addresses moved into the test's root. */
function moved(text: string, sourcesBase: string): string {
  return text
    .replaceAll("/var/lib/", `${root}/var/lib/`)
    .replaceAll("/var/www/", `${root}/var/www/`)
    .replaceAll("/etc/nginx/", `${root}/etc/nginx/`)
    .replaceAll("/usr/local/bin/", `${root}/usr/local/bin/`)
    .replaceAll("/usr/sbin/nginx", `${stubs}/nginx`)
    .replaceAll("/usr/bin/systemctl", `${stubs}/systemctl`)
    .replaceAll("http://127.0.0.1:2006", `${sourcesBase}/olsr`)
    .replaceAll("https://wiki.opennet-initiative.de/wiki/Opennet_Nodes", `${sourcesBase}/wiki/Opennet_Nodes`);
}

const stub = (name: string, body: string) => {
  writeFileSync(path.join(stubs, name), `#!/bin/sh\n${body}\n`);
  chmodSync(path.join(stubs, name), 0o755);
};

/**
 * The cron line's command as cron runs it: its PATH line, then the command after the schedule and the
 * user. Not spawnSync: the sources are served by this process.
 */
async function cronRun(): Promise<{ status: number; stdout: string; stderr: string }> {
  const lines = cronBlock.trim().split("\n");
  const pathLine = lines.find((l) => l.startsWith("PATH="))!;
  const job = lines.find((l) => /^\S+ \S+ \S+ \S+ \S+ /.test(l))!;
  const command = job.split(/\s+/).slice(6).join(" ");
  const base = `http://127.0.0.1:${(sources.address() as AddressInfo).port}`;
  const child = spawn("/bin/sh", ["-c", moved(command, base)], {
    env: { ...process.env, PATH: `${stubs}:${moved(pathLine.slice("PATH=".length), base)}` },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c) => (stdout += c));
  child.stderr.on("data", (c) => (stderr += c));
  const status = await new Promise<number>((resolve) => child.on("close", (code) => resolve(code ?? -1)));
  return { status, stdout, stderr };
}

describe("docs/live.md's set-up, in its order, with its cron line and its file", () => {
  beforeAll(async () => {
    root = tempDir();
    stubs = path.join(root, "stubs");
    for (const dir of ["stubs", "var/lib/mesh-api", "var/lib/ondataservice", "var/www/mesh-api", "etc/nginx", "usr/local/bin"])
      mkdirSync(path.join(root, dir), { recursive: true });
    // The sources: olsrd's txtinfo (its /all) and the wiki page on loopback, ondataservice as a file.
    sources = createServer((req, res) => {
      const raw = rawSources(network, step, 11);
      if (req.url === "/olsr/all") return void res.end(raw.olsr);
      if (req.url === "/wiki/Opennet_Nodes") return void res.end(raw.wiki);
      res.statusCode = 404;
      res.end();
    });
    await new Promise<void>((resolve) => sources.listen(0, "127.0.0.1", resolve));
    writeFileSync(path.join(root, "var/lib/ondataservice/ondataservice.db"), await ondataserviceDb(network, 0, 11));
    const prefix = path.join(root, "etc/nginx");
    const conf = path.join(prefix, "nginx.conf");
    port = await freePort();
    stub("mesh-api", `exec ${process.execPath} ${cliArgs().join(" ")} "$@"`);
    stub("sudo", `[ "$1" = -n ] && shift\nexec "$@"`);
    stub("nginx", `exec ${NGINX} -p ${prefix} -c ${conf} "$@"`);
    stub(
      "systemctl",
      `[ "$1 $2" = "try-reload-or-restart nginx" ] || { echo "systemctl stand-in: $*" >&2; exit 1; }\n` +
        `[ -s ${prefix}/nginx.pid ] && kill -0 "$(cat ${prefix}/nginx.pid)" 2>/dev/null || exit 0\n` +
        `echo reload >> ${stubs}/reloads\nexec ${NGINX} -p ${prefix} -c ${conf} -s reload`,
    );
    const base = `http://127.0.0.1:${(sources.address() as AddressInfo).port}`;
    writeFileSync(path.join(root, "usr/local/bin/mesh-api-cycle"), moved(script, base));
    chmodSync(path.join(root, "usr/local/bin/mesh-api-cycle"), 0o755);
    // Step 2: the include file before nginx reads a configuration that includes it.
    const write = spawnSync(
      process.execPath,
      [...cliArgs(), "host-config", "nginx", "--write", path.join(root, "etc/nginx/mesh-api.conf")],
      { encoding: "utf8" },
    );
    expect(write.status, write.stderr).toBe(0);
    // Step 3: docs/live.md's server block (its port moved), in a main configuration of nginx's own.
    const server = /```nginx\n([\s\S]*?)```/.exec(docs)![1].replace("listen 80;", `listen 127.0.0.1:${port};`);
    const user = process.getuid?.() === 0 ? `user "${userInfo().username}" "root";\n` : "";
    writeFileSync(
      conf,
      `${user}worker_processes 1;\npid "nginx.pid";\nerror_log "error.log";\nevents { worker_connections 64; }\n` +
        `http {\n  include /etc/nginx/mime.types;\n  access_log off;\n  client_body_temp_path "tmp-client_body";\n` +
        `  proxy_temp_path "tmp-proxy";\n  fastcgi_temp_path "tmp-fastcgi";\n  uwsgi_temp_path "tmp-uwsgi";\n  scgi_temp_path "tmp-scgi";\n` +
        moved(server, base) +
        "}\n",
    );
    nginx = await spawnServer("nginx", NGINX, ["-p", prefix, "-c", conf, "-g", "daemon off;"], port, {
      logs: [path.join(prefix, "error.log")],
      signal: "SIGQUIT",
    });
  }, 120_000);

  afterAll(async () => {
    await nginx?.stop();
    await new Promise((r) => sources?.close(r));
  });

  it("answers the JSON 404 before the first run: the link does not exist yet", async () => {
    const r = await rawRequest(port, "GET", "/api/v1/accesspoint/");
    expect(r.status).toBe(404);
  });

  it("the cron line's first run serves the network with every setting, writes nginx's rules and reloads it", async () => {
    const r = await cronRun();
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(""); // --quiet: cron mails only what went wrong
    const record = JSON.parse(readFileSync(path.join(root, "var/lib/mesh-api/state/cycle.json"), "utf8"));
    expect(record.settings).toMatchObject({ "--brand": "opennet", "--default-status": "online", "--host": "nginx" });
    expect(Object.keys(record.sources).sort()).toEqual(["olsr", "ondataservice", "wiki"]);
    expect(readFileSync(path.join(root, "etc/nginx/mesh-api.conf"), "utf8")).toMatch(/^# Generated by `mesh-api host-config nginx`/);
    const list = await rawRequest(port, "GET", "/api/v1/accesspoint/");
    expect(list.status).toBe(200);
    const aps = JSON.parse(list.body.toString("utf8")) as Record<string, unknown>[];
    expect(aps.length).toBeGreaterThan(50);
    expect(Object.keys(aps[0])).toContain("opennet_version");
    const links = await rawRequest(port, "GET", `/api/v1/accesspoint/${aps[0].main_ip as string}/links/`);
    expect(links.status).toBe(200);
    // nginx was reloaded with this build's rules, and the list without status answers the online ones
    expect(readFileSync(path.join(stubs, "reloads"), "utf8")).toBe("reload\n");
    const online = await rawRequest(port, "GET", "/api/v1/accesspoint/?status=online");
    expect(list.body.equals(online.body)).toBe(true);
  });

  it("runs again as written, with OLSR changed, without a settings difference", async () => {
    step = 1;
    const r = await cronRun();
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(JSON.parse(readFileSync(path.join(root, "var/lib/mesh-api/state/cycle.json"), "utf8")).runs).toBe(2);
    expect((await rawRequest(port, "GET", "/api/v1/link/?status=all")).status).toBe(200);
  });

  it("the systemd units pass systemd-analyze verify, with the file the service runs in place", () => {
    const analyze = "/usr/bin/systemd-analyze";
    expect(existsSync(analyze), "scripts/test-deps.mjs installs systemd").toBe(true);
    const units = tempDir();
    mkdirSync(path.join(units, "etc/systemd/system"), { recursive: true });
    mkdirSync(path.join(units, "usr/local/bin"), { recursive: true });
    // the system's own units (sysinit.target and the like), which every unit's defaults name
    cpSync("/lib/systemd/system", path.join(units, "lib/systemd/system"), { recursive: true });
    cpSync(path.join(ROOT_REPO, "examples/systemd"), path.join(units, "etc/systemd/system"), { recursive: true });
    cpSync(path.join(ROOT_REPO, "examples/mesh-api-cycle"), path.join(units, "usr/local/bin/mesh-api-cycle"));
    const names = ["mesh-api-cycle.service", "mesh-api-cycle.timer"].map((u) => `/etc/systemd/system/${u}`);
    const r = spawnSync(analyze, ["--man=no", "verify", `--root=${units}`, ...names], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    // and the service runs the file the cron line runs
    expect(readFileSync(path.join(units, "etc/systemd/system/mesh-api-cycle.service"), "utf8")).toMatch(
      /^ExecStart=\/usr\/local\/bin\/mesh-api-cycle$/m,
    );
    expect(cronBlock).toMatch(/ \/usr\/local\/bin\/mesh-api-cycle --quiet$/m);
  });
});
