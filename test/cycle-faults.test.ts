import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statfsSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawSources } from "../src/gen/raw.ts";
import { mulberry32, synthesize, type SynthDump } from "../src/gen/synth.ts";
import { FAILPOINTS, type Failpoint } from "../src/live/failpoint.ts";
import { runName } from "../src/live/state.ts";
import { rawRequest } from "./support/http.ts";
import { steadyClient, type SteadyClient } from "./support/live-clients.ts";
import { NGINX } from "./support/nginx.ts";
import { freePort, spawnServer, type RunningServer } from "./support/served.ts";
import { cliArgs, command, ROOT, tempDir, treeDigest } from "./support/tree.ts";

/**
 * Issue 41, a cycle is a transaction: `mesh-api cycle` runs are killed (SIGKILL: at each of its
 * failpoints, src/live/failpoint.ts, at seeded moments by a timer, and while the web server tests its
 * new configuration), run out of disk space and lack write rights, while Debian's nginx serves the
 * state's build to a steady client. After each fault the state as seen through `current` (the link,
 * the record's bytes, every file of the dump, the build the served link resolves to and its files)
 * is byte for byte the one before the run when the kill came before the commit, and the one a
 * completed run leaves (a twin state that ran the same step to its end) when it came after; the
 * server's include file gets its old text back at the next run's recovery, nginx is never reloaded
 * with the rules of a run that did not commit, and a reload a killed run owed is made by the next run.
 * Then the next run succeeds and nginx serves its data. Every request of the client is answered 200
 * with a complete JSON body throughout.
 *
 * The network: 35 synthetic access points whose OLSR changes at every step (src/gen/raw.ts; 70 and
 * a hundred before, for the same faults and comparisons: each state is compared file by file).
 * nginx's rules change with the data only through filter values, so each run gets an ondataservice
 * database (made here from the live sample's) whose one firmware version is the run's
 * "generation": a run with a new generation rewrites the include file, and nginx answers
 * `?firmware_version=<that version>` only once it has been reloaded with it.
 *
 * nginx runs with a main configuration written here (the standalone one's frame, src/hosts/nginx.ts)
 * whose server {} includes the file the cycle keeps (`--host nginx --host-config`): the faults are
 * real kills of the command line's process; the runs around them (the first, the run after each
 * fault, the twins) run in this process (support/tree.ts command), a third of a child's CPU. The state lives on a tmpfs of its own (root only), which
 * the disk test shrinks to what it holds plus half a dump; the rights test runs the command as root
 * without the capability to override file modes, on folders made read-only.
 * About half a minute on 2 cores (32 runs of the command, 16 of them processes). MESH_API_FAULT_SEED=<n> replays another seed.
 */

/** The faults' seed: the network, the order of the faults and the timers' moments follow from it. */
const SEED = Number(process.env.MESH_API_FAULT_SEED ?? 41);
/** at least 28: ondataservice's ten nodes go to every third access point (odsFile) */
const APS = 35;
const LANES = 4;
/** Kills at a seeded instant of a run's work (the failpoints hit each step once; this one falls anywhere) */
const TIMER_KILLS = 1;
const AS_ROOT = process.getuid?.() === 0;

type Fault =
  | { readonly kind: "failpoint"; readonly point: Failpoint }
  | { readonly kind: "timer"; readonly fraction: number }
  | { readonly kind: "host-test" };

/** The failpoints before the commit: a kill there leaves the state as it was. */
const BEFORE_COMMIT: readonly Failpoint[] = ["recovered", "imported", "built", "configured", "recorded"];

const PLAN: readonly Fault[] = (() => {
  const rand = mulberry32(SEED);
  const faults: Fault[] = [
    ...FAILPOINTS.map((point) => ({ kind: "failpoint", point }) as const),
    // an instant within a run's work (its last steps, the link and the reload, have failpoints of their own)
    ...Array.from({ length: TIMER_KILLS }, () => ({ kind: "timer", fraction: Math.round((0.05 + 0.7 * rand()) * 100) / 100 }) as const),
    { kind: "host-test" },
  ];
  // Fisher-Yates with the same generator
  for (let i = faults.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [faults[i], faults[j]] = [faults[j], faults[i]];
  }
  return faults;
})();

const faultName = (f: Fault) =>
  f.kind === "failpoint"
    ? `MESH_API_FAILPOINT=${f.point}`
    : f.kind === "timer"
      ? `a timer at ${f.fraction} of the shortest run's work (from taking the state's lock)`
      : "a kill while the server tests the new configuration";

const T0 = Date.UTC(2026, 10, 20, 10, 0, 0);
/** Each run, killed or not, takes the next step: a later --at and the next OLSR. */
const atOf = (step: number) => new Date(T0 + step * 360_000).toISOString().replace(".000Z", "Z");
const version = (generation: number) => `0.5.${generation} step ${generation}`;
const versionTarget = (generation: number) => `/api/v1/accesspoint/?firmware_version=${encodeURIComponent(version(generation))}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface SqlDb {
  run(sql: string, params?: unknown[]): void;
  exec(sql: string): { columns: string[]; values: unknown[][] }[];
  export(): Uint8Array;
  close(): void;
}
type SqlJs = { Database: new (data?: Uint8Array) => SqlDb };

interface Ran {
  readonly status: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
  /** from the moment the state's lock was seen to the end (the run's work, without Node.js's start) */
  readonly workMs?: number;
}

/** The state as a reader reaches it through `current` and the served link. */
interface Seen {
  readonly current: string;
  readonly record: string;
  readonly dump: Map<string, string>;
  /** the served build's real path, relative to the state folder */
  readonly served: string;
  readonly build: Map<string, string>;
}

/** The build's record of the dump it was made of (src/io/write/build-record.ts) names the dump by its absolute path. */
const BUILD_RECORD = ".mesh-api-build.json";

function seenOf(state: string, serve: string): Seen {
  const real = realpathSync(state);
  const served = realpathSync(serve);
  const build = treeDigest(served);
  // the same in a twin state but for where the state is
  if (build.has(BUILD_RECORD))
    build.set(
      BUILD_RECORD,
      createHash("sha256")
        .update(readFileSync(path.join(served, BUILD_RECORD), "utf8").replaceAll(real, "<state>"))
        .digest("hex"),
    );
  return {
    current: readlinkSync(path.join(state, "current")),
    // how long the run took is its own measure, not the state's
    record: readFileSync(path.join(state, "current", "cycle.json"), "utf8").replace(/\n {2}"seconds": [0-9.e+-]+,?/, ""),
    dump: treeDigest(path.join(state, "current", "dump")),
    served: path.relative(real, served),
    build,
  };
}

function treeDifferences(name: string, a: Map<string, string>, b: Map<string, string>): string[] {
  const names = [...new Set([...a.keys(), ...b.keys()])].sort();
  const differ = names.filter((f) => a.get(f) !== b.get(f));
  return differ.length === 0
    ? []
    : [`${name}: ${differ.length} files differ (${differ.slice(0, 5).join(", ")}${differ.length > 5 ? ", …" : ""})`];
}

/** What differs between two views of a state: nothing, when a fault left it as it was. */
function differences(a: Seen, b: Seen): string[] {
  return [
    ...(a.current === b.current ? [] : [`current: ${a.current} -> ${b.current}`]),
    ...(a.record === b.record ? [] : [`cycle.json: ${a.record} -> ${b.record}`]),
    ...treeDifferences("current/dump", a.dump, b.dump),
    ...(a.served === b.served ? [] : [`the served link resolves to ${a.served} -> ${b.served}`]),
    ...treeDifferences("the served build", a.build, b.build),
  ];
}

function sh(command: string, args: string[]): void {
  const r = spawnSync(command, args, { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} failed (${r.status ?? r.signal}): ${r.stderr}`);
}

describe(`cycle faults (seed ${SEED}: ${PLAN.map((f) => (f.kind === "failpoint" ? f.point : f.kind === "timer" ? `timer ${f.fraction}` : f.kind)).join(", ")})`, () => {
  let dir: string;
  let mount: string | undefined;
  let fsDir: string;
  let state: string;
  let serve: string;
  let prefix: string;
  let hostConf: string;
  let journal: string;
  let marker: string;
  let testing: string;
  let network: SynthDump;
  let SQL: SqlJs;
  let ods: Uint8Array;
  let ap0: string;
  let port: number;
  let server: RunningServer | undefined;
  const started = performance.now();

  /** the committed run, its step and the generation of its rules (the ones nginx runs once reloaded) */
  let runNo = 0;
  let committedStep = -1;
  let generation = 0;
  let nextStep = 0;
  let nextGeneration = 0;
  const durations: number[] = [];
  const tally = { runs: 0, faults: 0, probes: 0, twins: 0, beforeCommit: 0, afterCommit: 0 };
  let client: SteadyClient;

  const olsrFile = (step: number) => {
    const file = path.join(dir, "sources", `olsr-${step}.txt`);
    if (!existsSync(file)) writeFileSync(file, rawSources(network, step, SEED).olsr);
    return file;
  };
  const wikiFile = () => path.join(dir, "sources", "wiki.html");
  /** ondataservice's ten nodes of the live sample, on access points of this network; the first one's firmware is the generation */
  const odsFile = (g: number) => {
    const file = path.join(dir, "sources", `ondataservice-${g}.db`);
    if (existsSync(file)) return file;
    const db = new SQL.Database(ods);
    db.run("DELETE FROM ifaces");
    const ips = db.exec("SELECT mainip FROM nodes ORDER BY mainip")[0].values.map((v) => String(v[0]));
    ips.forEach((ip, i) => {
      const main = String(network.accesspoints[i * 3].main_ip);
      db.run("UPDATE nodes SET mainip = ?, originator = ?, on_olsrd_mainip = ?, on_core_ver = ? WHERE mainip = ?", [
        main,
        main,
        main,
        i === 0 ? version(g) : "0.5.4-1",
        ip,
      ]);
    });
    writeFileSync(file, db.export());
    db.close();
    return file;
  };

  const hostArgs = () => [
    "--host",
    "nginx",
    "--host-config",
    hostConf,
    // the same command on every run (it is a setting): it waits while the marker file is there
    "--host-test",
    `if [ -e ${marker} ]; then echo $$ > ${testing}; sleep 3; fi; ${NGINX} -t -q -p ${prefix} -c ${path.join(prefix, "nginx.conf")}`,
    "--host-reload",
    `if [ -s ${prefix}/nginx.pid ]; then kill -HUP "$(cat ${prefix}/nginx.pid)"; fi`,
  ];
  const args = (step: number, g: number, where = { state, serve }) => [
    "cycle",
    "--state",
    where.state,
    "--serve",
    where.serve,
    "--olsr",
    olsrFile(step),
    "--wiki",
    wikiFile(),
    "--wiki-every",
    "changed",
    "--ondataservice",
    odsFile(g),
    "--ondataservice-every",
    "changed",
    "--at",
    atOf(step),
    ...hostArgs(),
  ];

  /** The command line as its own process, killed when told (after a delay, or once a condition holds). */
  function cycleRun(
    argv: string[],
    o: { failpoint?: Failpoint; killAfterLockMs?: number; killWhen?: () => boolean; noRights?: boolean } = {},
  ): Promise<Ran> {
    tally.runs++;
    const node = [process.execPath, ...cliArgs(), ...argv];
    // root without CAP_DAC_OVERRIDE (and the reading one): the file modes hold for it as for any user
    const [command, ...rest] = o.noRights ? ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", ...node] : node;
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.MESH_API_FAILPOINT;
    if (o.failpoint) env.MESH_API_FAILPOINT = o.failpoint;
    const t0 = performance.now();
    const child = spawn(command, rest, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    let timer: NodeJS.Timeout | undefined;
    let lockedAt: number | undefined;
    let killed = false;
    const lockFile = path.join(path.dirname(argv[argv.indexOf("--state") + 1]), ".state.lock");
    const watch = setInterval(() => {
      if (lockedAt === undefined && existsSync(lockFile)) {
        lockedAt = performance.now();
        if (o.killAfterLockMs !== undefined) timer = setTimeout(() => child.kill("SIGKILL"), o.killAfterLockMs);
      }
      if (!killed && o.killWhen?.()) {
        killed = true;
        child.kill("SIGKILL");
      }
    }, 5);
    return new Promise((resolve) =>
      child.on("close", (status, signal) => {
        clearTimeout(timer);
        clearInterval(watch);
        const end = performance.now();
        resolve({ status, signal, stdout, stderr, ms: end - t0, ...(lockedAt !== undefined && { workMs: end - lockedAt }) });
      }),
    );
  }

  /**
   * A run that is not faulted, in this process (support/tree.ts command): the runs around the faults
   * need no process of their own, and its time, all of it work, is a bound on a faulted run's work
   * (which a cold process makes longer), for the timer's kill.
   */
  async function cycleHere(argv: string[]): Promise<Ran> {
    tally.runs++;
    const t0 = performance.now();
    const r = await command(argv);
    const ms = performance.now() - t0;
    return { status: r.status, signal: null, stdout: r.stdout, stderr: r.stderr, ms, workMs: ms };
  }

  const get = async (target: string) => {
    const r = await rawRequest(port, "GET", target);
    return { status: r.status, body: r.body.toString("utf8") };
  };
  /** nginx runs the rules of generation g: its firmware version is found */
  const answersVersion = async (g: number) => {
    const r = await get(versionTarget(g));
    return r.status === 200 && (JSON.parse(r.body) as { main_ip: string }[]).map((ap) => ap.main_ip).join() === ap0;
  };

  /** A run that must succeed; `rules` says what it does with nginx's configuration. */
  async function succeed(g: number, rules: "updated" | "owed" | "same"): Promise<Ran> {
    const step = nextStep++;
    const r = await cycleHere(args(step, g));
    expect(r.status, r.stderr).toBe(0);
    if (r.workMs !== undefined) durations.push(r.workMs);
    runNo++;
    committedStep = step;
    generation = g;
    const suffix = {
      updated: "; nginx configuration updated and reloaded",
      owed: "; nginx reloaded \\(an earlier run had not reloaded it\\)",
      same: "",
    }[rules];
    expect(r.stdout).toMatch(
      new RegExp(
        `^cycle ${runNo} at ${atOf(step)}: imported olsr.*; ${APS + step} access points, \\d+ links, \\d+ sites; serving runs/${runName(runNo)}/build(, snapshot written)?${suffix}\\n$`,
      ),
    );
    await servesRun();
    return r;
  }

  /** nginx serves the committed run: its rules (reloaded), its record and its access points */
  async function servesRun(): Promise<void> {
    // a reload (SIGHUP) takes nginx a moment
    let reloaded = false;
    for (const until = Date.now() + 10_000; !reloaded && Date.now() < until; await sleep(50)) reloaded = await answersVersion(generation);
    expect(reloaded, `nginx answers ${versionTarget(generation)}`).toBe(true);
    expect(existsSync(journal)).toBe(false);
    expect(readlinkSync(path.join(state, "current"))).toBe(`runs/${runName(runNo)}`);
    expect(JSON.parse(readFileSync(path.join(state, "cycle.json"), "utf8"))).toMatchObject({ runs: runNo, at: atOf(committedStep) });
    const list = await get("/api/v1/accesspoint/?status=all");
    expect(list.status).toBe(200);
    expect((JSON.parse(list.body) as unknown[]).length).toBe(APS + committedStep);
  }

  /** Waits for the detached removers (io/write/swap.ts): only the committed run and the one before it are left. */
  async function settledRuns(): Promise<void> {
    const runs = path.join(state, "runs");
    const want = [runNo - 1, runNo].filter((n) => n > 0).map(runName);
    for (const until = Date.now() + 60_000; Date.now() < until; await sleep(50))
      if (readdirSync(runs).sort().join() === want.join()) return;
    expect(readdirSync(runs).sort()).toEqual(want);
  }

  /** A copy of the committed state (without older runs) that runs the same step to its end: what a completed run leaves. */
  function twinOf(k: number): { state: string; serve: string } {
    const twin = path.join(dir, `twin-${k}`);
    const twinState = path.join(twin, "state");
    mkdirSync(path.join(twinState, "runs"), { recursive: true });
    for (const name of readdirSync(state))
      if (name !== "runs") cpSync(path.join(state, name), path.join(twinState, name), { recursive: true, verbatimSymlinks: true });
    cpSync(path.join(state, "runs", runName(runNo)), path.join(twinState, "runs", runName(runNo)), { recursive: true });
    return { state: twinState, serve: path.join(twin, "www") };
  }

  beforeAll(async () => {
    dir = tempDir();
    fsDir = path.join(dir, "fs");
    mkdirSync(fsDir);
    // The state on a file system of its own, to fill it later (root only: see the disk test).
    if (AS_ROOT) {
      sh("mount", ["-t", "tmpfs", "-o", "size=512m,mode=0755", "tmpfs", fsDir]);
      mount = fsDir;
    }
    state = path.join(fsDir, "state");
    serve = path.join(dir, "www");
    journal = path.join(state, "host-config.json");
    prefix = path.join(dir, "nginx");
    mkdirSync(prefix);
    hostConf = path.join(prefix, "mesh-api.conf");
    marker = path.join(prefix, "slow-test");
    testing = path.join(prefix, "testing");
    mkdirSync(path.join(dir, "sources"));
    network = synthesize({ aps: APS, seed: SEED });
    writeFileSync(wikiFile(), rawSources(network, 0, SEED).wiki);
    ap0 = String(network.accesspoints[0].main_ip);
    SQL = await (createRequire(import.meta.url)("sql.js") as () => Promise<SqlJs>)();
    ods = readFileSync(new URL("./fixtures/live-sample/steps/03/ondataservice.db", import.meta.url));
    port = await freePort();
    const at = (f: string) => path.join(prefix, f);
    writeFileSync(
      at("nginx.conf"),
      [
        // Started as root, nginx's workers would run as nobody, who may not read the build.
        ...(AS_ROOT ? ["user root root;"] : []),
        "worker_processes 1;",
        `pid ${at("nginx.pid")};`,
        `error_log ${at("error.log")};`,
        "events { worker_connections 256; }",
        "http {",
        "  include /etc/nginx/mime.types;",
        "  access_log off;",
        ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((t) => `  ${t}_temp_path ${at(`tmp-${t}`)};`),
        "  server {",
        `    listen 127.0.0.1:${port};`,
        `    root ${serve};`,
        `    include ${hostConf};`,
        "  }",
        "}",
        "",
      ].join("\n"),
    );
    // The first run makes the state and the include file; nginx starts on them.
    const step = nextStep++;
    const first = await cycleHere(args(step, nextGeneration++));
    expect(first.status, first.stderr).toBe(0);
    if (first.workMs !== undefined) durations.push(first.workMs);
    [runNo, committedStep, generation] = [1, step, 0];
    server = await spawnServer("nginx", NGINX, ["-p", prefix, "-c", at("nginx.conf"), "-g", "daemon off;"], port, {
      logs: [at("error.log")],
      signal: "SIGQUIT",
    });
    await servesRun();

    // The client: lists and details that exist from the first run on, each lane a request every 10-20 ms.
    const aps = JSON.parse((await get("/api/v1/accesspoint/?status=all")).body) as { main_ip: string }[];
    const targets = [
      "/api/v1/",
      "/api/v1/accesspoint/",
      "/api/v1/accesspoint/?status=all",
      "/api/v1/accesspoint/?status=online&data_format=geojson",
      "/api/v1/link/?status=all",
      "/api/v1/link/",
      "/api/v1/interface/",
      "/api/v1/site/",
      ...aps.slice(0, 30).map((ap) => `/api/v1/accesspoint/${ap.main_ip}`),
      ...aps.slice(0, 10).map((ap) => `/api/v1/accesspoint/${ap.main_ip}/links/?status=all`),
      ...[1, 2, 3, 10, 50].map((id) => `/api/v1/link/${id}`),
    ];
    client = steadyClient({ port, targets, lanes: LANES, pause: (i) => 10 + ((i * 7) % 11) });
  }, 180_000);

  afterAll(async () => {
    await client?.stop();
    await server?.stop();
    // lazily: a detached remover may still be emptying a run folder in it
    if (mount) spawnSync("umount", ["-l", mount]);
  });

  /** The faults build on each other's state: after a failure the later ones are skipped, not failed in its wake. */
  let broken: string | undefined;
  const chained =
    (label: string, skipped = false) =>
    (name: string, body: () => Promise<void>, timeout: number) =>
      it.skipIf(skipped)(
        name,
        async ({ skip }) => {
          if (broken) skip(`after the failure at ${broken}`);
          try {
            await body();
          } catch (err) {
            broken = label;
            throw err;
          }
        },
        timeout,
      );

  for (const [k, fault] of PLAN.entries())
    chained(faultName(fault))(
      `leaves the state as it was, or as a completed run leaves it, after ${faultName(fault)}; the next run succeeds`,
      async () => {
        tally.faults++;
        const before = seenOf(state, serve);
        const hostBefore = readFileSync(hostConf, "utf8");
        expect(existsSync(journal)).toBe(false);
        const n = runNo + 1;
        const step = nextStep++;
        const g = nextGeneration++;
        // a kill that may come after the commit is compared with a twin that completes the same run
        const twin =
          fault.kind === "host-test" || (fault.kind === "failpoint" && BEFORE_COMMIT.includes(fault.point)) ? undefined : twinOf(k);

        let r: Ran;
        if (fault.kind === "failpoint") {
          r = await cycleRun(args(step, g), { failpoint: fault.point });
          expect(r.signal, r.stderr).toBe("SIGKILL");
        } else if (fault.kind === "timer") {
          // the shortest run's work so far (a run's time varies with the machine's load): the kill falls within the work
          const shortest = Math.min(...durations);
          const ms = Math.round(fault.fraction * shortest);
          r = await cycleRun(args(step, g), { killAfterLockMs: ms });
          const left = path.join(state, "runs", runName(n));
          const where =
            readlinkSync(path.join(state, "current")) !== before.current
              ? "after the commit"
              : `before the commit, leaving ${existsSync(left) ? `runs/${runName(n)}/{${readdirSync(left).sort().join(",")}}` : "no run folder"}${existsSync(journal) ? " and a journal" : ""}`;
          console.log(
            `cycle faults: a timer to kill run ${n} ${ms} ms after it took the lock (${fault.fraction} of ${Math.round(shortest)} ms): ${r.signal ?? `exit ${r.status}`}, ${where}`,
          );
          // a run quicker than the timer completed
          expect(r.signal === "SIGKILL" || r.status === 0, r.stderr).toBe(true);
        } else {
          writeFileSync(marker, "");
          rmSync(testing, { force: true });
          r = await cycleRun(args(step, g), { killWhen: () => existsSync(testing) });
          rmSync(marker);
          // the test's shell outlives the killed run: it is ended too
          let pid = 0;
          for (const until = Date.now() + 2000; pid === 0 && Date.now() < until; await sleep(10))
            pid = Number(readFileSync(testing, "utf8").trim());
          if (pid > 0) process.kill(pid, "SIGKILL");
          expect(r.signal, r.stderr).toBe("SIGKILL");
          // the run had written the new rules when it was killed
          expect(readFileSync(hostConf, "utf8")).not.toBe(hostBefore);
        }

        const committed = readlinkSync(path.join(state, "current")) !== before.current;
        if (fault.kind === "failpoint") expect(committed).toBe(!BEFORE_COMMIT.includes(fault.point));
        if (fault.kind === "host-test") expect(committed).toBe(false);

        if (!committed) {
          tally.beforeCommit++;
          expect(differences(before, seenOf(state, serve))).toEqual([]);
          // nginx was never reloaded with the rules of a run that did not commit
          expect(await answersVersion(g)).toBe(false);
          expect(await answersVersion(generation)).toBe(true);
          if (existsSync(journal)) {
            // The killed run had changed the include file: the next run's recovery puts its old text back.
            // A run stopped right after its recovery (itself a fault) shows it.
            tally.probes++;
            const probe = await cycleRun(args(nextStep++, g), { failpoint: "recovered" });
            expect(probe.signal, probe.stderr).toBe("SIGKILL");
            expect(differences(before, seenOf(state, serve))).toEqual([]);
          }
          expect(readFileSync(hostConf, "utf8")).toBe(hostBefore);
          expect(existsSync(journal)).toBe(false);
          await succeed(nextGeneration++, "updated");
        } else {
          tally.afterCommit++;
          tally.twins++;
          [runNo, committedStep, generation] = [n, step, g];
          expect(twin).toBeDefined();
          expect(readlinkSync(path.join(state, "current"))).toBe(`runs/${runName(n)}`);
          const completed = await cycleHere(args(step, g, twin!));
          expect(completed.status, completed.stderr).toBe(0);
          expect(differences(seenOf(twin!.state, twin!.serve), seenOf(state, serve))).toEqual([]);
          // The include file holds the committed run's rules; their reload is owed unless it was made.
          expect(readFileSync(hostConf, "utf8")).not.toBe(hostBefore);
          const owed = existsSync(journal);
          if (fault.kind === "failpoint") {
            expect(owed).toBe(fault.point !== "reloaded");
            if (owed) expect(await answersVersion(g)).toBe(false);
          }
          // The next run with the same rules: the reload a killed run owed is made now.
          await succeed(g, owed ? "owed" : "same");
        }
        if (twin) rmSync(path.dirname(twin.state), { recursive: true, force: true });
      },
      120_000,
    );

  // Both need root: mounting a file system of its own, and dropping the capability that lets root
  // write into a read-only folder (a user without rights cannot be made otherwise).
  chained("the full disk", !AS_ROOT)(
    "stops with exit 4 on a full disk, naming the path, leaves the state as it was, and runs again once there is room",
    async () => {
      tally.faults++;
      await settledRuns();
      const before = seenOf(state, serve);
      const hostBefore = readFileSync(hostConf, "utf8");
      // Room for what is there and for half the dump a run imports first: the next run does not fit.
      const fs = statfsSync(fsDir);
      const used = (fs.blocks - fs.bfree) * fs.bsize;
      const dump = path.join(state, "current", "dump");
      const dumpBytes = [...treeDigest(dump).keys()].reduce((sum, f) => sum + statSync(path.join(dump, f)).size, 0);
      sh("mount", ["-o", `remount,size=${Math.ceil((used + dumpBytes / 2) / 1024)}k`, fsDir]);
      let r: Ran;
      try {
        r = await cycleRun(args(nextStep++, nextGeneration++));
      } finally {
        sh("mount", ["-o", "remount,size=512m", fsDir]);
      }
      console.log(`cycle faults: on a full disk: ${r.stderr.trim()}`);
      expect(r.status, r.stderr).toBe(4);
      expect(r.stderr).toMatch(/the disk is full/);
      expect(r.stderr).toContain(`cannot write ${state}`);
      expect(r.stderr).toContain(`the state in ${state} and the served build were left as they were`);
      expect(differences(before, seenOf(state, serve))).toEqual([]);
      expect(readFileSync(hostConf, "utf8")).toBe(hostBefore);
      expect(existsSync(journal)).toBe(false);
      expect(await answersVersion(generation)).toBe(true);
      await succeed(nextGeneration++, "updated");
    },
    120_000,
  );

  chained("the runs without write rights", !AS_ROOT)(
    "stops with exit 4 without write rights (the lock's folder, then the state's runs/), naming the path, and leaves the state as it was",
    async () => {
      tally.faults += 2;
      await settledRuns();
      const before = seenOf(state, serve);
      const hostBefore = readFileSync(hostConf, "utf8");
      const lock = path.join(fsDir, ".state.lock");
      const readOnly = async (folder: string) => {
        const mode = statSync(folder).mode & 0o7777;
        chmodSync(folder, 0o555);
        try {
          return await cycleRun(args(nextStep++, nextGeneration++), { noRights: true });
        } finally {
          chmodSync(folder, mode);
        }
      };

      // The lock's place (beside the state) may not be written.
      const locked = await readOnly(fsDir);
      console.log(`cycle faults: without rights: ${locked.stderr.trim()}`);
      expect(locked.status, locked.stderr).toBe(4);
      expect(locked.stderr).toContain(`cannot write ${lock}: permission denied`);
      expect(locked.stderr).toContain(`the state in ${state} and the served build were left as they were`);
      expect(differences(before, seenOf(state, serve))).toEqual([]);

      // The lock's place may be written, the state's runs/ may not.
      const r = await readOnly(path.join(state, "runs"));
      console.log(`cycle faults: without rights: ${r.stderr.trim()}`);
      expect(r.status, r.stderr).toBe(4);
      expect(r.stderr).toContain(`cannot write ${path.join(state, "runs", runName(runNo + 1))}: permission denied`);
      expect(r.stderr).toContain(`the state in ${state} and the served build were left as they were`);
      expect(existsSync(lock)).toBe(false);
      expect(differences(before, seenOf(state, serve))).toEqual([]);
      expect(readFileSync(hostConf, "utf8")).toBe(hostBefore);
      expect(existsSync(journal)).toBe(false);
      await succeed(nextGeneration++, "updated");
    },
    120_000,
  );

  it("answered every request of the client through nginx with 200 and a complete JSON body", async () => {
    await client.stop();
    console.log(
      `cycle faults (seed ${SEED}): ${tally.runs} runs of the command, ${tally.faults} faults (${tally.beforeCommit} kills before the commit, ` +
        `${tally.afterCommit} after it, compared with ${tally.twins} twin runs; ${tally.probes} runs stopped after their recovery), ` +
        `${client.answered} requests to nginx answered, ${client.failures.length} failed, in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    expect(client.failures.slice(0, 10)).toEqual([]);
    // a steady stream throughout (unless the faults stopped early)
    if (!broken) expect(client.answered).toBeGreaterThan(500);
  });
});
