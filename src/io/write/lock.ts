import { readFileSync, realpathSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { onInterrupt } from "./interrupt.ts";
import { lockedHere, RefusedOutputError } from "./ownership.ts";

/**
 * One writer per output folder. Two builds into the same folder would each swap in their own tree,
 * the later one silently standing; instead the writer holds a lock file beside the folder,
 * `.<name>.lock` with its pid, and a second writer is refused while the holder runs. The lock of a
 * process that has ended (killed, crashed, the machine restarted) is taken over.
 */
export interface OutputLock {
  /** Throws RefusedOutputError when the lock is no longer this writer's (another writer took it over). */
  assertHeld(): void;
  release(): void;
}

/** The folder is being written by a live process: a refusal, which a periodic job counts as a skipped run. */
export class LockedError extends RefusedOutputError {
  constructor(
    message: string,
    readonly pid: number,
  ) {
    super(message);
    this.name = "LockedError";
  }
}

interface Holder {
  readonly pid: number;
  readonly since: string;
}

/** Lock files this process holds: its own pid in one of them is not a leftover. */
const held = new Set<string>();

/** A lock file younger than this with no readable holder is being written; older, it is a leftover. */
const WRITING_MS = 5000;

/**
 * The folder itself, whatever name it is given (a symbolic link, a relative path): build, snapshot
 * and cycle lock the same file for the same folder. A folder not made yet, in its parent's real place.
 * `asNamed`: a symbolic link at `target` is locked as itself, in its parent's real place (a build that
 * repoints the link, io/write/link.ts, locks the link and, separately, the folder it points at).
 */
function realTarget(target: string, asNamed = false): string {
  try {
    if (asNamed) throw new Error("the link itself");
    return realpathSync(target);
  } catch {
    try {
      return path.join(realpathSync(path.dirname(path.resolve(target))), path.basename(target));
    } catch {
      return path.resolve(target);
    }
  }
}

export interface LockOptions {
  /** lock a symbolic link at `target` as itself, not the folder it points at */
  readonly asNamed?: boolean;
}

/** Takes the lock of the folder `target` (`name` is how the user named it, for the message). */
export function lockOutput(target: string, name: string, options: LockOptions = {}): OutputLock {
  const real = realTarget(target, options.asNamed);
  const file = path.join(path.dirname(real), `.${path.basename(real)}.lock`);
  const body = JSON.stringify({ pid: process.pid, since: new Date().toISOString() } satisfies Holder) + "\n";
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(file, body, { flag: "wx" });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const text = readText(file);
    if (text === undefined) continue; // removed in between: try again
    const holder = parseHolder(text);
    if (holder && (holder.pid === process.pid ? held.has(file) : alive(holder.pid))) {
      const who = holder.pid === process.pid ? "this process" : `another mesh-api (pid ${holder.pid})`;
      throw new LockedError(
        `refusing to write to ${name}: ${who} is writing it since ${holder.since} (lock ${file}); ` +
          `wait for it to end, or remove ${file} if no such process runs.`,
        holder.pid,
      );
    }
    if (!holder && attempt < 100 && Date.now() - (mtime(file) ?? 0) < WRITING_MS) {
      sleep(20);
      continue;
    }
    takeOver(file, text);
  }
  held.add(file);
  // Folders inside a cycle's state are written only by the process holding the state's lock (io/write/ownership.ts).
  const unnote = lockedHere(real);
  const release = () => {
    held.delete(file);
    unnote();
    if (readText(file) === body) unlinkSync(file);
  };
  const unregister = onInterrupt(() => void release());
  return {
    assertHeld() {
      if (readText(file) !== body)
        throw new RefusedOutputError(
          `refusing to replace ${name}: another writer took over its lock ${file} meanwhile; nothing was replaced.`,
        );
    },
    release() {
      unregister();
      release();
    },
  };
}

/**
 * Removes a leftover lock. Two writers may find the same leftover: the rename lets one of them take
 * it; the other, having moved away a lock that is not the leftover it read, puts that one back.
 */
function takeOver(file: string, leftover: string): void {
  const claimed = `${file}.${process.pid}`;
  try {
    renameSync(file, claimed);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  const text = readText(claimed);
  if (text !== undefined && text !== leftover) {
    try {
      writeFileSync(file, text, { flag: "wx" });
    } catch {
      // A third writer took the free place; the one whose lock this was sees it in assertHeld.
    }
  }
  unlinkSync(claimed);
}

function parseHolder(text: string): Holder | undefined {
  try {
    const h = JSON.parse(text) as Partial<Holder>;
    return Number.isInteger(h.pid) && (h.pid as number) > 0
      ? { pid: h.pid as number, since: String(h.since ?? "an unknown time") }
      : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a process runs: signal 0 only asks. EPERM: it runs, as another user. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

function mtime(file: string): number | undefined {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
