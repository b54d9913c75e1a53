import path from "node:path";
import { LockedError, lockOutput } from "../io/write/lock.ts";
import { RefusedOutputError } from "../io/write/ownership.ts";
import { snapshot, type SnapshotSettings } from "../pipeline.ts";
import type { PipelineOptions } from "../pipeline.ts";
import type { SnapshotWritten } from "../publish/archives.ts";
import { committed, LAYOUT } from "./state.ts";

/**
 * `snapshot --state`: a snapshot of what a cycle serves now, its dump and its build, written into the
 * served build (the next run carries it on, as it carries the daily ones). Under the state's lock, so
 * that no run commits meanwhile and drops it; a run at work makes it wait for the next try.
 */
export async function snapshotState(
  options: { state: string } & Omit<SnapshotSettings, "previous"> & PipelineOptions,
): Promise<SnapshotWritten & { readonly data: string; readonly dist: string }> {
  const state = path.resolve(options.state);
  let lock;
  try {
    lock = lockOutput(state, options.state);
  } catch (err) {
    if (err instanceof LockedError)
      throw new RefusedOutputError(
        `refusing to snapshot ${options.state}: a cycle (pid ${err.pid}) is working on it; try again when it has ended.`,
      );
    throw err;
  }
  try {
    const run = await committed(state);
    if (run === undefined)
      throw new RefusedOutputError(
        `refusing to snapshot ${options.state}: it holds no run of mesh-api cycle yet (no ${LAYOUT.current} link); run cycle --state ${options.state} first.`,
      );
    const dist = path.join(run.dir, LAYOUT.build);
    const data = path.join(run.dir, LAYOUT.dump);
    const written = await snapshot({ ...options, dist, data });
    return { ...written, dist };
  } finally {
    lock.release();
  }
}
