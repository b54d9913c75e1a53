import { lstat, mkdir, readdir, readlink, rename, rm } from "node:fs/promises";
import path from "node:path";
import { RefusedOutputError } from "../io/write/ownership.ts";
import { alive } from "../io/write/lock.ts";
import { pointLink } from "../io/write/link.ts";
import { removeFolder, removeInBackground } from "../io/write/swap.ts";

/**
 * The layout of a cycle's state folder, and its one commit point.
 *
 *   current -> runs/<run>   the last run that completed: the one rename that commits a run
 *   runs/<run>/dump/        the network as that run's import left it (the memory of the next import)
 *   runs/<run>/build/       the build served (the web server's link resolves through `current`)
 *   runs/<run>/cycle.json   the record: run counter, instant, sources, settings
 *   dump -> current/dump, cycle.json -> current/cycle.json
 *                           fixed links, so that the state's dump and record keep their paths
 *   host-config.json        the web server's configuration a run changed and has not reloaded yet
 *
 * A run writes everything of its own into `runs/<run>/` first and then renames a new `current` link
 * over the old one: a run that fails or is killed before that rename leaves `current`, and with it
 * the dump, the record and the served build, byte for byte as the last good run left them. The
 * served link (`--serve`) points at `<state>/current/build` once and for all, so serving the new
 * build is the same rename.
 */
export const LAYOUT = {
  current: "current",
  runs: "runs",
  dump: "dump",
  build: "build",
  record: "cycle.json",
  hostJournal: "host-config.json",
} as const;

export const runName = (run: number) => String(run).padStart(8, "0");
const RUN_NAME = /^\d{8}$/;

/** A committed run as `current` names it. */
export interface Committed {
  readonly run: number;
  /** the run's folder, absolute */
  readonly dir: string;
}

/** The state folder of an earlier release: dump/ and cycle.json as folders, builds/<run>/ served. */
export interface Legacy {
  readonly dump: string;
  readonly record: string;
  /** the build the served link points at, if it points into builds/ */
  readonly builds: string;
}

/** The committed run, if any. */
export async function committed(state: string): Promise<Committed | undefined> {
  const target = await readlink(path.join(state, LAYOUT.current)).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return undefined;
    throw err;
  });
  if (target === undefined) return undefined;
  const name = path.basename(target);
  if (path.dirname(target) !== LAYOUT.runs || !RUN_NAME.test(name))
    throw new RefusedOutputError(
      `${path.join(state, LAYOUT.current)} links to ${target}, not to a run of this state; the state is not the cycle's own`,
    );
  const dir = path.join(state, LAYOUT.runs, name);
  // only a hand in the state removes the committed run: every run after it starts from its dump
  if (!(await lstat(dir).catch(() => undefined))?.isDirectory())
    throw new RefusedOutputError(
      `${path.join(state, LAYOUT.current)} links to ${target}, which is missing: the state's last run was removed; ` +
        `put ${dir} back (from a backup), or start a new state in an empty folder.`,
    );
  return { run: Number(name), dir };
}

/** An earlier release's state: its dump and record are plain folder and file at the top. */
export async function legacy(state: string): Promise<Legacy | undefined> {
  const s = await lstat(path.join(state, LAYOUT.dump)).catch(() => undefined);
  if (!s?.isDirectory()) return undefined;
  return { dump: path.join(state, LAYOUT.dump), record: path.join(state, LAYOUT.record), builds: path.join(state, "builds") };
}

/** Points `link` at `target` in one rename (io/write/link.ts): a reader sees the old target or the new one, never nothing. */
export async function repoint(link: string, target: string): Promise<void> {
  pointLink(link, target);
}

/** The commit: `current` names the run's folder from now on. */
export async function commit(state: string, run: number): Promise<void> {
  await repoint(path.join(state, LAYOUT.current), path.join(LAYOUT.runs, runName(run)));
}

/**
 * After a commit, the fixed links at the top (`dump`, `cycle.json`) and, for a state an earlier
 * release wrote, the removal of its dump, record and builds folder (once the served link no longer
 * points into it). Each step can be repeated: a run killed halfway has the next run finish it.
 */
export async function settleTop(state: string, serving: (dir: string) => Promise<boolean>): Promise<void> {
  for (const name of [LAYOUT.dump, LAYOUT.record]) {
    const at = path.join(state, name);
    const want = path.join(LAYOUT.current, name);
    const s = await lstat(at).catch(() => undefined);
    if (s?.isSymbolicLink() && (await readlink(at)) === want) continue;
    if (s && !s.isSymbolicLink()) {
      // an earlier release's dump folder or record: the committed run holds the state now
      const aside = path.join(state, `.${name}.legacy-${process.pid}`);
      await rename(at, aside);
      await removeFolder(aside);
    }
    await repoint(at, want);
  }
  const builds = path.join(state, "builds");
  if ((await lstat(builds).catch(() => undefined))?.isDirectory() && !(await serving(builds))) await removeFolder(builds);
}

/**
 * The run folders other than those in `keep` (the committed one and the one before it, which requests
 * in flight may still read and whose build the next run recycles): folders of runs that were killed
 * before their commit, and runs too old to keep. Old runs go by detached removers (io/write/swap.ts), so
 * that a run does not wait for tens of thousands of files to go.
 */
export async function removeStale(state: string, keep: readonly number[], committedRun: number): Promise<void> {
  const runs = path.join(state, LAYOUT.runs);
  for (const name of await readdir(runs).catch(() => [] as string[])) {
    if (!RUN_NAME.test(name) || keep.includes(Number(name))) continue;
    const dir = path.join(runs, name);
    // A run that never committed goes before this run writes: after a full disk, it holds the room this run needs.
    if (Number(name) > committedRun || !(await removeInBackground(dir, name))) await removeFolder(dir);
  }
}

/** The run's own folder, empty, ready to be filled. */
export async function stage(state: string, run: number): Promise<string> {
  const dir = path.join(state, LAYOUT.runs, runName(run));
  await removeFolder(dir);
  await mkdir(dir, { recursive: true });
  return dir;
}

/**
 * The temporary links and files (`.<name>.link-<pid>-<time>` of repoint, `.<name>.tmp-<pid>` of
 * writeWhole) that a run killed between making one and renaming it left in `dir`: only those of
 * `names` (all when absent), and only of processes that no longer run.
 */
export async function sweepTemporaries(dir: string, names?: readonly string[]): Promise<void> {
  for (const entry of await readdir(dir).catch(() => [] as string[])) {
    const m = /^\.(.+)\.(?:tmp-(\d+)|link-(\d+)-\d+)$/.exec(entry);
    if (!m || (names && !names.includes(m[1]))) continue;
    const pid = Number(m[2] ?? m[3]);
    if (pid !== process.pid && !alive(pid)) await rm(path.join(dir, entry), { force: true });
  }
}
