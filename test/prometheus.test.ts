import { spawnSync } from "node:child_process";
import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { statusOf } from "../src/core/model/model.ts";
import { placeholderValues } from "../src/core/plan.ts";
import { FILES, TYPED_FILES } from "../src/core/routes.ts";
import { build, validate } from "../src/index.ts";
import { rawRequest } from "./support/http.ts";
import { startNginx } from "./support/nginx.ts";
import { freePort, spawnServer, type RunningServer } from "./support/served.ts";
import { command, ROOT, tempDir } from "./support/tree.ts";

/**
 * The metrics file (issue 42) as Prometheus takes it: Debian's `promtool check metrics` finds nothing
 * to say of a build's file (hostile firmware versions included) nor of a cycle's (with its health), and
 * a real Prometheus (Debian's 2.42), with a configuration and data folder of its own here, scrapes
 * both from Debian's nginx serving them and answers instant queries with the builds' values: the
 * online count, every hostile version as it was, the cycle's runs and failures.
 */

/** Debian's prometheus package; scripts/test-deps.mjs installs it for `npm test`. */
const PROMETHEUS = process.env.MESH_API_PROMETHEUS ?? "/usr/bin/prometheus";
const PROMTOOL = process.env.MESH_API_PROMTOOL ?? "/usr/bin/promtool";
const METRICS_TYPE = TYPED_FILES.find((t) => t.file === FILES.metrics)!.type;

const TAKEN = "2026-11-22T03:00:00Z";
/** Firmware versions a router may report, beside the repository's data/. */
const HOSTILE = ['say "hi"', "back\\slash", "new\nline", "\\n", 'all\\"\n', "tab\tcr\r", "Ünïcödé 📡", "}{,=", "# HELP x y"];
const LIVE = path.join(ROOT, "test/fixtures/live-sample/steps/");
const RUNS = ["2026-11-20T10:00:00Z", "2026-11-20T10:06:00Z"];

let dir: string;
let out: string;
let online: number;
let versions: (string | null)[];
let serve: string;
const servers: RunningServer[] = [];
let prometheus: RunningServer | undefined;

const promtool = (file: string) => spawnSync(PROMTOOL, ["check", "metrics"], { input: readFileSync(file), encoding: "utf8" });

/** data/ with one online access point per hostile firmware version. */
function hostileData(): string {
  const data = path.join(dir, "data");
  cpSync(path.join(ROOT, "data"), data, { recursive: true });
  const aps = HOSTILE.map((v, i) => ({
    main_ip: `10.250.0.${i + 1}`,
    mesh_version: v,
    lastseen_timestamp: TAKEN,
    interfaces: [{ id: 900_001 + i, addresses: [{ id: 900_001 + i, address: `10.250.0.${i + 1}`, netmask_prefixlen: 16 }] }],
  }));
  writeFileSync(path.join(data, "accesspoints", "hostile.json"), JSON.stringify(aps));
  return data;
}

/** The cycle's command line for a run of the live sample at an instant. */
const cycleArgs = (step: string, at: string) => [
  "cycle",
  "--state",
  path.join(dir, "state"),
  "--serve",
  path.join(dir, "www"),
  "--olsr",
  `${LIVE}${step}/olsr.txt`,
  "--wiki",
  `${LIVE}00/wiki_nodes.html`,
  "--ondataservice",
  `${LIVE}00/ondataservice.db`,
  "--at",
  at,
];

interface Vector {
  readonly metric: Record<string, string>;
  readonly value: [number, string];
}

async function query(port: number, promql: string): Promise<Vector[]> {
  const r = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(promql)}`);
  const body = (await r.json()) as { status: string; data?: { resultType: string; result: Vector[] }; error?: string };
  if (body.status !== "success") throw new Error(`${promql}: ${body.error}`);
  return body.data!.result;
}

/** What Prometheus answers once the query has a result (its first scrapes take a moment), within `ms`. */
async function eventually(port: number, promql: string, ms = 30_000): Promise<Vector[]> {
  for (const until = Date.now() + ms; ; await new Promise((r) => setTimeout(r, 250))) {
    const result = await query(port, promql);
    if (result.length > 0 || Date.now() > until) return result;
  }
}

const value = (v: Vector[]) => v.map((x) => Number(x.value[1]));

beforeAll(async () => {
  expect(existsSync(PROMETHEUS), `${PROMETHEUS}: apt-get install prometheus`).toBe(true);
  dir = tempDir();
  // a build of data/ with the hostile versions
  const data = hostileData();
  out = path.join(dir, "dist");
  const result = await build({ data, out });
  const model = result.model!;
  online = model.accesspoints.filter((a) => statusOf(a.lastseen_timestamp, model.takenAt) === "online").length;
  versions = model.accesspoints.map((a) => a.mesh_version);
  // a cycle's build: a good run, a failed one, a good one
  expect((await command(cycleArgs("00", RUNS[0]))).status).toBe(0);
  const failed = await command(cycleArgs("01", RUNS[1]), ROOT, { MESH_API_FAILPOINT: "built:ENOSPC" });
  expect(failed.status, failed.stderr).toBe(4);
  const good = await command(cycleArgs("01", RUNS[1]));
  expect(good.status, good.stderr).toBe(0);
  serve = path.join(dir, "www");
  // nginx serving each, with the configuration `host-config nginx --standalone` prints for it
  const cycled = await validate({ data: path.join(dir, "state", "dump") });
  servers.push(await startNginx(out, result.values), await startNginx(serve, placeholderValues(cycled.model!)));
}, 120_000);

afterAll(async () => {
  await prometheus?.stop();
  for (const s of servers) await s.stop();
});

describe("promtool check metrics", () => {
  it("finds nothing to say of a build's metrics file, hostile firmware versions included", () => {
    const r = promtool(path.join(out, FILES.metrics));
    expect(r.stdout + r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(readFileSync(path.join(out, FILES.metrics), "utf8")).toContain('mesh_version="all\\\\\\"\\n"');
  });

  it("finds nothing to say of a cycle's, whose health says one failed run before it", () => {
    const file = path.join(serve, FILES.metrics);
    const r = promtool(file);
    expect(r.stdout + r.stderr).toBe("");
    expect(r.status).toBe(0);
    const text = readFileSync(file, "utf8");
    expect(text).toMatch(/^mesh_cycle_runs_total 2$/m);
    expect(text).toMatch(/^mesh_cycle_failed_runs 1$/m);
    expect(text).toMatch(/^mesh_cycle_previous_run_duration_seconds \d+(\.\d+)?$/m);
  });

  it("would say something of a broken file (the check can fail)", () => {
    const broken = path.join(dir, "broken");
    writeFileSync(broken, 'mesh_x{a="b} 1\n');
    expect(promtool(broken).status).not.toBe(0);
  });
});

describe("Prometheus scraping the builds from nginx", () => {
  let port: number;
  beforeAll(async () => {
    port = await freePort();
    const config = path.join(dir, "prometheus.yml");
    const target = (s: RunningServer) => `["127.0.0.1:${s.port}"]`;
    writeFileSync(
      config,
      [
        "global:",
        "  scrape_interval: 1s",
        "  scrape_timeout: 1s",
        "scrape_configs:",
        "  - job_name: mesh",
        "    metrics_path: /metrics",
        `    static_configs: [{ targets: ${target(servers[0])} }]`,
        "  - job_name: mesh-cycle",
        "    metrics_path: /metrics",
        `    static_configs: [{ targets: ${target(servers[1])} }]`,
        "",
      ].join("\n"),
    );
    prometheus = await spawnServer(
      "prometheus",
      PROMETHEUS,
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${path.join(dir, "prometheus-data")}`,
        `--web.listen-address=127.0.0.1:${port}`,
        "--log.level=warn",
      ],
      port,
    );
    // it listens before its storage is ready: its readiness endpoint says when
    for (const until = Date.now() + 30_000; (await fetch(`http://127.0.0.1:${port}/-/ready`)).status !== 200;) {
      if (Date.now() > until) throw new Error("Prometheus did not get ready in 30 s");
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 60_000);

  it("finds the file at /metrics with the format's type, as nginx serves it", async () => {
    const r = await rawRequest(servers[0].port, "GET", FILES.metrics);
    expect([r.status, r.headers["content-type"]]).toEqual([200, METRICS_TYPE]);
    expect(r.body.equals(readFileSync(path.join(out, FILES.metrics)))).toBe(true);
  });

  it("scrapes both targets and answers the online count of the build's access points", async () => {
    expect(value(await eventually(port, 'up{job="mesh"} == 1'))).toEqual([1]);
    expect(value(await eventually(port, 'up{job="mesh-cycle"} == 1'))).toEqual([1]);
    expect(online).toBeGreaterThan(HOSTILE.length);
    expect(value(await eventually(port, 'mesh_accesspoints{job="mesh",status="online"}'))).toEqual([online]);
    // the same from each access point's status
    expect(value(await eventually(port, 'sum(mesh_accesspoint_status{job="mesh",status="online"})'))).toEqual([online]);
    expect(value(await eventually(port, 'count(mesh_accesspoint_status{job="mesh"})'))).toEqual([3 * versions.length]);
  }, 60_000);

  it("reads every hostile firmware version as it was (the version without one has no label)", async () => {
    const result = await eventually(port, 'mesh_accesspoints_by_version{job="mesh"}');
    const read = new Map(result.map((v) => [v.metric.mesh_version ?? null, Number(v.value[1])]));
    const want = new Map<string | null, number>();
    for (const v of versions) want.set(v === "" ? null : v, (want.get(v === "" ? null : v) ?? 0) + 1);
    expect(read).toEqual(want);
    for (const v of HOSTILE) expect(read.get(v), JSON.stringify(v)).toBe(1);
  }, 60_000);

  it("reads the cycle's health: its runs, the failed one, each source's last import", async () => {
    expect(value(await eventually(port, "mesh_cycle_runs_total"))).toEqual([2]);
    expect(value(await eventually(port, "mesh_cycle_failed_runs"))).toEqual([1]);
    const sources = await eventually(port, "mesh_cycle_source_last_import_timestamp_seconds");
    expect(Object.fromEntries(sources.map((v) => [v.metric.source, Number(v.value[1])]))).toEqual({
      olsr: Date.parse(RUNS[1]) / 1000,
      wiki: Date.parse(RUNS[0]) / 1000,
      ondataservice: Date.parse(RUNS[0]) / 1000,
    });
    expect(value(await eventually(port, "mesh_cycle_previous_run_duration_seconds > 0"))).toHaveLength(1);
    // the data's instant, the second run's
    expect(value(await eventually(port, 'mesh_data_timestamp_seconds{job="mesh-cycle"}'))).toEqual([Date.parse(RUNS[1]) / 1000]);
  }, 60_000);
});
