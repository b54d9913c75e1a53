import { mkdir, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import type { OutputFile } from "./files.ts";

/**
 * Stage 5: write the output tree atomically. Files go into a temporary sibling of `out`, which then
 * replaces `out` by two renames. A build that fails or is killed leaves `out` as it was; the next
 * build removes the leftovers (and puts back an old tree a kill between the two renames left aside).
 */
export interface EmitResult {
  readonly files: number;
  readonly bytes: number;
}

const WRITE_CONCURRENCY = 32;

/** `finish` runs on the complete temporary tree before it replaces `out` (snapshots are made there). */
export async function emitTree(out: string, files: Iterable<OutputFile>, finish?: (dir: string) => Promise<void>): Promise<EmitResult> {
  const target = path.resolve(out);
  const parent = path.dirname(target);
  const base = path.basename(target);
  await mkdir(parent, { recursive: true });
  await recoverLeftovers(parent, base);
  const tmp = path.join(parent, `.${base}.tmp-${process.pid}-${Date.now()}`);
  await mkdir(tmp);
  try {
    const result = await writeAll(tmp, files);
    await finish?.(tmp);
    const old = path.join(parent, `.${base}.old-${process.pid}-${Date.now()}`);
    const hadOld = await exists(target);
    if (hadOld) await rename(target, old);
    await rename(tmp, target);
    if (hadOld) await rm(old, { recursive: true, force: true });
    return result;
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
}

async function writeAll(root: string, files: Iterable<OutputFile>): Promise<EmitResult> {
  // One mkdir per folder, shared by every write into it.
  const folders = new Map<string, Promise<unknown>>([[root, Promise.resolve()]]);
  const pending = new Set<Promise<void>>();
  let count = 0;
  let bytes = 0;
  let failure: unknown;
  for (const file of files) {
    if (failure) break;
    const full = path.join(root, file.path);
    if (!full.startsWith(root + path.sep)) throw new Error(`refusing to write outside the output: ${file.path}`);
    const dir = path.dirname(full);
    const data = Buffer.from(file.body, "utf8");
    count++;
    bytes += data.length;
    const job = (async () => {
      let folder = folders.get(dir);
      if (!folder) folders.set(dir, (folder = mkdir(dir, { recursive: true })));
      await folder;
      await writeFile(full, data, { flag: "wx" });
    })().catch((err) => {
      failure ??= err;
    });
    pending.add(job);
    job.finally(() => pending.delete(job));
    if (pending.size >= WRITE_CONCURRENCY) await Promise.race(pending);
  }
  await Promise.all(pending);
  if (failure) throw failure;
  return { files: count, bytes };
}

async function recoverLeftovers(parent: string, base: string): Promise<void> {
  const names = await readdir(parent);
  const olds = names.filter((n) => n.startsWith(`.${base}.old-`)).sort();
  if (!(await exists(path.join(parent, base))) && olds.length > 0) {
    await rename(path.join(parent, olds.pop()!), path.join(parent, base));
  }
  for (const n of names) {
    if (n.startsWith(`.${base}.tmp-`) || olds.includes(n)) await rm(path.join(parent, n), { recursive: true, force: true });
  }
}

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}
