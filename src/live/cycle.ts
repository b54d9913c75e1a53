import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, readlink, rename, rm, stat, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import type { MapSettings } from "../core/map.ts";
import type { SiteSettings } from "../core/settings.ts";
import type { ConfigOptions, Host } from "../hosts/host.ts";
import { ImportOpennetError, importOpennet } from "../importers/opennet/index.ts";
import { LockedError, lockOutput } from "../io/lock.ts";
import { removeInBackground, sweepLeftovers } from "../io/swap.ts";
import { assertReplaceable, owned, RefusedOutputError, writeMarker } from "../io/ownership.ts";
import { build } from "../pipeline.ts";
import { assertFreifunkApi } from "../core/freifunk-api.ts";
import { NODELIST } from "../core/outputs/nodelist.ts";
import { CommandError } from "../core/problems.ts";

/**
 * One run of the original's periodic job, for a timer to start every few minutes on the community's
 * server: import the sources that are due into the state's dump (with memory), build it into a new
 * folder, point the served path at it (a symbolic link, replaced in one rename), and, when the build's
 * server configuration changed, install it only if the server accepts it, then reload. One lock for
 * the whole run; each step atomic; the previous state and the served build stay as they were until a
 * step has succeeded whole.
 *
 * The state folder (`--state`, marked as this tool's):
 *   dump/            the network as the last import left it (the memory of the next import)
 *   builds/<run>/    the served build and the one before it (requests in flight still read it; the
 *                    next run rewrites it into its own build, io/emit.ts, recycling)
 *   cycle.json       the run counter, when each source was imported last, the day of the last snapshot
 */

/** How often a source is imported: every nth run, or (files only) when its content changed. */
export type Rate = number | "changed";

export interface SourceSpec {
  /** a file, or (OLSR, wiki) an http(s) address */
  readonly source: string;
  readonly every: Rate;
}

export interface CycleOptions {
  readonly state: string;
  /** the path the web server serves: a symbolic link this command points at each new build */
  readonly serve: string;
  readonly olsr?: SourceSpec;
  readonly wiki?: SourceSpec;
  readonly ondataservice?: SourceSpec;
  /** site detection every nth run (and on the first) */
  readonly sitesEvery: number;
  /** the import's instant; now when absent */
  readonly at?: string;
  readonly timeoutMs?: number;
  readonly settings?: Partial<SiteSettings>;
  readonly map?: MapSettings;
  readonly extra?: string;
  /** snapshots to keep; one is written on the first run of each day (by the import's instant) */
  readonly keep: number;
  readonly host?: HostHook;
  readonly warn?: (line: string) => void;
  readonly cwd?: string;
  readonly home?: string;
}

/** The web server whose configuration follows the build (`host-config <host> --data`). */
export interface HostHook {
  readonly host: Host;
  readonly options: ConfigOptions;
  /** the file the server includes */
  readonly file: string;
  /** a shell command that exits 0 when the server accepts its configuration (`nginx -t`) */
  readonly test?: string;
  /** a shell command that makes the server read its configuration again (`systemctl reload nginx`) */
  readonly reload?: string;
}

export type CycleOutcome = "published" | "skipped";

export interface CycleResult {
  readonly outcome: CycleOutcome;
  /** the one line a run logs */
  readonly line: string;
  readonly run?: number;
  /** the build now served, relative to the state folder */
  readonly build?: string;
  /** what the server said when it refused the new configuration (the old one stays) */
  readonly configRefused?: string;
  /** seconds each step took */
  readonly seconds?: { readonly import: number; readonly build: number; readonly swap: number; readonly cleanup: number };
}

interface CycleRecord {
  readonly format: "mesh-api-cycle/1";
  readonly runs: number;
  /** per source: the run that imported it last and the sha256 of the file it read then */
  readonly sources: Record<string, { readonly run: number; readonly sha256?: string }>;
  readonly sitesRun?: number;
  readonly snapshotDay?: string;
  readonly build?: string;
}

const RECORD = "cycle.json";
const KINDS = ["olsr", "wiki", "ondataservice"] as const;
type Kind = (typeof KINDS)[number];

/** The configuration was not accepted by the server: the build is served, the previous configuration kept. */
export class ConfigRefusedError extends CommandError {
  readonly ending = "configRefused";
  constructor(message: string) {
    super(message);
    this.name = "ConfigRefusedError";
  }
}

function sh(command: string, timeoutMs = 60_000): Promise<{ ok: boolean; output: string }> {
  return new Promise((resolve) => {
    execFile("/bin/sh", ["-c", command], { timeout: timeoutMs }, (err, stdout, stderr) =>
      resolve({ ok: err === null, output: `${stdout}${stderr}`.trim() }),
    );
  });
}

async function readRecord(state: string): Promise<CycleRecord> {
  const text = await readFile(path.join(state, RECORD), "utf8").catch(() => undefined);
  if (text === undefined) return { format: "mesh-api-cycle/1", runs: 0, sources: {} };
  const record = JSON.parse(text) as CycleRecord;
  if (record.format !== "mesh-api-cycle/1") throw new RefusedOutputError(`${path.join(state, RECORD)} is not a record of mesh-api cycle`);
  return record;
}

const sha256 = async (file: string) =>
  createHash("sha256")
    .update(await readFile(file))
    .digest("hex");

const isUrl = (s: string) => /^https?:\/\//i.test(s);

/**
 * The served path must be ours to point: absent, or a symbolic link into the state's builds. A folder
 * or file of the operator's there is refused before any work.
 */
async function assertServePath(serve: string, builds: string): Promise<string | undefined> {
  const s = await stat(serve).catch(() => undefined);
  const target = await readlink(serve).catch((err: NodeJS.ErrnoException) => (err.code === "EINVAL" ? null : undefined));
  if (target === undefined && s === undefined) return undefined;
  if (target === null || target === undefined)
    throw new RefusedOutputError(
      `refusing to use ${serve} as --serve: it is a ${s?.isDirectory() ? "folder" : "file"}, not the symbolic link cycle points at each build; ` +
        `move it away (cycle makes the link), and point the web server's root at ${serve}.`,
    );
  const resolved = path.resolve(path.dirname(serve), target);
  if (path.dirname(resolved) !== builds)
    throw new RefusedOutputError(
      `refusing to repoint ${serve}: it links to ${target}, not to a build of ${path.dirname(builds)}; remove the link or name another --serve.`,
    );
  return path.basename(resolved);
}

/** Points `link` at `target` in one rename: a reader sees the old build or the new one, never nothing. */
async function repoint(link: string, target: string): Promise<void> {
  const tmp = path.join(path.dirname(link), `.${path.basename(link)}.tmp-${process.pid}`);
  await rm(tmp, { force: true });
  await symlink(target, tmp);
  try {
    await rename(tmp, link);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** Installs the configuration when it changed, keeping the old one when the server refuses the new. */
async function configure(hook: HostHook, text: string): Promise<{ changed: boolean; refused?: string }> {
  const before = await readFile(hook.file, "utf8").catch(() => undefined);
  if (before === text) return { changed: false };
  const tmp = path.join(path.dirname(hook.file), `.${path.basename(hook.file)}.tmp-${process.pid}`);
  await writeFile(tmp, text);
  await rename(tmp, hook.file);
  if (hook.test !== undefined) {
    const t = await sh(hook.test);
    if (!t.ok) {
      if (before === undefined) await rm(hook.file, { force: true });
      else {
        await writeFile(tmp, before);
        await rename(tmp, hook.file);
      }
      return { changed: false, refused: t.output.split("\n").slice(-3).join(" ") || `${hook.test} failed` };
    }
  }
  return { changed: true };
}

export async function cycle(options: CycleOptions): Promise<CycleResult> {
  const state = path.resolve(options.state);
  const builds = path.join(state, "builds");
  const dump = path.join(state, "dump");
  for (const kind of KINDS) {
    const spec = options[kind];
    if (spec?.every === "changed" && isUrl(spec.source))
      throw new RefusedOutputError(`--${kind}-every changed needs a file; ${spec.source} is read over HTTP: give a number of runs`);
  }
  // A template the build would refuse is refused before the import moves the state on.
  const ff = options.settings?.freifunkApi;
  if (ff)
    assertFreifunkApi({
      settings: ff,
      takenAt: options.at ?? new Date().toISOString(),
      online: 0,
      nodelistPath: NODELIST.files.freifunkNodelist,
    });
  await assertReplaceable({
    out: options.state,
    option: "--state",
    kind: "live",
    writesInside: true,
    protect: options.extra ? [{ dir: options.extra, option: "--extra" }] : [],
    cwd: options.cwd,
    home: options.home,
  });
  await mkdir(state, { recursive: true });
  let lock;
  try {
    lock = lockOutput(state, options.state);
  } catch (err) {
    if (err instanceof LockedError)
      return { outcome: "skipped", line: `cycle skipped: another cycle (pid ${err.pid}) is working on ${options.state}` };
    throw err;
  }
  try {
    if ((await owned(state)) === "empty") await writeMarker(state, "live");
    const served = await assertServePath(path.resolve(options.serve), builds);
    const record = await readRecord(state);
    // Past every build there is too: a run that stopped between serving its build and writing the
    // record left a build numbered past the record, and the next run must never build into it.
    const numbered = (await readdir(builds).catch(() => [] as string[])).filter((n) => /^\d{8}$/.test(n)).map(Number);
    const run = Math.max(record.runs, ...numbered) + 1;
    const first = !(await stat(path.join(dump, "network.json")).catch(() => undefined));
    const at = options.at ?? new Date().toISOString();

    // Which sources are due this run.
    const due: Partial<Record<Kind, string>> = {};
    const digests: Partial<Record<Kind, string>> = {};
    for (const kind of KINDS) {
      const spec = options[kind];
      if (spec === undefined) continue;
      const last = record.sources[kind];
      if (spec.every === "changed") {
        digests[kind] = await sha256(spec.source).catch((err: NodeJS.ErrnoException) => {
          throw new ImportOpennetError(`--${kind} ${spec.source}: cannot read it (${err.code ?? err.message})`);
        });
        if (first || last?.sha256 !== digests[kind]) due[kind] = spec.source;
      } else if (first || last === undefined || run - last.run >= spec.every) {
        due[kind] = spec.source;
      }
    }
    if (first && due.olsr === undefined)
      throw new RefusedOutputError("the first cycle needs --olsr: the state starts from what OLSR shows");
    const sites = first || record.sitesRun === undefined || run - record.sitesRun >= options.sitesEvery;

    // What a killed run or remover left among the builds: no later build has their names.
    await sweepLeftovers(builds);
    const t = [performance.now()];
    const imported = await importOpennet(dump, {
      ...due,
      previous: first ? undefined : dump,
      sites: sites ? "detect" : "keep",
      at,
      timeoutMs: options.timeoutMs,
      warn: options.warn,
      cwd: options.cwd,
      home: options.home,
    });

    t.push(performance.now()); // imported
    const name = String(run).padStart(8, "0");
    await mkdir(builds, { recursive: true });
    // The builds before the served one: the newest becomes this run's start (only what changed is
    // written into it), the others go once the new build is served.
    const earlier: string[] = [];
    for (const old of (await readdir(builds)).sort())
      if (old !== name && old !== served && /^\d{8}$/.test(old) && (await owned(path.join(builds, old)).catch(() => undefined)) === "build")
        earlier.push(old);
    const recycled = earlier.pop();
    const day = imported.takenAt.slice(0, 10);
    const snapshotDue = record.snapshotDay !== day;
    const result = await build({
      data: dump,
      // validated by the import a moment ago: not read and validated again
      checked: imported.checked,
      out: path.join(builds, name),
      extra: options.extra,
      settings: options.settings,
      map: options.map,
      carry: served === undefined ? undefined : path.join(builds, served),
      snapshot: snapshotDue ? { keep: options.keep, warn: options.warn } : undefined,
      recycle: { from: recycled === undefined ? undefined : path.join(builds, recycled) },
    });

    t.push(performance.now()); // built
    let config: { changed: boolean; refused?: string; reloadFailed?: string } = { changed: false };
    if (options.host) config = await configure(options.host, options.host.host.config(result.values, options.host.options));
    await repoint(path.resolve(options.serve), path.relative(path.dirname(path.resolve(options.serve)), path.join(builds, name)));
    if (config.changed && options.host?.reload !== undefined) {
      const r = await sh(options.host.reload);
      if (!r.ok) config = { changed: true, reloadFailed: `${options.host.reload}: ${r.output || "failed"}` };
    }

    const sources = { ...record.sources };
    for (const kind of KINDS) if (due[kind] !== undefined) sources[kind] = { run, ...(digests[kind] ? { sha256: digests[kind] } : {}) };
    const next: CycleRecord = {
      format: "mesh-api-cycle/1",
      runs: run,
      sources,
      sitesRun: sites ? run : record.sitesRun,
      snapshotDay: snapshotDue ? day : record.snapshotDay,
      build: `builds/${name}`,
    };
    await writeFile(path.join(state, `${RECORD}.tmp`), JSON.stringify(next, null, 2) + "\n");
    await rename(path.join(state, `${RECORD}.tmp`), path.join(state, RECORD));

    t.push(performance.now()); // swapped and recorded
    // The build served before this one stays for the requests still reading it (and is the next
    // run's start); older ones go, by a detached remover as build's replaced output does.
    for (const old of earlier) {
      const dir = path.join(builds, old);
      if (!(await removeInBackground(dir, old))) await rm(dir, { recursive: true });
    }

    t.push(performance.now()); // cleaned up
    const step = (i: number) => Math.round(t[i + 1] - t[i]) / 1000;
    const imports = [...KINDS.filter((k) => due[k] !== undefined), ...(sites ? ["sites"] : [])];
    const line =
      `cycle ${run} at ${imported.takenAt}: imported ${imports.join(", ") || "nothing"}; ` +
      `${imported.accesspoints} access points, ${imported.links} links, ${imported.sites} sites; ` +
      `serving builds/${name}${snapshotDue ? ", snapshot written" : ""}` +
      (config.refused ? `; the server refused the new configuration, the previous one stays: ${config.refused}` : "") +
      (config.changed
        ? `; ${options.host!.host.name} configuration updated` +
          (config.reloadFailed ? `, but the reload failed: ${config.reloadFailed}` : options.host!.reload ? " and reloaded" : "")
        : "");
    const problem = config.refused ?? (config.reloadFailed && `the reload failed: ${config.reloadFailed}`);
    return {
      outcome: "published",
      line,
      run,
      build: `builds/${name}`,
      ...(problem ? { configRefused: problem } : {}),
      seconds: { import: step(0), build: step(1), swap: step(2), cleanup: step(3) },
    };
  } finally {
    lock.release();
  }
}
