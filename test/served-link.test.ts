import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validate } from "../src/index.ts";
import { synthesize, writeSynthDump, type SynthDump } from "../src/gen/synth.ts";
import { lockOutput } from "../src/io/write/lock.ts";
import { MARKER } from "../src/io/write/ownership.ts";
import { rawRequest } from "./support/http.ts";
import { steadyClient, type SteadyClient } from "./support/live-clients.ts";
import { startNginx } from "./support/nginx.ts";
import type { RunningServer } from "./support/served.ts";
import { cliArgs, cliAsync, command, removersDone, ROOT, tempDir, treeDigest } from "./support/tree.ts";

/**
 * Issue 41, item 8 and part of item 3. `build --out <link>` writes each build into a new folder beside
 * the link's target (`<link name>.<n>`) and points the link at it with one rename, so a web server
 * serving the link never finds no folder (two folder renames did: 1 of 37,487 requests to nginx got
 * 404 over three builds). And no command but the cycle writes into a cycle's state: its served link,
 * its builds, its dump.
 */

/** Every entry under `root`, links not followed: a folder, a link with its text, a file with its SHA-256. */
function layout(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (rel: string) => {
    for (const name of readdirSync(path.join(root, rel)).sort()) {
      const at = path.join(rel, name);
      const st = lstatSync(path.join(root, at));
      if (st.isSymbolicLink()) out.set(at, `-> ${readlinkSync(path.join(root, at))}`);
      else if (st.isDirectory()) {
        out.set(at, `dir ${st.ino}`);
        walk(at);
      } else
        out.set(
          at,
          createHash("sha256")
            .update(readFileSync(path.join(root, at)))
            .digest("hex"),
        );
    }
  };
  walk("");
  return out;
}

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

/** Waits until `gone` no longer exists and no detached remover is busy in its folder. */
async function removed(gone: string): Promise<void> {
  for (const until = Date.now() + 60_000; existsSync(gone) && Date.now() < until;) await sleep(50);
  expect(existsSync(gone), `${gone} is still there`).toBe(false);
  removersDone(path.dirname(gone));
}

/** The network of step `k`: the same access points, taken an hour later each step, every seventh one with another owner. */
function step(base: SynthDump, k: number): SynthDump {
  return {
    network: { ...base.network, taken_at: `2026-11-22T0${3 + k}:00:00Z` },
    accesspoints: base.accesspoints.map((ap, i) => (i % 7 === 0 ? { ...ap, owner: `owner of step ${k}` } : ap)),
    links: base.links,
  };
}

describe("build --out <link> while nginx serves the link", () => {
  // The size: the lists (about 0.4 MB) are being read while the link is repointed, as megabytes were at 1,500
  const APS = 300;
  const STEPS = 4; // one build before nginx starts, three while it serves
  let dir: string;
  let www: string;
  let link: string;
  let server: RunningServer;
  const data: string[] = [];
  const owners = new Set<string>();
  let client: SteadyClient;
  /** per build while serving: the link's text before and after, the previous target's inode before and after */
  const swaps: { before: string; after: string; isLink: boolean; inoBefore: number; inoAfter?: number; status: number; stderr: string }[] =
    [];
  const servedAfter: string[] = [];
  const retired: boolean[] = [];
  const seconds: number[] = [];

  beforeAll(async () => {
    dir = tempDir();
    const base = synthesize({ aps: APS, seed: 41 });
    for (let k = 0; k < STEPS; k++) {
      data.push(path.join(dir, `data-${k}`));
      await writeSynthDump(data[k], step(base, k));
    }
    www = path.join(dir, "www");
    mkdirSync(www);
    link = path.join(www, "api");
    // The first time (docs/hosting.md): a link to a folder not there yet; the first build makes api.1.
    symlinkSync("api.0", link);
    const first = await cliAsync(["build", "--data", data[0], "--out", link, "-q"], dir);
    expect(first.status, first.stderr).toBe(0);
    expect(readlinkSync(link)).toBe("api.1");

    const { values } = await validate({ data: data[0] });
    server = await startNginx(link, values!);
    // the first access point's owner changes every step
    const ips = base.accesspoints.map((ap) => String(ap.main_ip));
    const tracked = `/api/v1/accesspoint/${ips[0]}`;
    const targets = [
      "/api/v1/",
      tracked,
      ...ips.slice(1, 60).map((ip) => `/api/v1/accesspoint/${ip}`),
      ...ips.slice(0, 10).map((ip) => `/api/v1/accesspoint/${ip}/links/?status=all`),
      ...[1, 2, 3, 10, 100].map((id) => `/api/v1/link/${id}`),
      "/api/v1/site/",
      "/api/v1/accesspoint/?status=online",
      "/api/v1/link/?status=all",
      tracked,
    ];
    client = steadyClient({
      port: server.port,
      targets,
      lanes: 6,
      pause: () => 3,
      served: () => readlinkSync(link),
      onAnswer: (target, body) => {
        if (target === tracked) owners.add(String((body as { owner?: string }).owner));
      },
    });
    try {
      await sleep(300);
      for (let k = 1; k < STEPS; k++) {
        const before = readlinkSync(link);
        const inoBefore = statSync(path.join(www, before)).ino;
        const started = performance.now();
        const r = await cliAsync(["build", "--data", data[k], "--out", link, "-q"], dir);
        seconds.push((performance.now() - started) / 1000);
        const isLink = lstatSync(link).isSymbolicLink();
        swaps.push({
          before,
          after: isLink ? readlinkSync(link) : "(not a link)",
          isLink,
          inoBefore,
          inoAfter: existsSync(path.join(www, before)) ? statSync(path.join(www, before)).ino : undefined,
          status: r.status,
          stderr: r.stderr,
        });
        // what nginx answers now: the new build's
        const now = await rawRequest(server.port, "GET", tracked);
        servedAfter.push(String((JSON.parse(now.body.toString("utf8")) as { owner?: string }).owner));
        // the build before the previous one goes (a detached remover); the previous one stays
        if (k >= 2) {
          await removed(path.join(www, `api.${k - 1}`));
          retired.push(existsSync(path.join(www, before)));
        }
        await sleep(300);
      }
    } finally {
      await client.stop();
    }
  }, 600_000);

  afterAll(async () => {
    await server?.stop();
  });

  it("answered every request during three builds: 200 with a complete JSON body, never a missing folder", () => {
    console.log(
      `served link (${APS} access points): ${client.answered} answers from nginx during three builds (${seconds.map((s) => s.toFixed(1)).join(", ")} s), ` +
        `${client.inFlight} of them in flight while the link was repointed (the largest ${client.inFlightBytes} bytes), ${client.failures.length} failed`,
    );
    expect(client.failures.slice(0, 10)).toEqual([]);
    expect(client.answered).toBeGreaterThan(300);
    // every build was served in turn, and the client saw the swaps happen
    expect(servedAfter).toEqual(["owner of step 1", "owner of step 2", "owner of step 3"]);
    expect(owners.has("owner of step 3")).toBe(true);
    expect(owners.size).toBeGreaterThanOrEqual(3);
  });

  it("keeps the link a link and points it at a new folder each build; the folder served before is not moved", () => {
    expect(swaps.map((s) => [s.status, s.stderr])).toEqual([
      [0, ""],
      [0, ""],
      [0, ""],
    ]);
    expect(swaps.map((s) => [s.isLink, s.before, s.after])).toEqual([
      [true, "api.1", "api.2"],
      [true, "api.2", "api.3"],
      [true, "api.3", "api.4"],
    ]);
    // the same folder, not renamed away and back, nor replaced: requests in flight finish on it
    for (const s of swaps) expect(s.inoAfter).toBe(s.inoBefore);
    expect(retired).toEqual([true, true]);
  });

  it("leaves the link, the build it serves and the one before, each marked as a build", () => {
    removersDone(www);
    expect(readdirSync(www).sort()).toEqual(["api", "api.3", "api.4"]);
    for (const b of ["api.3", "api.4"])
      expect(JSON.parse(readFileSync(path.join(www, b, MARKER), "utf8"))).toMatchObject({ kind: "build" });
  });
});

describe("build --out <link>: the guarantees of a folder's build", () => {
  const SAMPLE = path.join(ROOT, "data");

  /** A folder `www` with `api` linking to a first build `api.1`, made by the CLI once, copied for each test. */
  let first: string;
  beforeAll(async () => {
    first = tempDir();
    const www = path.join(first, "www");
    mkdirSync(www);
    symlinkSync("api.0", path.join(www, "api"));
    const r = await command(["build", "--data", SAMPLE, "--out", path.join(www, "api"), "-q"], first);
    expect(r.status, r.stderr).toBe(0);
    expect(readlinkSync(path.join(www, "api"))).toBe("api.1");
  }, 120_000);
  function served() {
    const dir = tempDir();
    cpSync(first, dir, { recursive: true, verbatimSymlinks: true });
    const www = path.join(dir, "www");
    return { dir, www, link: path.join(www, "api") };
  }

  it("a failed build leaves the link and its target as they were, and makes no folder", async () => {
    const { dir, www, link } = served();
    const broken = path.join(dir, "broken");
    cpSync(SAMPLE, broken, { recursive: true });
    writeFileSync(path.join(broken, "network.json"), "{ not json\n");
    const before = layout(dir);
    const r = await command(["build", "--data", broken, "--out", link], dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`${link} left unchanged`);
    expect(layout(dir)).toEqual(before);
    expect(readdirSync(www).sort()).toEqual(["api", "api.1"]);
  });

  it("carries the snapshots of the served build into the new one", async () => {
    const { dir, www, link } = served();
    expect((await command(["build", "--data", SAMPLE, "--out", link, "--snapshot", "-q"], dir)).status).toBe(0);
    const index = readFileSync(path.join(www, "api.2", "snapshots", "index.json"));
    const r = await command(["build", "--data", SAMPLE, "--out", link, "-q"], dir);
    expect(r.status, r.stderr).toBe(0);
    expect(readlinkSync(link)).toBe("api.3");
    expect(readFileSync(path.join(www, "api.3", "snapshots", "index.json"))).toEqual(index);
    expect(treeDigest(path.join(www, "api.3", "snapshots"))).toEqual(treeDigest(path.join(www, "api.2", "snapshots")));
    // snapshot through the link writes into the served build
    const s = await command(["snapshot", "--dist", link, "--data", SAMPLE, "-q"], dir);
    expect(s.status, s.stderr).toBe(0);
    expect(readlinkSync(link)).toBe("api.3");
  });

  it("refuses a file of the user's in the served build, changing nothing", async () => {
    const { dir, www, link } = served();
    writeFileSync(path.join(www, "api.1", "robots.txt"), "mine\n");
    const before = layout(dir);
    const r = await command(["build", "--data", SAMPLE, "--out", link], dir);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("it holds robots.txt, which mesh-api did not write");
    expect(layout(dir)).toEqual(before);
  });

  it("is refused while another writer holds the link's lock, or the lock of the folder it points at", async () => {
    const { dir, www, link } = served();
    const before = layout(dir);
    for (const take of [() => lockOutput(link, "api", { asNamed: true }), () => lockOutput(path.join(www, "api.1"), "api.1")]) {
      const held = take();
      try {
        const r = await command(["build", "--data", SAMPLE, "--out", link], dir);
        expect(r.status).toBe(2);
        expect(r.stderr).toMatch(/this process is writing it|another mesh-api \(pid \d+\) is writing it/);
      } finally {
        held.release();
      }
      expect(layout(dir)).toEqual(before);
    }
  });

  it("writes beside the link's target, wherever that is, and keeps the link's text relative or absolute", async () => {
    const dir = tempDir();
    const builds = path.join(dir, "builds");
    mkdirSync(builds);
    const www = path.join(dir, "www");
    mkdirSync(www);
    const rel = path.join(www, "api");
    symlinkSync("../builds/api.0", rel);
    expect((await command(["build", "--data", SAMPLE, "--out", rel, "-q"], dir)).status).toBe(0);
    expect(readlinkSync(rel)).toBe("../builds/api.1");
    const abs = path.join(www, "abs");
    symlinkSync(path.join(builds, "api.1"), abs);
    const r = await command(["build", "--data", SAMPLE, "--out", abs, "-q"], dir);
    expect(r.status, r.stderr).toBe(0);
    // named after the link, numbered past what that name has there
    expect(readlinkSync(abs)).toBe(path.join(builds, "abs.1"));
    expect(readdirSync(builds).sort()).toEqual(["abs.1", "api.1"]);
    // a folder of that name that is not a build is never removed, and its number is skipped
    mkdirSync(path.join(builds, "api.7"));
    writeFileSync(path.join(builds, "api.7", "mine.txt"), "mine\n");
    for (let i = 0; i < 2; i++) expect((await command(["build", "--data", SAMPLE, "--out", rel, "-q"], dir)).status).toBe(0);
    removersDone(builds);
    expect(readlinkSync(rel)).toBe("../builds/api.9");
    for (const until = Date.now() + 60_000; existsSync(path.join(builds, "api.1")) && Date.now() < until;)
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    removersDone(builds);
    expect(readdirSync(builds).sort()).toEqual(["abs.1", "api.7", "api.8", "api.9"]);
  });

  it("refuses a link to another link, and a link into a folder that does not exist", async () => {
    const { dir, www, link } = served();
    const chain = path.join(www, "chain");
    symlinkSync("api", chain);
    const nowhere = path.join(www, "nowhere");
    symlinkSync("missing/api.1", nowhere);
    const before = layout(dir);
    const a = await command(["build", "--data", SAMPLE, "--out", chain], dir);
    expect([a.status, a.stderr]).toEqual([
      2,
      `mesh-api: refusing to write to ${chain}: it is a symbolic link to another link, api; point ${chain} at a folder (ln -sfn <folder> ${chain}).\n`,
    ]);
    const b = await command(["build", "--data", SAMPLE, "--out", nowhere], dir);
    expect(b.status).toBe(2);
    expect(b.stderr).toMatch(
      /it is a symbolic link to missing\/api\.1, in a folder that does not exist; make .*missing, or point .* elsewhere\.$/m,
    );
    expect(layout(dir)).toEqual(before);
    expect(readlinkSync(link)).toBe("api.1");
  });

  it("Ctrl-C: removes the new folder being written; the link still points at the build it served", async () => {
    const { dir, www, link } = served();
    const big = path.join(dir, "big");
    await writeSynthDump(big, synthesize({ aps: 300, seed: 4 }));
    const before = layout(www);
    const child = spawn(process.execPath, [...cliArgs(), "build", "--data", big, "--out", link], { cwd: dir });
    let stderr = "";
    child.stderr.on("data", (c) => (stderr += c));
    const done = new Promise<number | null>((resolve) => child.on("close", (status) => resolve(status)));
    let ended = false;
    void done.then(() => (ended = true));
    const own = `.api.2.tmp-${child.pid}-`;
    while (!readdirSync(www).some((n) => n.startsWith(own))) {
      if (ended) throw new Error(`the build ended before it wrote: ${stderr}`);
      await sleep(5);
    }
    child.kill("SIGINT");
    expect(await done, stderr).toBe(130);
    expect(stderr).toMatch(/^mesh-api: interrupted, previous output kept \(.*api still points at api\.1\)$/m);
    expect(layout(www)).toEqual(before);
  }, 60_000);
});

describe("no command but the cycle writes into a cycle's state (issue 41, item 3)", () => {
  const LIVE = path.join(ROOT, "test/fixtures/live-sample/steps");
  const SAMPLE = path.join(ROOT, "data");
  let dir: string;
  let state: string;
  let serve: string;
  const cycle = (k: string, at: string) =>
    command(
      [
        "cycle",
        "--state",
        state,
        "--serve",
        serve,
        "--olsr",
        path.join(LIVE, k, "olsr.txt"),
        "--ondataservice",
        path.join(LIVE, "00", "ondataservice.db"),
        "--at",
        at,
        "--quiet",
      ],
      dir,
    );

  beforeAll(async () => {
    dir = tempDir();
    state = path.join(dir, "state");
    serve = path.join(dir, "www");
    const r = await cycle("00", "2026-11-20T10:00:00Z");
    expect(r.status, r.stderr).toBe(0);
    expect(lstatSync(serve).isSymbolicLink()).toBe(true);
  }, 120_000);

  async function refusedInto(args: string[]) {
    removersDone(dir);
    const before = layout(dir);
    const r = await command(args, dir);
    expect(r.status, r.stderr).toBe(2);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    const sentence = `run mesh-api cycle --state ${state} … to rebuild it, and mesh-api snapshot --state ${state} for a snapshot.`;
    expect(lines[0]).toMatch(/^mesh-api: refusing to write to .+: it (is a symbolic link into|lies inside|is the state folder)/);
    expect(lines[0]).toContain("the state folder of mesh-api cycle");
    expect(lines[0].endsWith(sentence), lines[0]).toBe(true);
    expect(layout(dir)).toEqual(before);
    return lines[0];
  }

  it("build into the served link, a folder inside the state, the state itself, or a dangling link into it", async () => {
    expect(await refusedInto(["build", "--data", SAMPLE, "--out", serve])).toContain(
      `refusing to write to ${serve}: it is a symbolic link into ${state}, the state folder of mesh-api cycle, which only the cycle writes;`,
    );
    expect(await refusedInto(["build", "--data", SAMPLE, "--out", path.join(state, "mine")])).toContain(`it lies inside ${state}`);
    expect(await refusedInto(["build", "--data", SAMPLE, "--out", state])).toContain("it is the state folder of mesh-api cycle");
    const dangling = path.join(dir, "old-www");
    symlinkSync(path.join(state, "runs", "99999999", "build"), dangling);
    expect(await refusedInto(["build", "--data", SAMPLE, "--out", dangling])).toContain(`it is a symbolic link into ${state}`);
  });

  it("snapshot of the served link or of a build inside the state", async () => {
    await refusedInto(["snapshot", "--dist", serve]);
    await refusedInto(["snapshot", "--dist", path.join(state, "dump")]);
  });

  it("import and fetch-dump into the state's dump or the served link, before reading any source", async () => {
    await refusedInto(["import", "opennet", "--olsr", path.join(LIVE, "00", "olsr.txt"), "--out", path.join(state, "dump")]);
    await refusedInto(["import", "api", "http://127.0.0.1:9/", "--out", serve]);
    await refusedInto(["fetch-dump", "http://127.0.0.1:9/dump.tar.gz", "--out", path.join(state, "dump")]);
  });

  it("and the next cycle runs as before", async () => {
    const r = await cycle("01", "2026-11-20T10:06:00Z");
    expect(r.status, r.stderr).toBe(0);
    expect(lstatSync(serve).isSymbolicLink()).toBe(true);
  }, 120_000);
});
