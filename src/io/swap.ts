import { mkdir, readdir, rename, rm, stat } from "node:fs/promises";
import path from "node:path";

/**
 * Every writer of a folder (build, snapshots, fetched dumps) fills a temporary sibling and swaps it
 * in with two renames, so a failure or a kill never leaves a half-written folder; the next run
 * removes the leftovers (and puts back an old folder a kill between the two renames left aside).
 */
export async function replaceFolder<T>(target: string, fill: (tmp: string) => Promise<T>): Promise<T> {
  const full = path.resolve(target);
  const parent = path.dirname(full);
  const base = path.basename(full);
  await mkdir(parent, { recursive: true });
  await recoverLeftovers(parent, base);
  const tmp = path.join(parent, `.${base}.tmp-${process.pid}-${Date.now()}`);
  await mkdir(tmp);
  let result: T;
  try {
    result = await fill(tmp);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
  await swapDir(tmp, full);
  return result;
}

/**
 * Puts the complete folder `tmp` in the place of `target` with two renames: the old one is moved
 * aside first and removed last. A failure on the way puts the old one back; a kill between the two
 * renames is undone by the next run's recoverLeftovers.
 */
async function swapDir(tmp: string, target: string): Promise<void> {
  const old = path.join(path.dirname(target), `.${path.basename(target)}.old-${process.pid}-${Date.now()}`);
  const hadOld = await exists(target);
  try {
    if (hadOld) await rename(target, old);
    await rename(tmp, target);
  } catch (err) {
    if (hadOld && !(await exists(target))) await rename(old, target);
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
  // The new folder is in place; failing to remove the old one does not fail the write.
  if (hadOld) await rm(old, { recursive: true, force: true }).catch(() => {});
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
 * (a second build into the same output), not to a killed one: it is left alone.
 */
function writerAlive(name: string): boolean {
  const pid = Number(/\.tmp-(\d+)-/.exec(name)?.[1]);
  if (!pid || pid === process.pid) return false;
  try {
    process.kill(pid, 0); // signal 0 only asks whether the process exists
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

export async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}
