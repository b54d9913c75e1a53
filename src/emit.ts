import { mkdir, open, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Body, OutputFile } from "./files.ts";

/**
 * Stage 5: write the output tree atomically. Files go into a temporary sibling of `out`, which then
 * replaces `out` by two renames. A build that fails or is killed leaves `out` as it was; the next
 * build removes the leftovers (and puts back an old tree a kill between the two renames left aside).
 */
export interface EmitResult {
  readonly files: number;
  readonly bytes: number;
}

/** Files written at once, and the bytes they may hold in memory (measured: see README, "Performance"). */
const WRITE_CONCURRENCY = Number(process.env.MESH_API_WRITE_CONCURRENCY) || 32;
const BYTES_IN_FLIGHT = 64 * 2 ** 20;
/** Lists longer than this are written piece by piece. */
const PIECE = 2 ** 20;

/** `finish` runs on the complete temporary tree before it replaces `out` (snapshots are made there). */
export async function emitTree(out: string, files: Iterable<OutputFile>, finish?: (dir: string) => Promise<void>): Promise<EmitResult> {
  const target = path.resolve(out);
  const parent = path.dirname(target);
  const base = path.basename(target);
  await mkdir(parent, { recursive: true });
  await recoverLeftovers(parent, base);
  const tmp = path.join(parent, `.${base}.tmp-${process.pid}-${Date.now()}`);
  await mkdir(tmp);
  let result: EmitResult;
  try {
    result = await writeAll(tmp, files);
    await finish?.(tmp);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
  await swapDir(tmp, target);
  return result;
}

/**
 * Puts the complete folder `tmp` in the place of `target` with two renames: the old one is moved
 * aside first and removed last. A failure on the way puts the old one back; a kill between the two
 * renames is undone by the next run's recoverLeftovers.
 */
export async function swapDir(tmp: string, target: string): Promise<void> {
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
  // The new tree is in place; failing to remove the old one does not fail the build.
  if (hadOld) await rm(old, { recursive: true, force: true }).catch(() => {});
}

async function writeAll(root: string, files: Iterable<OutputFile>): Promise<EmitResult> {
  const pending = new Set<Promise<void>>();
  let count = 0;
  let bytes = 0;
  let inFlight = 0;
  let failure: unknown;
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
        await makeFolder(dir);
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
 * the common case; a missing parent (or a race with a sibling's write) takes the recursive path.
 */
async function makeFolder(dir: string): Promise<void> {
  try {
    await mkdir(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") await mkdir(dir, { recursive: true });
    else if (code !== "EEXIST") throw err;
  }
}

const [OPEN, COMMA, CLOSE] = ["[", ",", "]"].map((c) => Buffer.from(c));

/** A body as UTF-8 pieces; a JSON list in pieces of about PIECE bytes, so a 60 MB list never exists whole. */
function* bodyPieces(body: Body): Generator<Buffer> {
  if (typeof body === "string") return yield Buffer.from(body, "utf8");
  if (Buffer.isBuffer(body)) return yield body;
  let batch: Buffer[] = [OPEN];
  let size = 1;
  let empty = true;
  for (const item of body) {
    if (!empty) batch.push(COMMA);
    batch.push(item);
    empty = false;
    size += item.length + 1;
    if (size >= PIECE) {
      yield Buffer.concat(batch);
      [batch, size] = [[], 0];
    }
  }
  batch.push(CLOSE);
  yield Buffer.concat(batch);
}

export async function recoverLeftovers(parent: string, base: string): Promise<void> {
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
 * A temporary tree `.<base>.tmp-<pid>-<time>` whose process still runs belongs to a build writing
 * at this moment (a second build into the same output), not to a killed one: it is left alone.
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

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}
