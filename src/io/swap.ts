import { existsSync, renameSync, rmSync } from "node:fs";
import { mkdir, readdir, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { onInterrupt } from "./interrupt.ts";
import { alive, lockOutput, type OutputLock } from "./lock.ts";

/**
 * Every writer of a folder (build, snapshots, fetched dumps) fills a temporary sibling and swaps it
 * in with two renames, so a failure, an interrupt or a kill never leaves a half-written folder. The
 * writer holds the folder's lock meanwhile (io/lock.ts), so a second writer is refused instead of
 * racing it; an interrupt removes the temporary folder (io/interrupt.ts); the next run removes what a
 * kill left (and puts back an old folder a kill between the two renames left aside).
 */
export async function replaceFolder<T>(
  target: string,
  fill: (tmp: string) => Promise<T>,
  options: { readonly lock?: OutputLock } = {},
): Promise<T> {
  const full = path.resolve(target);
  const parent = path.dirname(full);
  const base = path.basename(full);
  await mkdir(parent, { recursive: true });
  // A caller that took the lock before its own work (a build validating its dump) passes it on.
  const lock = options.lock ?? lockOutput(full, target);
  try {
    await recoverLeftovers(parent, base);
    const existed = await exists(full);
    const tmp = path.join(parent, `.${base}.tmp-${process.pid}-${Date.now()}`);
    let old: string | undefined;
    const forget = onInterrupt(() => {
      if (old !== undefined)
        return `${target} already replaced${old ? `; its previous copy ${path.basename(old)} is removed by the next run` : ""}`;
      rmSync(tmp, REMOVE);
      return existed ? `previous output kept (${target} is as it was)` : `nothing written (${target} was not made)`;
    });
    try {
      let result: T;
      try {
        await mkdir(tmp);
        result = await fill(tmp);
        lock.assertHeld();
        old = swapDir(tmp, full);
      } catch (err) {
        await rm(tmp, REMOVE);
        throw err;
      }
      // The new folder is in place; failing to remove the old one does not fail the write.
      if (old) await rm(old, REMOVE).catch(() => {});
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

/** Only siblings named by this module (`.<base>.tmp-…`, `.<base>.old-…`) are touched. */
async function recoverLeftovers(parent: string, base: string): Promise<void> {
  const names = await readdir(parent);
  const olds = names.filter((n) => n.startsWith(`.${base}.old-`)).sort();
  if (!(await exists(path.join(parent, base))) && olds.length > 0) {
    await rename(path.join(parent, olds.pop()!), path.join(parent, base));
  }
  for (const n of names) {
    const leftover = n.startsWith(`.${base}.tmp-`) ? !writerAlive(n) : olds.includes(n);
    if (leftover) await rm(path.join(parent, n), { recursive: true, force: true });
  }
}

/**
 * A temporary folder `.<base>.tmp-<pid>-<time>` whose process still runs belongs to a writer at work
 * that holds no lock (a release before the lock), not to a killed one: it is left alone.
 */
function writerAlive(name: string): boolean {
  const pid = Number(/\.tmp-(\d+)-/.exec(name)?.[1]);
  return Boolean(pid) && pid !== process.pid && alive(pid);
}

export async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}
