import { mkdir, open, writeFile } from "node:fs/promises";
import { replaceFolder, type ReplaceOptions } from "./swap.ts";
import type { OutputLock } from "./lock.ts";
import path from "node:path";
import { bodyPieces, PIECE } from "../core/body.ts";
import type { OutputFile } from "../core/plan.ts";

/** Writes the planned responses into a new tree that replaces `out` atomically (io/swap.ts). */
export interface EmitResult {
  readonly files: number;
  readonly bytes: number;
}

/** Files written at once, and the bytes they may hold in memory (measured: see README, "Performance"). */
const WRITE_CONCURRENCY = Number(process.env.MESH_API_WRITE_CONCURRENCY) || 32;
const BYTES_IN_FLIGHT = 64 * 2 ** 20;

export interface EmitOptions {
  /** runs on the complete temporary tree before it replaces `out` (the marker and snapshots are made there) */
  readonly finish?: (dir: string) => Promise<void>;
  /** called after each file is written, with the count so far */
  readonly progress?: (files: number) => void;
  /** the output's lock, when the caller holds it already (io/swap.ts) */
  readonly lock?: OutputLock;
  /** whether the previous output is removed before returning or by a detached process (io/swap.ts) */
  readonly removeOld?: ReplaceOptions["removeOld"];
}

export async function emitTree(out: string, files: Iterable<OutputFile>, options: EmitOptions = {}): Promise<EmitResult> {
  return replaceFolder(
    out,
    async (tmp) => {
      const result = await writeAll(tmp, files, options.progress);
      await options.finish?.(tmp);
      return result;
    },
    { lock: options.lock, removeOld: options.removeOld },
  );
}

async function writeAll(root: string, files: Iterable<OutputFile>, progress?: (files: number) => void): Promise<EmitResult> {
  const pending = new Set<Promise<void>>();
  let count = 0;
  let bytes = 0;
  let inFlight = 0;
  let failure: unknown;
  let written = 0;
  try {
    for (const file of files) {
      if (failure) break;
      const full = path.join(root, file.path);
      if (!full.startsWith(root + path.sep)) throw new Error(`refusing to write outside the output: ${file.path}`);
      const dir = path.dirname(full);
      const body = file.body;
      count++;
      // Counted before the job starts, so the cap holds back the next one. A list is rendered as it
      // is written and holds at most about one piece at a time.
      const held = typeof body === "string" || Buffer.isBuffer(body) ? body.length : PIECE;
      inFlight += held;
      const job = (async () => {
        await makeFolder(root, dir);
        const pieces = bodyPieces(body);
        const first = pieces.next();
        const second = first.done ? first : pieces.next();
        if (second.done) {
          // The common case: the whole body in one piece, written with one call.
          const data = first.done ? Buffer.alloc(0) : first.value;
          bytes += data.length;
          await writeFile(full, data, { flag: "wx" });
          return;
        }
        const handle = await open(full, "wx");
        const write = async (piece: Buffer) => {
          bytes += piece.length;
          await handle.write(piece);
        };
        try {
          await write(first.value!);
          await write(second.value);
          for (const piece of pieces) await write(piece);
        } finally {
          await handle.close();
        }
      })()
        .catch((err) => {
          failure ??= err;
        })
        .finally(() => {
          progress?.(++written);
          inFlight -= held;
          pending.delete(job);
        });
      pending.add(job);
      while (pending.size >= WRITE_CONCURRENCY || (inFlight > BYTES_IN_FLIGHT && pending.size > 0)) await Promise.race(pending);
    }
  } finally {
    // Never leave writes running behind a failure: the caller removes the folder next.
    await Promise.all(pending);
  }
  if (failure) throw failure;
  return { files: count, bytes };
}

/**
 * Every response has a folder of its own whose parent usually exists already, so one plain mkdir is
 * the common case; a missing parent is made the same way first. The root itself is never made: after
 * an interrupt removed it (io/interrupt.ts), a write still in flight must not bring it back, as a
 * recursive mkdir would.
 */
async function makeFolder(root: string, dir: string): Promise<void> {
  if (dir === root) return;
  try {
    await mkdir(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return;
    if (code !== "ENOENT") throw err;
    await makeFolder(root, path.dirname(dir));
    await mkdir(dir).catch((again: NodeJS.ErrnoException) => {
      if (again.code !== "EEXIST") throw again; // a sibling's write made it meanwhile
    });
  }
}
