import { existsSync } from "node:fs";
import { mkdir, rmdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { snapshotListing } from "../../core/documents/pages.ts";
import { SNAPSHOT_DIR, SNAPSHOT_FILES } from "../../core/routes.ts";
import { foreignFiles } from "./build-record.ts";
import { lockOutput, type OutputLock } from "./lock.ts";
import { owned, RefusedOutputError, resolveReal } from "./ownership.ts";

/** The output folder of a build: its locks, the folders made for it, what it may replace, the snapshots page it starts with. */

/** The snapshots folder's page before a first snapshot, so that the landing page's link answers (the snapshot writers replace it). */
export async function emptySnapshotFolder(dir: string): Promise<boolean> {
  const page = path.join(dir, SNAPSHOT_DIR, SNAPSHOT_FILES.listing);
  if (existsSync(page)) return false;
  await mkdir(path.dirname(page), { recursive: true });
  await writeFile(page, snapshotListing({ snapshots: [] }));
  return true;
}

/**
 * The output's lock (io/write/lock.ts), taken before any work, so that a second build into the same output
 * is refused at once. The lock lives beside the output: a missing parent is made for it, and what was
 * made is removed again when the build fails (`unmake`), so a failed build leaves no folder.
 */
export async function lockBeforeWork(out: string, linked: boolean): Promise<{ lock: OutputLock; made?: string }> {
  const parent = path.dirname(path.resolve(out));
  const made = await mkdir(parent, { recursive: true });
  try {
    return { lock: linked ? await lockLink(out) : lockOutput(path.resolve(out), out), made };
  } catch (err) {
    if (made) await unmake(made, parent);
    throw err;
  }
}

/**
 * A writer through a symbolic link holds two locks: the link's own (`.<link>.lock` beside it: two
 * builds through the same link, each of which repoints it) and that of the folder it points at (a
 * writer naming that folder directly, io/write/lock.ts).
 */
export async function lockLink(out: string): Promise<OutputLock> {
  const own = lockOutput(path.resolve(out), out, { asNamed: true });
  let target: OutputLock;
  try {
    // where the link points, also when nothing is there yet
    target = lockOutput(await resolveReal(out), out);
  } catch (err) {
    own.release();
    throw err;
  }
  return {
    assertHeld() {
      own.assertHeld();
      target.assertHeld();
    },
    release() {
      target.release();
      own.release();
    },
  };
}

/** The folders from `made` down to `deepest` that this build made, as far as they are still empty. */
export async function unmake(made: string, deepest: string): Promise<void> {
  for (let dir = deepest; dir.startsWith(made); dir = path.dirname(dir))
    if (
      !(await rmdir(dir).then(
        () => true,
        () => false,
      ))
    )
      return;
}

/** The swap drops whatever the old output holds; files the tool did not write are refused, never lost. */
export async function assertNothingForeign(out: string): Promise<void> {
  if ((await owned(out).catch(() => undefined)) !== "build") return;
  const foreign = await foreignFiles(out);
  if (foreign.length === 0) return;
  const named = foreign.slice(0, 3).join(", ") + (foreign.length > 3 ? ` and ${foreign.length - 3} more` : "");
  throw new RefusedOutputError(
    `refusing to replace ${out}: it holds ${named}, which mesh-api did not write and a new build would drop; ` +
      `move ${foreign.length === 1 ? "it" : "them"} into a folder of your own and build with --extra <that folder>.`,
  );
}
