import { lstat, mkdir, readdir, readlink, rm, stat } from "node:fs/promises";
import path from "node:path";
import type { MapSettings } from "../core/documents/map.ts";
import type { SiteSettings } from "../core/settings.ts";
import { ImportOpennetError, importOpennet, type ImportOpennetResult } from "../importers/opennet/index.ts";
import { LockedError, lockOutput } from "../io/write/lock.ts";
import { removeFolder, sweepLeftovers } from "../io/write/swap.ts";
import { assertReplaceable, owned, RefusedOutputError, writeMarker } from "../io/write/ownership.ts";
import { build } from "../pipeline.ts";
import { assertOutputSettings, recordedOptions } from "../core/outputs/option-values.ts";
import { CommandError, machineError } from "../core/problems.ts";
import type { Retention } from "../core/history/events.ts";
import type { CycleHealth } from "../core/history/metrics.ts";
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
import { readText, writeWhole } from "../io/write/whole.ts";
import { failpoint } from "./failpoint.ts";
import {
  commit,
  committed,
  LAYOUT,
  legacy,
  removeStale,
  repoint,
  runName,
  settleTop,
  stage,
  sweepTemporaries,
  type Committed,
  type Legacy,
} from "./state.ts";

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
  /** how long the changes the imports record are kept (core/history/events.ts) */
  readonly retention?: Retention;
  readonly warn?: (line: string) => void;
  /** PipelineOptions.loaded, for the build */
  readonly loaded?: () => void;
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

/**
 * The failed runs since the last good one, for the metrics file: outside the transaction (a failed
 * run changes nothing inside it), written whole by a run that fails once the state has a good run,
 * removed by the next good run. `after` names the good run they followed: a count left by a run
 * before the committed one is stale (the good run after it was killed before it removed the file).
 */
const FAILURES = "failures.json";

interface Failures {
  readonly format: "mesh-api-cycle-failures/1";
  readonly after: number;
  readonly failed: number;
}

/** The runs that failed after the good run `after`; 0 when none did, or the file is stale or unreadable. */
async function failuresAfter(state: string, after: number): Promise<number> {
  const text = await readText(path.join(state, FAILURES)).catch(() => undefined);
  try {
    const f = JSON.parse(text ?? "null") as Partial<Failures> | null;
    return f?.format === "mesh-api-cycle-failures/1" && f.after === after && Number.isSafeInteger(f.failed) ? f.failed! : 0;
  } catch {
    return 0;
  }
}

/** Counts a failed run, when the state has a good run (a failed first run leaves no state). Never throws: the run's own error is what counts. */
async function countFailure(state: string): Promise<void> {
  try {
    const last = await committed(state);
    if (last === undefined) return;
    const failures: Failures = { format: "mesh-api-cycle-failures/1", after: last.run, failed: (await failuresAfter(state, last.run)) + 1 };
    await writeWhole(path.join(state, FAILURES), JSON.stringify(failures) + "\n");
  } catch {
    // a full disk or a read-only state: the count is lost, the run's error is reported
  }
}

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
    ...recordedOptions(s.outputs),
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
  // Settings the build would refuse (a Freifunk API template) are refused before any work.
  assertOutputSettings(options.settings?.outputs, options.at ?? new Date().toISOString());
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
        throw new ImportOpennetError(`--${kind} ${spec.source}: cannot read it (${err.code ?? err.message})`, { cause: err });
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
    await countFailure(state);
    throw machineError(err, state);
  } finally {
    // A first run that failed leaves no state behind: the next one starts as the first again.
    if (!done && !(await committed(state).catch(() => true)) && !(await legacy(state))) await unmakeState(state, made !== undefined);
    lock.release();
  }
}

async function unmakeState(state: string, made: boolean): Promise<void> {
  if (made) return void (await removeFolder(state).catch(() => {}));
  for (const name of await readdir(state).catch(() => [] as string[])) await removeFolder(path.join(state, name));
}

/** Where a run starts: the committed run (or an earlier release's state), its record, and what it owes. */
interface Start {
  readonly last?: Committed;
  readonly old?: Legacy;
  readonly record: PreviousRecord;
  readonly lastRun: number;
  readonly servedBefore?: string;
  readonly settings: Settings;
  readonly at: string;
  /** a reload an earlier run's configuration change still owes */
  readonly owed: boolean;
}

/** The run itself, under the state's lock. */
async function run(options: CycleOptions, state: string, serve: string): Promise<CycleResult> {
  const start = await begin(options, state, serve);
  const n = start.lastRun + 1;
  const t = [performance.now()];
  let staged: Staged;
  try {
    staged = await stageRun(options, state, start, n, t);
    failpoint("recorded");
    await commit(state, n);
  } catch (err) {
    // Nothing of the run stays: its folder (a full disk needs the room back) and its configuration change.
    await removeFolder(path.join(state, LAYOUT.runs, runName(n))).catch(() => {});
    await recoverHost(state, start.lastRun).catch(() => {});
    throw err;
  }
  failpoint("committed");
  // the failures counted before this good run are reported by its build: the count starts again
  await rm(path.join(state, FAILURES), { force: true }).catch(() => {});
  return finish(options, state, serve, start, n, staged, t);
}

/** Checks the run may go on from the state as it is, and settles what an earlier run left unfinished. */
async function begin(options: CycleOptions, state: string, serve: string): Promise<Start> {
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

  const lastRun = last?.run ?? record.runs;
  const host = await recoverHost(state, lastRun);
  if (host.note) options.warn?.(host.note);
  if (host.owed && !options.host) await forgetJournal(state);
  await sweepLeftovers(path.join(state, LAYOUT.runs));
  await sweepTemporaries(state, [LAYOUT.current, LAYOUT.dump, LAYOUT.record, LAYOUT.hostJournal, FAILURES]);
  await sweepTemporaries(path.dirname(serve), [path.basename(serve)]);
  if (options.host) await sweepTemporaries(path.dirname(path.resolve(options.host.file)), [path.basename(options.host.file)]);
  await removeStale(state, [lastRun, lastRun - 1], lastRun);
  failpoint("recovered");
  return { last, old, record, lastRun, servedBefore, settings, at, owed: host.owed && options.host !== undefined };
}

interface Staged {
  readonly imported: ImportOpennetResult;
  readonly due: Partial<Record<Kind, string>>;
  readonly sites: boolean;
  readonly snapshotDue: boolean;
  readonly config: Configured;
  readonly build: string;
}

/** Everything of run `n` in its own folder, and the server's configuration (journalled): nothing is committed yet. */
async function stageRun(options: CycleOptions, state: string, start: Start, n: number, t: number[]): Promise<Staged> {
  const { last, old, record, lastRun } = start;
  const { due, digests, sites } = await dueSources(options, record, n, last === undefined && old === undefined);
  const dir = await stage(state, n);
  const imported = await importOpennet(path.join(dir, LAYOUT.dump), {
    ...due,
    previous: last ? path.join(last.dir, LAYOUT.dump) : old?.dump,
    sites: sites ? "detect" : "keep",
    at: start.at,
    retention: options.retention,
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
  const recycled = path.join(state, LAYOUT.runs, runName(lastRun - 1), LAYOUT.build);
  const result = await build({
    data: path.join(dir, LAYOUT.dump),
    // validated by the import a moment ago: not read and validated again
    checked: imported.checked,
    loaded: options.loaded,
    // a cycle shows no host's warnings: their patterns cost 1.2 s at 40,000 access points
    reportHosts: false,
    out: path.join(dir, LAYOUT.build),
    extra: options.extra,
    settings: options.settings,
    map: options.map,
    carry: last ? path.join(last.dir, LAYOUT.build) : start.servedBefore,
    snapshot: snapshotDue ? { keep: options.keep, warn: options.warn } : undefined,
    recycle: { from: (await stat(recycled).catch(() => undefined))?.isDirectory() ? recycled : undefined },
    health: await healthOf(state, record, lastRun, n, due, imported.takenAt),
  });
  t.push(performance.now()); // built
  failpoint("built");

  const hook = options.host;
  const config = hook ? await configure(state, n, hook, hook.host.config(result.values, hook.options), start.owed) : { changed: false };
  failpoint("configured");
  const sources = { ...record.sources };
  for (const kind of KINDS) {
    const digest = digests[kind] ?? imported.digests[kind];
    if (due[kind] !== undefined) sources[kind] = { run: n, ...(digest ? { sha256: digest } : {}), at: imported.takenAt };
  }
  const next: CycleRecord = {
    format: "mesh-api-cycle/2",
    runs: n,
    at: imported.takenAt,
    sources,
    sitesRun: sites ? n : record.sitesRun,
    snapshotDay: snapshotDue ? day : record.snapshotDay,
    settings: start.settings,
    build: path.join(LAYOUT.runs, runName(n), LAYOUT.build),
    seconds: Math.round(performance.now() - t[0]) / 1000,
  };
  await writeWhole(path.join(dir, LAYOUT.record), recordText(next));
  return { imported, due, sites, snapshotDue, config, build: next.build };
}

/**
 * What the metrics file says of the cycle (core/history/metrics.ts), from the records alone: each
 * source's last import (this run's instant for the sources it imports, else the instant the record
 * keeps), the previous good run's duration and the runs that failed since.
 */
async function healthOf(
  state: string,
  record: PreviousRecord,
  lastRun: number,
  n: number,
  due: Partial<Record<Kind, string>>,
  at: string,
): Promise<CycleHealth> {
  const sources = KINDS.flatMap((kind) => {
    const last = record.sources[kind];
    // an earlier release's record keeps no instant: the last run's is the one of a source it imported
    const when = due[kind] !== undefined ? at : (last?.at ?? (last?.run === record.runs ? record.at : undefined));
    return when === undefined ? [] : [{ source: kind, at: when }];
  });
  return {
    run: n,
    sources,
    ...(record.seconds !== undefined && { previousRunSeconds: record.seconds }),
    failedRuns: lastRun > 0 ? await failuresAfter(state, lastRun) : 0,
  };
}

/** After the commit: the served link, the tidy-up, the reload. A failure here cannot undo the run: it is said, not thrown. */
async function finish(options: CycleOptions, state: string, serve: string, start: Start, n: number, staged: Staged, t: number[]) {
  const { servedBefore } = start;
  const served = path.join(state, LAYOUT.current, LAYOUT.build);
  if (servedBefore !== served) await repoint(serve, path.relative(path.dirname(serve), served));
  failpoint("linked");
  // An earlier release's builds/ goes a run after the link left it: requests in flight may still read it.
  await settleTop(state, async (builds) => servedBefore !== undefined && path.dirname(servedBefore) === builds);
  const { config } = staged;
  let reloadFailed: string | undefined;
  if (options.host && (config.changed || start.owed)) reloadFailed = (await reload(state, options.host)).failed;
  failpoint("reloaded");
  t.push(performance.now()); // swapped and recorded
  await removeStale(state, [n, start.lastRun], n).catch((err: Error) => options.warn?.(`could not remove an old run: ${err.message}`));
  t.push(performance.now()); // cleaned up

  const step = (i: number) => Math.round(t[i + 1] - t[i]) / 1000;
  const { imported, due, sites, snapshotDue } = staged;
  return {
    outcome: "published" as const,
    line: runLine(n, imported, due, sites, snapshotDue, options.host, config, start.owed, reloadFailed),
    run: n,
    build: staged.build,
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
    (!config.changed && owed && hook?.reload && !reloadFailed ? `; ${server} reloaded (an earlier run had not reloaded it)` : "") +
    (reloadFailed ? `; the reload failed, the next run tries again (${reloadFailed})` : "")
  );
}
