import { spawn, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { userInfo } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, startPreview, type Preview } from "../src/index.ts";
import { FILES } from "../src/core/routes.ts";
import { rawSources } from "../src/gen/raw.ts";
import { ondataserviceDb } from "../src/gen/ondataservice-db.ts";
import { synthesize } from "../src/gen/synth.ts";
import { nginx } from "../src/hosts/nginx.ts";
import { cycle, type CycleResult } from "../src/live/run.ts";
import { rawRequest } from "./support/http.ts";
import { NGINX } from "./support/nginx.ts";
import { freePort, spawnServer, type RunningServer } from "./support/served.ts";
import { steadyClient, type SteadyClient } from "./support/live-clients.ts";
import { command, removersDone, ROOT, tempDir, treeDigest } from "./support/tree.ts";

/**
 * Issue 26, serving through swaps: `cycle` runs on a synthetic network whose raw sources change from
 * run to run (src/gen/raw.ts), while Debian's nginx (the standalone configuration of `host-config
 * nginx`, its root the link the cycle repoints) and the preview serve the link. A client keeps a
 * bounded stream of requests going to both during three cycles: every answer must be 200 with a
 * complete JSON body, from one build or the other, and some of them were in flight while the link
 * was repointed.
 *
 * The network's size (400 access points, lists of about 0.5 MB, from 3,000 and 2-4 MB before) still
 * has reads of lists in flight during the swaps: besides four lanes of mixed requests a server, one
 * lane reads the largest lists back to back, and a request during which `current` was repointed is
 * counted. Measured on a loaded 2-core machine: 3 (nginx) and 2 (preview) list reads in flight over
 * the three swaps at 400 access points; the mixed lanes alone had 1 and 0 (at 1,000, 8 and 4, all of
 * them small answers), so the list lanes, not the size, make the swaps meet reads.
 */

const APS = 400;
const AT = ["2026-11-20T10:00:00Z", "2026-11-20T10:06:00Z", "2026-11-20T10:12:00Z", "2026-11-20T10:18:00Z"];

let dir: string;
let serve: string;
let state: string;
let server: RunningServer;
let preview: Preview;
const results: CycleResult[] = [];
const seconds: number[] = [];
const clients: Record<"nginx" | "preview", SteadyClient | undefined> = { nginx: undefined, preview: undefined };
const listClients: Record<"nginx" | "preview", SteadyClient | undefined> = { nginx: undefined, preview: undefined };
const sources = (step: number) => ({ olsr: path.join(dir, `olsr-${step}.txt`), wiki: path.join(dir, `wiki-${step}.html`) });

describe("cycle: three runs over changing sources while nginx and the preview serve", () => {
  beforeAll(async () => {
    dir = tempDir();
    const network = synthesize({ aps: APS, seed: 5 });
    for (let step = 0; step < AT.length; step++) {
      const raw = rawSources(network, step, 5);
      writeFileSync(sources(step).olsr, raw.olsr);
      writeFileSync(sources(step).wiki, raw.wiki);
    }
    state = path.join(dir, "state");
    serve = path.join(dir, "www");
    const prefix = tempDir();
    const port = await freePort();
    const file = path.join(prefix, "nginx.conf");
    const run = (step: number) =>
      cycle({
        state,
        serve,
        olsr: { source: sources(step).olsr, every: 1 },
        wiki: { source: sources(step).wiki, every: "changed" },
        sitesEvery: 2,
        at: AT[step],
        keep: 30,
        settings: { brand: "opennet", defaultStatus: "online" },
        host: {
          host: nginx,
          options: { standalone: true, root: serve, port, ...(process.getuid?.() === 0 && { user: `${userInfo().username}:root` }) },
          file,
          test: `${NGINX} -t -q -p ${prefix} -c ${file}`,
          // nginx is started after the first run
          reload: `if [ -s ${prefix}/nginx.pid ]; then kill -HUP "$(cat ${prefix}/nginx.pid)"; fi`,
        },
      });
    const timed = async (step: number) => {
      const started = performance.now();
      const r = await run(step);
      seconds.push((performance.now() - started) / 1000);
      return r;
    };
    results.push(await timed(0));
    server = await spawnServer("nginx", NGINX, ["-p", prefix, "-c", file, "-g", "daemon off;"], port, {
      logs: [path.join(prefix, "error.log")],
      signal: "SIGQUIT",
    });
    preview = await startPreview({ dir: serve, port: 0 });
    const previewPort = Number(new URL(preview.url).port);
    // What every build answers: lists, and details of access points and links that exist from the first run on.
    const first = JSON.parse((await rawRequest(previewPort, "GET", "/api/v1/accesspoint/?status=all")).body.toString("utf8")) as {
      main_ip: string;
    }[];
    const targets = [
      "/api/v1/",
      "/api/v1/accesspoint/",
      "/api/v1/accesspoint/?status=all",
      "/api/v1/accesspoint/?status=online&data_format=geojson",
      "/api/v1/link/?status=all",
      "/api/v1/link/",
      "/api/v1/interface/",
      "/api/v1/site/",
      ...first.slice(0, 40).map((ap) => `/api/v1/accesspoint/${ap.main_ip}`),
      ...first.slice(0, 20).map((ap) => `/api/v1/accesspoint/${ap.main_ip}/links/?status=all`),
      ...[1, 2, 3, 10, 100].map((id) => `/api/v1/link/${id}`),
    ];
    // Bounded: a steady client (four lanes a server, some hundred requests a second), not a load test.
    // The lists are read and parsed in this process beside the cycle.
    const current = path.join(state, "current");
    const served = () => readlinkSync(current);
    const lists = ["/api/v1/link/?status=all", "/api/v1/accesspoint/?status=all"];
    for (const [name, port] of [
      ["nginx", server.port],
      ["preview", previewPort],
    ] as const) {
      clients[name] = steadyClient({ name, port, targets, lanes: 4, pause: () => 20, served });
      // and one lane that reads the largest lists back to back: one of them is being read at each swap
      listClients[name] = steadyClient({ name, port, targets: lists, lanes: 1, pause: () => 0, served });
    }
    try {
      for (let step = 1; step < AT.length; step++) results.push(await timed(step));
    } finally {
      await Promise.all([...Object.values(clients), ...Object.values(listClients)].map((c) => c?.stop()));
    }
  }, 600_000);

  afterAll(async () => {
    await preview?.close();
    await server?.stop();
  });

  it("publishes every run, importing what is due", () => {
    expect(results.map((r) => r.outcome)).toEqual(["published", "published", "published", "published"]);
    expect(results[0].line).toMatch(
      new RegExp(
        `^cycle 1 at 2026-11-20T10:00:00Z: imported olsr, wiki, sites; ${APS} access points, \\d+ links, \\d+ sites; serving runs/00000001/build, snapshot written; nginx configuration updated and reloaded$`,
      ),
    );
    // the wiki's file did not change; sites every second run; one new access point a step
    expect(results[1].line).toMatch(
      new RegExp(`^cycle 2 at 2026-11-20T10:06:00Z: imported olsr; ${APS + 1} access points, .*serving runs/00000002/build$`),
    );
    expect(results[2].line).toMatch(new RegExp(`^cycle 3 at 2026-11-20T10:12:00Z: imported olsr, sites; ${APS + 2} access points`));
    expect(results.map((r) => r.configRefused)).toEqual([undefined, undefined, undefined, undefined]);
  });

  it("answered every request of the stream, on nginx and on the preview, with a complete JSON body, some while the link was repointed", () => {
    const { nginx, preview } = clients as Record<"nginx" | "preview", SteadyClient>;
    const lists = listClients as Record<"nginx" | "preview", SteadyClient>;
    console.log(
      `cycle (${APS} access points): ${nginx.answered} answers from nginx, ${preview.answered} from the preview during three cycles ` +
        `(${nginx.inFlight} and ${preview.inFlight} in flight while the link was repointed), and ${lists.nginx.answered} and ${lists.preview.answered} ` +
        `of the largest lists (${lists.nginx.inFlight} and ${lists.preview.inFlight} in flight, the largest ${Math.max(lists.nginx.inFlightBytes, lists.preview.inFlightBytes)} bytes); ` +
        `the four runs took ${seconds.map((s) => s.toFixed(1)).join(", ")} s`,
    );
    expect([nginx, preview, lists.nginx, lists.preview].flatMap((c) => c.failures).slice(0, 10)).toEqual([]);
    expect(nginx.answered).toBeGreaterThan(100);
    expect(preview.answered).toBeGreaterThan(100);
    // the swaps happened while lists were being read, on each server
    expect(lists.nginx.inFlight).toBeGreaterThan(0);
    expect(lists.preview.inFlight).toBeGreaterThan(0);
  });

  it("serves the last build through a link, keeps the one before it, and removes the older ones", () => {
    expect(readlinkSync(serve)).toBe("state/current/build");
    expect(readlinkSync(path.join(state, "current"))).toBe("runs/00000004");
    // the older runs went to detached removers, which rename them to hidden trash folders, then remove them
    const builds = () => readdirSync(path.join(state, "runs")).filter((n) => !n.startsWith("."));
    for (const until = Date.now() + 60_000; builds().length > 2 && Date.now() < until;)
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    removersDone(path.join(state, "runs"));
    expect(builds()).toEqual(["00000003", "00000004"]);
    expect(JSON.parse(readFileSync(path.join(state, "cycle.json"), "utf8"))).toMatchObject({
      runs: 4,
      sources: { olsr: { run: 4 }, wiki: { run: 1 } },
      sitesRun: 3,
      snapshotDay: "2026-11-20",
      build: "runs/00000004/build",
      settings: { "--brand": "opennet", "--default-status": "online", "--host": "nginx" },
    });
    // the snapshot of the day is carried from build to build
    expect(existsSync(path.join(serve, "snapshots/index.json"))).toBe(true);
  });

  it("keeps what OLSR no longer shows, with its last timestamp", async () => {
    const answer = await rawRequest(Number(new URL(preview.url).port), "GET", "/api/v1/link/?status=all");
    const links = JSON.parse(answer.body.toString("utf8")) as { timestamp: string }[];
    const stamps = new Set(links.map((l) => l.timestamp));
    expect(stamps.has("2026-11-20T10:18:00Z")).toBe(true);
    expect([...stamps].some((t) => t < "2026-11-20T10:18:00Z")).toBe(true);
  });
});

/**
 * The names in `dir` (those `keep` keeps: by default not hidden) once `done` holds for them, or after
 * a minute: detached removers (io/write/swap.ts) may still be at work when a command has ended.
 */
function settled(dir: string, done: (names: string[]) => boolean, keep = (n: string) => !n.startsWith(".")): string[] {
  const names = () => readdirSync(dir).filter(keep).sort();
  for (const until = Date.now() + 60_000; !done(names()) && Date.now() < until;)
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
  return names();
}

describe("cycle: refusals, skipped runs and a configuration the server refuses", () => {
  /**
   * The sources: a small synthetic network (what these tests check does not depend on its size) whose
   * OLSR changes from step to step, its wiki, and two ondataservice databases, the second with another
   * firmware version on one access point (a build that needs other rules of the web server).
   */
  let src: string;
  /** a state after one plain run (10:00, step 00), which tests copy, or only read */
  let base: string;
  const olsr = (step: string) => path.join(src, `olsr-${step}.txt`);
  const ods = (which: "first" | "other" = "first") => path.join(src, `ondataservice-${which}.db`);
  const args = (d: string, step = "00", at = "2026-11-20T10:00:00Z") => [
    "cycle",
    "--state",
    path.join(d, "state"),
    "--serve",
    path.join(d, "www"),
    "--olsr",
    olsr(step),
    "--wiki",
    path.join(src, "wiki.html"),
    "--ondataservice",
    ods(),
    "--at",
    at,
  ];
  /** A folder holding a copy of `base`'s state and served link, as if its first run had been made there. */
  const copyOfBase = () => {
    const d = tempDir();
    cpSync(base, d, { recursive: true, verbatimSymlinks: true });
    return d;
  };

  beforeAll(async () => {
    src = tempDir();
    const network = synthesize({ aps: 40, seed: 9 });
    for (const [i, step] of ["00", "01", "02"].entries()) writeFileSync(olsr(step), rawSources(network, i, 9).olsr);
    writeFileSync(path.join(src, "wiki.html"), rawSources(network, 0, 9).wiki);
    writeFileSync(ods(), await ondataserviceDb(network, 0, 9));
    const reporting = network.accesspoints.findIndex((ap) => ap.device_board !== undefined);
    const other = network.accesspoints.map((ap, i) => (i === reporting ? { ...ap, mesh_version: "0.5.9-99" } : ap));
    writeFileSync(ods("other"), await ondataserviceDb({ ...network, accesspoints: other }, 0, 9));
    base = tempDir();
    const r = await command(args(base));
    expect(r.status, r.stderr).toBe(0);
  }, 120_000);

  it("builds what build makes of its state's dump, byte for byte, also into the recycled build of two runs before (through the writing thread)", async () => {
    const d = copyOfBase();
    const runs = path.join(d, "state", "runs");
    const buildOf = (run: string) => path.join(runs, run, "build");
    expect((await command(args(d, "01", "2026-11-20T10:06:00Z"))).status).toBe(0);
    // the snapshots and the digests the next recycling reads are the cycle's own; the metrics file adds the cycle's health
    // The topology by day is carried from the build before: the day's graph is its first run's, which a
    // fresh build of a later run cannot have (history.test checks it)
    const carried = (f: string) => f.startsWith("api/v1/netjson/history/") || f.startsWith("api/v1/netjson/diff/");
    const without = (tree: Map<string, string>) =>
      new Map(
        [...tree].filter(
          ([f]) =>
            !f.startsWith("snapshots/") &&
            f !== FILES.fileDigests.slice(1) &&
            // the metrics file and its gzip twin
            !f.startsWith(FILES.metrics.slice(1)) &&
            !carried(f),
        ),
      );
    const metricsOf = (dir: string) => readFileSync(path.join(dir, FILES.metrics), "utf8");
    const sameMetrics = (cycled: string, plain: string) => {
      const [c, p] = [metricsOf(cycled), metricsOf(plain)];
      expect(c.startsWith(p)).toBe(true);
      expect(c.length).toBeGreaterThan(p.length);
      for (const line of c.slice(p.length).trimEnd().split("\n")) expect(line).toMatch(/^(# (HELP|TYPE) )?mesh_cycle_/);
    };
    const fresh = path.join(d, "fresh");
    await build({ data: path.join(d, "state", "dump"), out: fresh });
    const second = without(treeDigest(buildOf("00000002")));
    expect(second.size).toBeGreaterThan(500);
    expect(second).toEqual(without(treeDigest(fresh)));
    sameMetrics(buildOf("00000002"), fresh);
    const firstBuild = treeDigest(buildOf("00000001"));
    const recycledFile = statSync(path.join(buildOf("00000001"), "api", "v1", "index.json")).ino;
    // the recycled build's files through the writing thread (src/io/write/file-calls.ts), the fresh one's not
    expect((await command(args(d, "02", "2026-11-20T10:12:00Z"), ROOT, { MESH_API_WRITER_THREAD_FROM: "0" })).status).toBe(0);
    expect(settled(runs, (names) => names.length === 2)).toEqual(["00000002", "00000003"]);
    // the first run's build became the third's: its files were rewritten where they were
    expect(statSync(path.join(buildOf("00000003"), "api", "v1", "index.json")).ino).toBe(recycledFile);
    await build({ data: path.join(d, "state", "dump"), out: fresh });
    const third = without(treeDigest(buildOf("00000003")));
    expect(third).toEqual(without(treeDigest(fresh)));
    sameMetrics(buildOf("00000003"), fresh);
    expect(third).not.toEqual(without(firstBuild));
  });

  it("removes what a killed run or remover left among the runs, and leaves a running remover's folder alone", async () => {
    const d = copyOfBase();
    const runs = path.join(d, "state", "runs");
    const dead = spawnSync("true").pid!;
    const sleeper = spawn("sleep", ["30"]);
    try {
      const left = [`.00000001.trash-${dead}-1`, `.00000007.tmp-${dead}-2`];
      const running = `.00000002.trash-${sleeper.pid}-3`;
      for (const name of [...left, running]) {
        mkdirSync(path.join(runs, name, "api"), { recursive: true });
        writeFileSync(path.join(runs, name, "api", "index.json"), "{}");
      }
      // and the folder of a run that never committed, and the links and files a kill left half made
      mkdirSync(path.join(runs, "00000002", "build"), { recursive: true });
      const halfMade = [path.join(d, "state", `.current.link-${dead}-1`), path.join(d, `.www.link-${dead}-2`)];
      for (const link of halfMade) symlinkSync("runs/00000007", link);
      writeFileSync(path.join(d, "state", `.host-config.json.tmp-${dead}`), "{");
      expect((await command(args(d, "01", "2026-11-20T10:06:00Z"))).status).toBe(0);
      expect(
        settled(
          runs,
          (names) => names.length === 3,
          (n) => !n.startsWith(".") || n === running,
        ),
      ).toEqual([running, "00000001", "00000002"]);
      expect(readdirSync(path.join(runs, "00000002")).sort()).toEqual(["build", "cycle.json", "dump"]);
      expect(readdirSync(path.join(d, "state")).filter((n) => /\.(tmp|link)-/.test(n))).toEqual([]);
      expect(readdirSync(d).filter((n) => /\.(tmp|link)-/.test(n))).toEqual([]);
    } finally {
      sleeper.kill();
    }
  });

  /** Every file of the state as the committed run gives it, with the served link's target: what a refused run must leave alone. */
  const stateBytes = (d: string) => {
    const current = path.join(d, "state", "current");
    return {
      current: readlinkSync(current),
      served: realpathSync(path.join(d, "www")),
      files: treeDigest(realpathSync(current)),
    };
  };

  it("records its settings on the first run: a run with others is refused with the difference named, --reconfigure changes them", async () => {
    const d = tempDir();
    const settings = ["--brand", "opennet", "--default-status", "online"];
    expect((await command([...args(d), ...settings])).status).toBe(0);
    const before = stateBytes(d);
    // the cron line that forgot --default-status
    const r = await command([...args(d, "01", "2026-11-20T10:06:00Z"), "--brand", "opennet"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/refusing to run with other settings than the state's \(--default-status: "online" before, not given now\)/);
    expect(r.stderr).toMatch(/add --reconfigure/);
    expect(stateBytes(d)).toEqual(before);
    const again = await command([...args(d, "01", "2026-11-20T10:06:00Z"), "--brand", "opennet", "--reconfigure"]);
    expect(again.status).toBe(0);
    expect(JSON.parse(readFileSync(path.join(d, "state", "cycle.json"), "utf8")).settings).toMatchObject({
      "--brand": "opennet",
      "--default-status": null,
    });
    expect((await command([...args(d, "02", "2026-11-20T10:12:00Z"), "--brand", "opennet"])).status).toBe(0);
  });

  it("refuses a state whose last run was removed by hand, naming it, before any work (cycle and snapshot --state)", async () => {
    const d = tempDir();
    cpSync(base, d, { recursive: true, verbatimSymlinks: true });
    const run = readlinkSync(path.join(d, "state", "current"));
    rmSync(path.join(d, "state", run), { recursive: true });
    const state = () => ({ current: readlinkSync(path.join(d, "state", "current")), files: treeDigest(path.join(d, "state")) });
    const before = state();
    for (const r of [await command(args(d, "01", "2026-11-20T10:06:00Z")), await command(["snapshot", "--state", path.join(d, "state")])]) {
      expect(r.status).toBe(2);
      expect(r.stderr).toContain(
        `links to ${run}, which is missing: the state's last run was removed; put ${path.join(d, "state", run)} back`,
      );
    }
    expect(state()).toEqual(before);
  });

  it("refuses an instant at or before the last run's: timestamps never go back", async () => {
    const before = stateBytes(base);
    for (const at of ["2026-11-20T10:00:00Z", "2026-11-20T09:00:00Z"]) {
      const r = await command(args(base, "01", at));
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(/refusing to run at .*: the state's last run was at 2026-11-20T10:00:00Z/);
    }
    expect(stateBytes(base)).toEqual(before);
  });

  it("refuses a --host-config file it did not write (a refused first run leaves no state), and takes it over with --force", async () => {
    const d = tempDir();
    const conf = path.join(d, "site.conf");
    writeFileSync(conf, "server { listen 80; }\n");
    const host = ["--host", "nginx", "--host-config", conf, "--host-test", "true"];
    const r = await command([...args(d), ...host]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/refusing to replace .*site\.conf with --host-config: it was not written by mesh-api/);
    expect(readFileSync(conf, "utf8")).toBe("server { listen 80; }\n");
    expect(existsSync(path.join(d, "state"))).toBe(false);
    expect(existsSync(path.join(d, "www"))).toBe(false);
    expect((await command([...args(d), ...host, "--force"])).status).toBe(0);
    expect(readFileSync(conf, "utf8")).toMatch(/^# Generated by `mesh-api host-config nginx`/);
  });

  it("tries a failed reload again on the next run, which reloads even when the configuration did not change", async () => {
    const d = tempDir();
    const conf = path.join(d, "mesh-api.conf");
    const reloads = path.join(d, "reloads");
    // fails while the file "down" exists, as a server that is not running yet
    const reload = `if [ -e ${d}/down ]; then echo 'nginx.service is not active' >&2; exit 1; fi; echo x >> ${reloads}`;
    const host = ["--host", "nginx", "--host-config", conf, "--host-test", "true", "--host-reload", reload];
    writeFileSync(path.join(d, "down"), "");
    const first = await command([...args(d), ...host]);
    expect(first.status).toBe(3);
    expect(first.stdout).toMatch(/nginx configuration updated; the reload failed, the next run tries again/);
    expect(first.stderr).toMatch(
      /the new build is served, but the reload of its configuration failed \(.*nginx.service is not active\); a server that is not running reads it when it starts/,
    );
    expect(readlinkSync(path.join(d, "state", "current"))).toBe("runs/00000001");
    expect(existsSync(path.join(d, "state", "host-config.json"))).toBe(true);
    rmSync(path.join(d, "down"));
    const second = await command([...args(d, "01", "2026-11-20T10:06:00Z"), ...host]);
    expect(second.status).toBe(0);
    expect(second.stdout).toMatch(/nginx reloaded \(an earlier run had not reloaded it\)/);
    expect(readFileSync(reloads, "utf8")).toBe("x\n");
    expect(existsSync(path.join(d, "state", "host-config.json"))).toBe(false);
    expect((await command([...args(d, "02", "2026-11-20T10:12:00Z"), ...host])).status).toBe(0);
    expect(readFileSync(reloads, "utf8")).toBe("x\n");
  });

  it("snapshot --state writes a snapshot of the served dump into the served build, which the next run carries on", async () => {
    const d = copyOfBase();
    const state = path.join(d, "state");
    const r = await command(["snapshot", "--state", state, "--keep", "5"]);
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/^snapshot 2026-11-20 of the state .*: mesh-topology-2026-11-20\.tar\.gz/);
    const index = () => JSON.parse(readFileSync(path.join(d, "www", "snapshots", "index.json"), "utf8")) as { snapshots: unknown[] };
    expect(index().snapshots).toHaveLength(1);
    expect((await command(["snapshot", "--state", state, "--dist", path.join(d, "www")])).status).toBe(2);
    // the served link and everything inside the state are the cycle's: other commands refuse them
    for (const refusedArgs of [
      ["snapshot", "--dist", path.join(d, "www")],
      ["build", "--data", path.join(state, "dump"), "--out", path.join(d, "www")],
    ]) {
      const refused = await command(refusedArgs);
      expect(refused.status).toBe(2);
      expect(refused.stderr).toMatch(/mesh-api cycle --state .* to rebuild it, and mesh-api snapshot --state .* for a snapshot/);
    }
    expect(lstatSync(path.join(d, "www")).isSymbolicLink()).toBe(true);
    expect((await command(args(d, "01", "2026-11-20T10:06:00Z"))).status).toBe(0);
    expect(index().snapshots).toHaveLength(1);
    const empty = tempDir();
    const none = await command(["snapshot", "--state", empty]);
    expect(none.status).toBe(2);
    expect(none.stderr).toMatch(/holds no run of mesh-api cycle yet/);
  });

  it("a run that fails before its commit (a full disk at each step) changes nothing: its folder goes, its configuration is put back at once", async () => {
    const d = tempDir();
    const conf = path.join(d, "mesh-api.conf");
    const host = ["--host", "nginx", "--host-config", conf, "--host-test", "true"];
    expect((await command([...args(d), ...host])).status).toBe(0);
    const working = readFileSync(conf, "utf8");
    const before = stateBytes(d);
    // a run whose build needs other rules (a version changes), so each fault after the build finds the configuration changed
    const next = [...args(d, "01", "2026-11-20T10:06:00Z"), "--ondataservice", ods("other"), ...host];
    const failures = () => JSON.parse(readFileSync(path.join(d, "state", "failures.json"), "utf8")) as unknown;
    for (const [i, point] of ["recovered", "imported", "built", "configured", "recorded"].entries()) {
      const r = await command(next, undefined, { MESH_API_FAILPOINT: `${point}:ENOSPC` });
      expect(r.status, point).toBe(4);
      expect(r.stderr).toMatch(/the disk is full .*; the state in .* and the served build were left as they were\n$/);
      expect(stateBytes(d), point).toEqual(before);
      expect(readFileSync(conf, "utf8"), point).toBe(working);
      // beside the transaction, the count of failed runs since the last good one (the metrics file's)
      expect(readdirSync(path.join(d, "state")).sort(), point).toEqual([
        ".mesh-api-output",
        "current",
        "cycle.json",
        "dump",
        "failures.json",
        "runs",
      ]);
      expect(failures(), point).toEqual({ format: "mesh-api-cycle-failures/1", after: 1, failed: i + 1 });
      expect(
        settled(path.join(d, "state", "runs"), (names) => names.length === 1),
        point,
      ).toEqual(["00000001"]);
    }
    const r = await command(next);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^cycle 2 .*nginx configuration updated/);
    expect(readFileSync(conf, "utf8")).not.toBe(working);
    // the good run's build says how many failed before it; the count starts again
    expect(readFileSync(path.join(d, "state", "current", "build", FILES.metrics), "utf8")).toMatch(/^mesh_cycle_failed_runs 5$/m);
    expect(existsSync(path.join(d, "state", "failures.json"))).toBe(false);
  });

  it("keeps only a web server's configuration: Netlify's rules go with a deploy", async () => {
    const d = tempDir();
    const r = await command([...args(d), "--host", "netlify", "--host-config", path.join(d, "netlify.toml")]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/argument 'netlify' is invalid\. Allowed choices are apache, nginx, caddy/);
    expect(existsSync(path.join(d, "state"))).toBe(false);
  });

  it("is skipped, exit 0, while another run holds the state's lock", async () => {
    const d = tempDir();
    mkdirSync(path.join(d, "state"));
    const sleeper = spawn("sleep", ["30"]);
    try {
      writeFileSync(path.join(d, ".state.lock"), JSON.stringify({ pid: sleeper.pid, since: "2026-11-20T10:00:00Z" }) + "\n");
      const r = await command(args(d));
      expect(r.status).toBe(0);
      expect(r.stdout).toBe(`cycle skipped: another cycle (pid ${sleeper.pid}) is working on ${path.join(d, "state")}\n`);
      expect(existsSync(path.join(d, "www"))).toBe(false);
    } finally {
      sleeper.kill();
    }
  });

  it("refuses a served path that is a folder of the operator's, and a state folder that is not its own, before any work", async () => {
    const d = tempDir();
    mkdirSync(path.join(d, "www"));
    writeFileSync(path.join(d, "www", "index.html"), "mine");
    const r = await command(args(d));
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/refusing to use .*www as --serve: it is a folder, not the symbolic link/);
    expect(readFileSync(path.join(d, "www", "index.html"), "utf8")).toBe("mine");
    const e = tempDir();
    mkdirSync(path.join(e, "state"));
    writeFileSync(path.join(e, "state", "notes.txt"), "mine");
    const s = await command(args(e));
    expect(s.status).toBe(2);
    expect(s.stderr).toMatch(/refusing to write to .*state: it is not empty and was not written by mesh-api/);
    expect((await command([...args(tempDir()).filter((a, i, all) => a !== "--olsr" && all[i - 1] !== "--olsr")])).status).toBe(2);
  });

  it("leaves the state and the served build as they were when a source cannot be read (exit 1)", async () => {
    const before = stateBytes(base);
    const r = await command([...args(base, "01", "2026-11-20T10:06:00Z").map((a) => a.replace(olsr("01"), path.join(base, "absent.txt")))]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/absent\.txt: cannot read it \(ENOENT\); the state in .* and the served build were left as they were/);
    expect(stateBytes(base)).toEqual(before);
    expect(readlinkSync(path.join(base, "state", "current"))).toBe("runs/00000001");
    expect(JSON.parse(readFileSync(path.join(base, "state", "cycle.json"), "utf8")).runs).toBe(1);
  });

  it("keeps the server's working configuration when it refuses the new one, serves the build, and exits 3", async () => {
    const d = tempDir();
    const conf = path.join(d, "mesh-api.conf");
    const host = ["--host", "nginx", "--host-config", conf];
    expect((await command([...args(d), ...host, "--host-test", "true"])).status).toBe(0);
    const working = readFileSync(conf, "utf8");
    expect(working).toMatch(/^# Generated by `mesh-api host-config nginx`/);
    // a run whose build needs other rules: the other ondataservice database changes a version
    const next = [...args(d, "01", "2026-11-20T10:06:00Z"), "--ondataservice", ods("other"), ...host];
    // another test command is another setting: --reconfigure says so
    const refused = await command([...next, "--host-test", "echo 'nginx: [emerg] too long parameter' >&2; false", "--reconfigure"]);
    expect(refused.status).toBe(3);
    expect(refused.stdout).toMatch(
      /^cycle 2 at 2026-11-20T10:06:00Z: .*serving runs\/00000002\/build; nginx refused the new configuration and keeps the previous one \(--host-test "echo .*" failed: nginx: \[emerg\] too long parameter\)\n$/,
    );
    expect(refused.stderr).toMatch(/the new build is served, but the web server refused the new configuration and keeps the previous one/);
    expect(readFileSync(conf, "utf8")).toBe(working);
    expect(readlinkSync(path.join(d, "state", "current"))).toBe("runs/00000002");
  });
});
