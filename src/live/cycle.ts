import { lstat, mkdir, readdir, readlink, rm, stat } from "node:fs/promises";
import path from "node:path";
import type { MapSettings } from "../core/map.ts";
import type { SiteSettings } from "../core/settings.ts";
import { ImportOpennetError, importOpennet, type ImportOpennetResult } from "../importers/opennet/index.ts";
import { LockedError, lockOutput } from "../io/lock.ts";
import { sweepLeftovers } from "../io/swap.ts";
import { assertReplaceable, owned, RefusedOutputError, writeMarker } from "../io/ownership.ts";
import { build } from "../pipeline.ts";
import { assertFreifunkApi } from "../core/freifunk-api.ts";
import { NODELIST } from "../core/outputs/nodelist.ts";
import { CommandError, machineError } from "../core/problems.ts";
import { assertOurs, configure, forgetJournal, recoverHost, reload, type Configured, type HostHook } from "./host-hook.ts";
import {
  assertLater,
  assertSameSettings,
  FIRST,
  KINDS,
  readRecord,
  recordText,
  sha256,
  type CycleRecord,
  type Kind,
  type PreviousRecord,
  type Settings,
} from "./record.ts";
import { failpoint } from "./failpoint.ts";
import { commit, committed, LAYOUT, legacy, removeStale, repoint, runName, settleTop, stage, writeWhole } from "./state.ts";

export type { HostHook } from "./host-hook.ts";

/**
 * One run of the original's periodic job, for a timer to start every few minutes on the community's
 * server: import the sources that are due into a new dump (with the memory of the last one), build
 * it, install the server's configuration if the build needs another (only if the server accepts
 * it), record the run, and commit: one rename of the state's `current` link, which serves the new
 * build, the new dump and the new record at once (live/state.ts). Then reload the server. A run that
 * fails or is killed before the commit leaves the state as the last good run left it; the next run
 * starts from there.
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
  /** the path the web server serves: a symbolic link to the state's served build */
  readonly serve: string;
  readonly olsr?: SourceSpec;
  readonly wiki?: SourceSpec;
  readonly ondataservice?: SourceSpec;
  /** site detection every nth run (and on the first) */
  readonly sitesEvery: number;
  /** the import's instant; now when absent. Later than the last run's. */
  readonly at?: string;
  readonly timeoutMs?: number;
  readonly settings?: Partial<SiteSettings>;
  readonly map?: MapSettings;
  readonly extra?: string;
  /** snapshots to keep; one is written on the first run of each day (by the import's instant) */
  readonly keep: number;
  readonly host?: HostHook;
  /** this run's settings replace the state's (else a difference is refused) */
  readonly reconfigure?: boolean;
  readonly warn?: (line: string) => void;
  readonly cwd?: string;
  readonly home?: string;
}

export type CycleOutcome = "published" | "skipped";

export interface CycleResult {
  readonly outcome: CycleOutcome;
  /** the one line a run logs */
  readonly line: string;
  readonly run?: number;
  /** the build now served, relative to the state folder */
  readonly build?: string;
  /** what went wrong with the web server after the build was served (its configuration refused, or its reload failed) */
  readonly configRefused?: string;
  /** seconds each step took */
  readonly seconds?: { readonly import: number; readonly build: number; readonly swap: number; readonly cleanup: number };
}

/** The build is served, but the web server refused its configuration or its reload failed. */
export class ConfigRefusedError extends CommandError {
  readonly ending = "configRefused";
  constructor(message: string) {
    super(message);
    this.name = "ConfigRefusedError";
  }
}

const isUrl = (s: string) => /^https?:\/\//i.test(s);

/** What the run's options say about the site, by option: a state records them on its first run (live/record.ts). */
export function runSettings(options: CycleOptions): Settings {
  const s = options.settings ?? {};
  const str = (v: string | number | null | undefined) => (v === undefined || v === null ? null : String(v));
  return {
    "--brand": str(s.brand),
    "--default-status": str(s.defaultStatus),
    "--folder-limit": str(s.folderLimit),
    "--community-name": str(s.communityName),
    "--community-url": str(s.communityUrl),
    "--freifunk-api": str(s.freifunkApi?.source),
    "--site-url": str(s.freifunkApi?.siteUrl),
    "--tiles": str(options.map?.tiles),
    "--tiles-attribution": str(options.map?.attribution),
    "--extra": options.extra === undefined ? null : path.resolve(options.cwd ?? process.cwd(), options.extra),
    "--host": str(options.host?.host.name),
    "--host-config": options.host === undefined ? null : path.resolve(options.cwd ?? process.cwd(), options.host.file),
    "--host-test": str(options.host?.test),
    "--host-reload": str(options.host?.reload),
  };
}

/** Checks that need no state: refused before the state is touched. */
function assertOptions(options: CycleOptions): void {
  for (const kind of KINDS) {
    const spec = options[kind];
    if (spec?.every === "changed" && isUrl(spec.source))
      throw new RefusedOutputError(`--${kind}-every changed needs a file; ${spec.source} is read over HTTP: give a number of runs`);
  }
  // A template the build would refuse is refused before any work.
  const ff = options.settings?.freifunkApi;
  if (ff)
    assertFreifunkApi({
      settings: ff,
      takenAt: options.at ?? new Date().toISOString(),
      online: 0,
      nodelistPath: NODELIST.files.freifunkNodelist,
    });
}

/**
 * The served path must be ours to point: absent, or a symbolic link to the state's served build (or,
 * for a state an earlier release wrote, into its builds/). Returns the build it serves, if any.
 */
async function assertServePath(serve: string, state: string): Promise<string | undefined> {
  const s = await lstat(serve).catch(() => undefined);
  if (s === undefined) return undefined;
  if (!s.isSymbolicLink())
    throw new RefusedOutputError(
      `refusing to use ${serve} as --serve: it is a ${s.isDirectory() ? "folder" : "file"}, not the symbolic link cycle points at the served build; ` +
        `move it away (cycle makes the link), and point the web server's root at ${serve}.`,
    );
  const target = path.resolve(path.dirname(serve), await readlink(serve));
  if (target === path.join(state, LAYOUT.current, LAYOUT.build)) return target;
  if (path.dirname(target) === path.join(state, "builds")) return target;
  throw new RefusedOutputError(
    `refusing to repoint ${serve}: it links to ${target}, not to the served build of ${state}; remove the link or name another --serve.`,
  );
}

/** Which sources are due this run, and the digests of the files among them. */
async function dueSources(options: CycleOptions, record: PreviousRecord, run: number, first: boolean) {
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
  if (first && due.olsr === undefined) throw new RefusedOutputError("the first cycle needs --olsr: the state starts from what OLSR shows");
  const sites = first || record.sitesRun === undefined || run - record.sitesRun >= options.sitesEvery;
  return { due, digests, sites };
}

export async function cycle(options: CycleOptions): Promise<CycleResult> {
  assertOptions(options);
  const state = path.resolve(options.cwd ?? process.cwd(), options.state);
  const serve = path.resolve(options.cwd ?? process.cwd(), options.serve);
  await assertReplaceable({
    out: options.state,
    option: "--state",
    kind: "live",
    writesInside: true,
    protect: options.extra ? [{ dir: options.extra, option: "--extra" }] : [],
    cwd: options.cwd,
    home: options.home,
  });
  const made = await mkdir(state, { recursive: true });
  let lock;
  try {
    lock = lockOutput(state, options.state);
  } catch (err) {
    if (made) await rm(state, { recursive: true, force: true });
    if (err instanceof LockedError)
      return { outcome: "skipped", line: `cycle skipped: another cycle (pid ${err.pid}) is working on ${options.state}` };
    throw machineError(err, state);
  }
  let done = false;
  try {
    const result = await run(options, state, serve);
    done = true;
    return result;
  } catch (err) {
    throw machineError(err, state);
  } finally {
    // A first run that failed leaves no state behind: the next one starts as the first again.
    if (!done && !(await committed(state).catch(() => true)) && !(await legacy(state))) await unmakeState(state, made !== undefined);
    lock.release();
  }
}

async function unmakeState(state: string, made: boolean): Promise<void> {
  if (made) return void (await rm(state, { recursive: true, force: true }).catch(() => {}));
  for (const name of await readdir(state).catch(() => [] as string[])) await rm(path.join(state, name), { recursive: true, force: true });
}

/** The run itself, under the state's lock. */
async function run(options: CycleOptions, state: string, serve: string): Promise<CycleResult> {
  if ((await owned(state)) === "empty") await writeMarker(state, "live");
  if (options.host) await assertOurs(options.host);
  const servedBefore = await assertServePath(serve, state);
  const last = await committed(state);
  const old = last ? undefined : await legacy(state);
  const record = last
    ? await readRecord(path.join(last.dir, LAYOUT.record), path.join(last.dir, LAYOUT.dump))
    : old
      ? await readRecord(old.record, old.dump)
      : FIRST;
  const settings = runSettings(options);
  assertSameSettings(record.settings, settings, options.reconfigure === true);
  const at = options.at ?? new Date().toISOString();
  assertLater(record.at, at, options.at !== undefined);

  // What an earlier run left unfinished: its configuration change, its tidy-up, its folders.
  const lastRun = last?.run ?? record.runs;
  const host = await recoverHost(state, lastRun);
  if (host.note) options.warn?.(host.note);
  if (host.owed && !options.host) await forgetJournal(state);
  const runs = path.join(state, LAYOUT.runs);
  await sweepLeftovers(runs);
  await removeStale(state, [lastRun, lastRun - 1]);
  failpoint("recovered");

  const n = lastRun + 1;
  const first = last === undefined && old === undefined;
  const { due, digests, sites } = await dueSources(options, record, n, first);
  const t = [performance.now()];
  const dir = await stage(state, n);
  const previousDump = last ? path.join(last.dir, LAYOUT.dump) : old?.dump;
  const imported: ImportOpennetResult = await importOpennet(path.join(dir, LAYOUT.dump), {
    ...due,
    previous: previousDump,
    sites: sites ? "detect" : "keep",
    at,
    timeoutMs: options.timeoutMs,
    warn: options.warn,
    cwd: options.cwd,
    home: options.home,
  });
  t.push(performance.now()); // imported
  failpoint("imported");

  const day = imported.takenAt.slice(0, 10);
  const snapshotDue = record.snapshotDay !== day;
  // The run before the committed one stopped being served a run ago: its build becomes this one's start.
  const recycled = path.join(runs, runName(lastRun - 1), LAYOUT.build);
  const result = await build({
    data: path.join(dir, LAYOUT.dump),
    // validated by the import a moment ago: not read and validated again
    checked: imported.checked,
    out: path.join(dir, LAYOUT.build),
    extra: options.extra,
    settings: options.settings,
    map: options.map,
    carry: last ? path.join(last.dir, LAYOUT.build) : servedBefore,
    snapshot: snapshotDue ? { keep: options.keep, warn: options.warn } : undefined,
    recycle: { from: (await stat(recycled).catch(() => undefined))?.isDirectory() ? recycled : undefined },
  });
  t.push(performance.now()); // built
  failpoint("built");

  let config: Configured = { changed: false };
  if (options.host)
    config = await configure(state, n, options.host, options.host.host.config(result.values, options.host.options), host.owed);
  failpoint("configured");
  const sources = { ...record.sources };
  for (const kind of KINDS) {
    const digest = digests[kind] ?? imported.digests[kind];
    if (due[kind] !== undefined) sources[kind] = { run: n, ...(digest ? { sha256: digest } : {}) };
  }
  const next: CycleRecord = {
    format: "mesh-api-cycle/2",
    runs: n,
    at: imported.takenAt,
    sources,
    sitesRun: sites ? n : record.sitesRun,
    snapshotDay: snapshotDue ? day : record.snapshotDay,
    settings,
    build: path.join(LAYOUT.runs, runName(n), LAYOUT.build),
  };
  await writeWhole(path.join(dir, LAYOUT.record), recordText(next));
  failpoint("recorded");
  await commit(state, n);
  failpoint("committed");

  // Committed: what follows cannot undo the run, and a failure of it is said, not thrown.
  const servedLink = path.relative(path.dirname(serve), path.join(state, LAYOUT.current, LAYOUT.build));
  if (servedBefore !== path.join(state, LAYOUT.current, LAYOUT.build)) await repoint(serve, servedLink);
  failpoint("linked");
  // An earlier release's builds/ goes a run after the link left it: requests in flight may still read it.
  await settleTop(state, async (builds) => servedBefore !== undefined && path.dirname(servedBefore) === builds);
  let reloadFailed: string | undefined;
  if (options.host && (config.changed || host.owed)) reloadFailed = (await reload(state, options.host)).failed;
  failpoint("reloaded");
  t.push(performance.now()); // swapped and recorded
  await removeStale(state, [n, lastRun]).catch((err: Error) => options.warn?.(`could not remove an old run: ${err.message}`));
  t.push(performance.now()); // cleaned up

  const step = (i: number) => Math.round(t[i + 1] - t[i]) / 1000;
  return {
    outcome: "published",
    line: runLine(n, imported, due, sites, snapshotDue, options.host, config, host.owed, reloadFailed),
    run: n,
    build: next.build,
    ...(config.refused && { configRefused: `the web server refused the new configuration and keeps the previous one (${config.refused})` }),
    ...(reloadFailed && {
      configRefused:
        `the reload of its configuration failed (${reloadFailed}); ` +
        `a server that is not running reads it when it starts, and the next run tries the reload again`,
    }),
    seconds: { import: step(0), build: step(1), swap: step(2), cleanup: step(3) },
  };
}

function runLine(
  n: number,
  imported: ImportOpennetResult,
  due: Partial<Record<Kind, string>>,
  sites: boolean,
  snapshot: boolean,
  hook: HostHook | undefined,
  config: Configured,
  owed: boolean,
  reloadFailed: string | undefined,
): string {
  const imports = [...KINDS.filter((k) => due[k] !== undefined), ...(sites ? ["sites"] : [])];
  const server = hook?.host.name;
  return (
    `cycle ${n} at ${imported.takenAt}: imported ${imports.join(", ") || "nothing"}; ` +
    `${imported.accesspoints} access points, ${imported.links} links, ${imported.sites} sites; ` +
    `serving ${path.join(LAYOUT.runs, runName(n), LAYOUT.build)}${snapshot ? ", snapshot written" : ""}` +
    (config.refused ? `; ${server} refused the new configuration and keeps the previous one (${config.refused})` : "") +
    (config.changed ? `; ${server} configuration updated${hook?.reload && !reloadFailed ? " and reloaded" : ""}` : "") +
    (!config.changed && owed && hook?.reload && !reloadFailed ? `; ${server} reloaded (an earlier run's reload had failed)` : "") +
    (reloadFailed ? `; the reload failed, the next run tries again (${reloadFailed})` : "")
  );
}
