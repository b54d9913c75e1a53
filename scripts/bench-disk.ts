import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readlinkSync, realpathSync, rmSync } from "node:fs";
import path from "node:path";

/**
 * ext4 without a journal (this machine's disk) does not hand out an inode freed less than a minute
 * ago, six while its inode table block is dirty, which the next allocation in that block makes it
 * (fs/ext4/ialloc.c, recently_deleted); every allocation checks each such inode of its block group
 * again, in the buffer cache. A build or a copy made within six minutes of a large removal spends its
 * system time there: `cp -r` of a 3,000-access-point output took 51.7 s of system time right after
 * the removal of a tree of that size, and 4.5 s on an untouched file system (docs/performance.md).
 * So on such a file system each measured command waits until the bench's last removal is older.
 */
const HELD_BACK_MS = 365_000;

/** When this process last removed files (from its start: a removal just before it is not known). */
let lastRemoval = performance.now();

/** Removes a tree (if there) and syncs, noting when for `settle`. */
export function removeTree(dir: string): void {
  if (!existsSync(dir)) return;
  rmSync(dir, { recursive: true, force: true });
  removedNow();
}

/** Notes a removal made by another process (a rebuild's detached remover, say), synced now. */
export function removedNow(): void {
  spawnSync("sync");
  lastRemoval = performance.now();
}

/** Waits, where `dir`'s file system holds freed inodes back, until the last removal is older than that. */
export async function settle(dir: string, log = (line: string) => void process.stderr.write(line)): Promise<void> {
  const wait = lastRemoval + HELD_BACK_MS - performance.now();
  if (wait <= 0 || !holdsFreedInodesBack(dir)) return;
  log(`  waiting ${Math.ceil(wait / 1000)} s: this file system holds freed inodes back after a removal\n`);
  await new Promise((ok) => setTimeout(ok, wait));
}

/** Whether `dir` is on ext4 without a journal (sysfs says `<none>`); false where that cannot be told. */
export function holdsFreedInodesBack(dir: string): boolean {
  try {
    const mount = mountOf(realpathSync(dir), readFileSync("/proc/self/mountinfo", "utf8"));
    if (mount?.type !== "ext4") return false;
    const name = path.basename(readlinkSync(`/sys/dev/block/${mount.device}`));
    return readFileSync(`/sys/fs/ext4/${name}/journal_task`, "utf8").trim() === "<none>";
  } catch {
    return false;
  }
}

/** The mount (of /proc/self/mountinfo's lines) that holds the absolute, resolved path `real`: the deepest one. */
export function mountOf(real: string, mountinfo: string): { point: string; device: string; type: string } | undefined {
  let best: { point: string; device: string; type: string } | undefined;
  for (const line of mountinfo.split("\n")) {
    const fields = line.split(" ");
    const dash = fields.indexOf("-");
    if (dash < 5) continue;
    // the kernel writes a space, tab, newline or backslash in a mount point as an octal escape
    const point = fields[4].replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
    const inside = real === point || real.startsWith(point === "/" ? "/" : `${point}/`);
    if (inside && (best === undefined || point.length >= best.point.length)) best = { point, device: fields[2], type: fields[dash + 1] };
  }
  return best;
}
