import { execFile, spawn } from "node:child_process";
import { existsSync, renameSync, rmSync } from "node:fs";
import { lstat, mkdir, readdir, rename, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { onInterrupt } from "./interrupt.ts";
import { pointLink } from "./link.ts";
import { alive, lockOutput, type OutputLock } from "./lock.ts";

/**
 * Every writer of a folder (build, snapshots, fetched dumps) fills a temporary sibling and swaps it
 * in with two renames, so a failure, an interrupt or a kill never leaves a half-written folder (a
 * build served through a symbolic link instead fills a new folder and repoints the link: `link`). The
 * writer holds the folder's lock meanwhile (io/write/lock.ts), so a second writer is refused instead of
 * racing it; an interrupt removes the temporary folder (io/write/interrupt.ts); the next run removes what a
 * kill left (and puts back an old folder a kill between the two renames left aside).
 */
export interface ReplaceOptions {
  /** the folder's lock, when the caller took it before its own work (a build validating its dump) */
  readonly lock?: OutputLock;
  /**
   * What becomes of the folder replaced: "wait" (the default) removes it before returning;
   * "background" hands it to a detached process (removeInBackground), so that the caller is done as
   * soon as the new folder is in place. Removing a build's tens of thousands of files and folders
   * takes about as long again as writing them, which a periodic rebuild need not wait for.
   */
  readonly removeOld?: "wait" | "background";
  /** a folder of the caller's, no longer needed, that becomes the temporary folder instead of an empty one (io/write/emit.ts, recycling) */
  readonly seed?: string;
  /**
   * The output is served through a symbolic link (io/write/link.ts): `target` is a new folder beside the
   * folder the link points at. Once the new folder is complete and in place (one rename), the link is
   * pointed at it in the same synchronous step (a second rename, of a new link over the old one), so a
   * server following the link never finds no folder. The folder served until then stays; `retire`,
   * older builds, are removed as a replaced folder is (`removeOld`).
   */
  readonly link?: {
    /** the link, absolute */
    readonly path: string;
    /** as the user named it, for messages */
    readonly name: string;
    /** what the link is to hold: `target`, relative to the link's folder or absolute */
    readonly text: string;
    /** the folder the link points at now, if any */
    readonly served?: string;
    readonly retire: readonly string[];
  };
}

export async function replaceFolder<T>(target: string, fill: (tmp: string) => Promise<T>, options: ReplaceOptions = {}): Promise<T> {
  const full = path.resolve(target);
  const parent = path.dirname(full);
  const base = path.basename(full);
  await mkdir(parent, { recursive: true });
  // A caller that took the lock before its own work (a build validating its dump) passes it on.
  const lock = options.lock ?? lockOutput(full, target);
  const link = options.link;
  try {
    await recoverLeftovers(parent, base);
    const existed = link ? link.served !== undefined : await exists(full);
    const tmp = path.join(parent, `.${base}.tmp-${process.pid}-${Date.now()}`);
    let old: string | undefined;
    const forget = onInterrupt(() => {
      if (link && old !== undefined)
        return `${link.name} already points at the new build ${path.basename(full)}; the older builds are removed by the next run`;
      if (old !== undefined)
        return `${target} already replaced${old ? `; its previous copy ${path.basename(old)} is removed by the next run` : ""}`;
      removeWhileWritesSettle(tmp);
      if (link)
        return existed
          ? `previous output kept (${link.name} still points at ${path.basename(link.served!)})`
          : `nothing written (${link.name} is as it was)`;
      return existed ? `previous output kept (${target} is as it was)` : `nothing written (${target} was not made)`;
    });
    try {
      let result: T;
      try {
        if (options.seed === undefined) await mkdir(tmp);
        else
          await rename(options.seed, tmp).catch(async (err: NodeJS.ErrnoException) => {
            if (err.code !== "ENOENT") throw err;
            await mkdir(tmp);
          });
        result = await fill(tmp);
        lock.assertHeld();
        old = link ? swapLink(tmp, full, link.path, link.text) : swapDir(tmp, full);
      } catch (err) {
        await removeFolder(tmp);
        throw err;
      }
      // The new folder is in place; failing to remove the old one does not fail the write.
      const replaced: [string, string][] = link ? link.retire.map((r) => [r, path.basename(r)]) : old ? [[old, base]] : [];
      for (const [gone, name] of replaced)
        if (!(options.removeOld === "background" && (await removeInBackground(gone, name)))) await removeFolder(gone).catch(() => {});
      return result;
    } finally {
      forget();
    }
  } finally {
    if (!options.lock) lock.release();
  }
}

/** Retries cover files a write still in flight adds while the folder is being removed. */
const REMOVE = { recursive: true, force: true, maxRetries: 3 } as const;

/**
 * Removes a folder that may hold a whole build, in this process's time: by `rm -rf` in a child
 * first, where there is one, because Node's recursive `fs.rm` holds its walk of the tree in this
 * process's heap (a replaced 40,000-access-point output raised a build to 1.7 GB,
 * docs/performance.md); `fs.rm` then takes what is left, files a write still in flight added among them.
 */
export async function removeFolder(dir: string): Promise<void> {
  // a file, a link or nothing: no walk to spare, no process to start
  const folder = (await lstat(dir).catch(() => undefined))?.isDirectory() === true;
  if (folder && process.platform !== "win32")
    await new Promise<void>((done) => execFile("rm", ["-rf", "--", path.resolve(dir)], { windowsHide: true }, () => done()));
  await rm(dir, REMOVE);
}

/**
 * Removes a folder from inside a signal handler. The handler blocks the script, not the writes it
 * had started: the file system's worker threads finish them meanwhile and may add a file to a folder
 * being removed (ENOTEMPTY, seen on a loaded machine as "could not clean up"). So it tries again
 * until those few writes have ended, for up to two seconds.
 */
export function removeWhileWritesSettle(dir: string): void {
  const wait = new Int32Array(new SharedArrayBuffer(4));
  for (let attempt = 0; ; attempt++) {
    try {
      rmSync(dir, REMOVE);
      if (!existsSync(dir)) return;
    } catch (err) {
      if (attempt >= 100) throw err;
    }
    if (attempt >= 100) throw new Error(`${dir} is still there`);
    Atomics.wait(wait, 0, 0, 20);
  }
}

/**
 * Puts the complete folder `tmp` in the place of `target` with two renames: the old one is moved
 * aside first (its new name is returned, "" when there was none) and removed by the caller. Synchronous,
 * so that no signal handler runs between the two renames; a failure puts the old one back; a kill
 * between them is undone by the next run's recoverLeftovers.
 */
function swapDir(tmp: string, target: string): string {
  const old = path.join(path.dirname(target), `.${path.basename(target)}.old-${process.pid}-${Date.now()}`);
  const hadOld = existsSync(target);
  try {
    if (hadOld) renameSync(target, old);
    renameSync(tmp, target);
  } catch (err) {
    if (hadOld && !existsSync(target)) renameSync(old, target);
    throw err;
  }
  return hadOld ? old : "";
}

/**
 * Puts the complete folder `tmp` in place as the new folder `target` and points `link` at it (`text`):
 * two renames, the second the one that serves it. Synchronous, as swapDir; when the link cannot be
 * pointed, the folder goes back to `tmp` (removed by the caller) and the link stays as it was.
 */
function swapLink(tmp: string, target: string, link: string, text: string): string {
  renameSync(tmp, target);
  try {
    pointLink(link, text);
  } catch (err) {
    renameSync(target, tmp);
    throw err;
  }
  return "";
}

/** Only siblings named by this module (`.<base>.tmp-…`, `.<base>.old-…`) are touched. */
async function recoverLeftovers(parent: string, base: string): Promise<void> {
  const names = await readdir(parent);
  const olds = names.filter((n) => n.startsWith(`.${base}.old-`)).sort();
  if (!(await exists(path.join(parent, base))) && olds.length > 0) {
    // A remover (removeInBackground) that renamed it meanwhile took an output already replaced.
    await rename(path.join(parent, olds.pop()!), path.join(parent, base)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== "ENOENT") throw err;
    });
  }
  for (const n of names) {
    const leftover = n.startsWith(`.${base}.tmp-`) || n.startsWith(`.${base}.trash-`) ? !writerAlive(n) : olds.includes(n);
    if (leftover) await removeFolder(path.join(parent, n));
  }
}

/**
 * Every temporary or replaced folder that a killed writer or remover left in `parent`, whatever the
 * output it belonged to: for a folder of outputs each written once under a new name (the cycle's
 * builds), where no later run of the same output would find them (recoverLeftovers).
 */
export async function sweepLeftovers(parent: string): Promise<void> {
  for (const n of await readdir(parent).catch(() => [] as string[]))
    if (/^\..+\.(?:tmp|trash)-\d+-\d+$/.test(n) && !writerAlive(n)) await rm(path.join(parent, n), REMOVE);
}

/**
 * A temporary folder `.<base>.tmp-<pid>-<time>` whose process still runs belongs to a writer at work
 * that holds no lock (a release before the lock), not to a killed one: it is left alone. So is a
 * replaced folder `.<base>.trash-<pid>-<time>` whose remover still runs.
 */
function writerAlive(name: string): boolean {
  const pid = Number(/\.(?:tmp|trash)-(\d+)-/.exec(name)?.[1]);
  return Boolean(pid) && pid !== process.pid && alive(pid);
}

/**
 * The remover, run by a plain `node -e` (no loader, the same with the compiled library): it renames
 * the replaced folder `.<base>.old-…` to `.<base>.trash-<its pid>-<time>` and removes it. Once
 * renamed, the folder is never put back by recoverLeftovers (it may be half removed), and the next
 * run leaves it to its remover while that runs, removing it itself only after a kill. Until then it
 * is a complete `.old-` folder, which the next run may put back or remove as before; the rename then
 * fails and the remover ends. rm -rf, where there is one, takes half the processor time of Node's
 * recursive rm (3.4 s against 7.3 s of user and system time for the 90,000 files and folders of a
 * 3,000-access-point build); what it leaves, or the whole folder on Windows, Node's rm removes.
 */
const REMOVER = `
const fs = require("node:fs");
const path = require("node:path");
const [old, base] = process.argv.slice(1);
const trash = path.join(path.dirname(old), "." + base + ".trash-" + process.pid + "-" + Date.now());
try {
  fs.renameSync(old, trash);
} catch {
  process.exit(0);
}
if (process.platform !== "win32") {
  try {
    require("node:child_process").execFileSync("rm", ["-rf", "--", trash], { stdio: "ignore" });
  } catch {}
}
fs.rmSync(trash, { recursive: true, force: true, maxRetries: 3 });
`;

/**
 * Starts the removal of the replaced folder `old` in a detached process, at the lowest priority, that
 * outlives this one (an interrupt of this process's group leaves it alone). False when it could not
 * be started: the caller removes the folder itself.
 */
export async function removeInBackground(old: string, base: string): Promise<boolean> {
  try {
    const child = spawn(process.execPath, ["-e", REMOVER, old, base], {
      cwd: path.dirname(old),
      detached: true,
      stdio: "ignore",
      windowsHide: true,
    });
    const started = await new Promise<boolean>((resolve) => {
      child.once("spawn", () => resolve(true));
      child.once("error", () => resolve(false));
    });
    if (!started) return false;
    try {
      os.setPriority(child.pid!, 19);
    } catch {
      // ended already, or not allowed: it runs at the normal priority
    }
    child.unref();
    return true;
  } catch {
    return false;
  }
}

export async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}
