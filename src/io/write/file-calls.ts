import { Worker } from "node:worker_threads";
import { onInterrupt } from "./interrupt.ts";
import { PIECE } from "../../core/body.ts";

/**
 * The file system calls that put a build's files on disk, made by the build's own thread or by a
 * writing thread beside it (WritingThread). On disk, most of a large build's time is spent inside
 * these calls (ext4 making a folder and an inode per answer: at 40,000 access points 48 of 76 s in
 * `mkdir`, `open` and `write`, docs/performance.md), while rendering the bodies is the other third;
 * on a thread of their own the two overlap.
 *
 * `fileCalls` is self-contained (it names nothing outside its body): the writing thread is given its
 * text, so both threads run the one implementation.
 */
export interface FileCalls {
  /** makes a folder and its missing parents, never `root` itself (an interrupt may have removed it) */
  folder(dir: string): void;
  /** writes a whole file: a new one, or one the recycled tree holds (`was`: its recorded length) */
  whole(full: string, data: Uint8Array, was: number | undefined): void;
  /** where a file is written: in place, or beside it and renamed over it when the recycled file is long */
  target(full: string, was: number | undefined): { readonly target: string; readonly renamed: boolean };
  /** opens a file to write: a new one (refusing one already there), or a recycled one written over */
  open(target: string, was: number | undefined): number;
  /** gives a written file a second name, in place of whatever that name holds (a recycled file, a link planted there) */
  link(existing: string, full: string): void;
  /** removes a recycled file's name (one that shares its inode, before the name gets bytes of its own) */
  unlink(full: string): void;
}

/**
 * The calls, for the thread that runs them.
 *
 * A recycled file is written over and cut to its new length after, never through a symbolic link
 * standing at its name (a link planted there would have the build write wherever it points):
 * O_NOFOLLOW refuses it (ELOOP), and the link itself is then removed and the file made anew. Not
 * O_TRUNC: a file cut to nothing and written again is flushed to the disk when it is closed (ext4's
 * auto_da_alloc), one synchronous flush per file. But a block a write covers only in part is read
 * from the disk first when its page is no longer cached (a recycled tree is a cycle old: the cycle
 * took 65 s instead of 43 at 40,000 access points, docs/performance.md). So the bytes go with
 * zeros to the end of their last block, in one call, and the file is cut to length after.
 *
 * Folders made as parents are remembered for the build (one per access point, interface or link),
 * and the last few folders asked for: each ask of a folder already there was a failing mkdir
 * (10,247 of 59,195 at 3,000 access points, strace). A missing parent is made first; the root
 * never, so that after an interrupt removed it no write brings it back, as a recursive mkdir would.
 * A folder found made is no failure: both threads make folders (a long file's is made by the
 * build's thread while the writing thread is still on the files before it).
 */
export function fileCalls(root: string, readAtOnce: number): FileCalls {
  const fs = process.getBuiltinModule("node:fs");
  const path = process.getBuiltinModule("node:path");
  const REWRITE = fs.constants.O_WRONLY | fs.constants.O_CREAT | (fs.constants.O_NOFOLLOW ?? 0);
  const open = (target: string, was: number | undefined): number => {
    const flags = was !== undefined ? REWRITE : "wx";
    try {
      return fs.openSync(target, flags);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ELOOP") throw err;
      fs.unlinkSync(target);
      return fs.openSync(target, flags);
    }
  };
  const target = (full: string, was: number | undefined) => {
    const renamed = was !== undefined && was > readAtOnce;
    return { target: renamed ? path.join(path.dirname(full), `.${path.basename(full)}.new`) : full, renamed };
  };
  const parents = new Set<string>();
  const recent: string[] = [];
  const make = (dir: string, asParent: boolean): void => {
    if (dir === root || parents.has(dir) || recent.includes(dir)) return;
    try {
      fs.mkdirSync(dir);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== "EEXIST") {
        if (code !== "ENOENT") throw err;
        make(path.dirname(dir), true);
        try {
          fs.mkdirSync(dir);
        } catch (again) {
          if ((again as NodeJS.ErrnoException).code !== "EEXIST") throw again;
        }
      }
    }
    if (asParent) parents.add(dir);
    else if (recent.unshift(dir) > 4) recent.pop();
  };
  // the block the file system prefers (fstat of the first file written over), within reason
  let zeros: Uint8Array | undefined;
  const padded = (fd: number, data: Uint8Array): Uint8Array => {
    zeros ??= new Uint8Array(fs.fstatSync(fd).blksize);
    if (zeros.length < 512 || zeros.length > 65536 || (zeros.length & (zeros.length - 1)) !== 0) zeros = new Uint8Array(4096);
    const fill = (zeros.length - (data.length % zeros.length)) % zeros.length;
    return fill === 0 ? data : Buffer.concat([data, zeros.subarray(0, fill)]);
  };
  const ignoring = (call: () => unknown, code: string, instead = () => undefined as unknown): void => {
    try {
      call();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== code) throw err;
      instead();
    }
  };
  return {
    folder: (dir) => make(dir, false),
    target,
    open,
    whole(full, data, was) {
      const at = target(full, was);
      const fd = open(at.target, was);
      try {
        // a long file goes beside its recycled one: a new file, nothing to read
        const all = was !== undefined && !at.renamed ? padded(fd, data) : data;
        for (let done = 0; done < all.length;) done += fs.writeSync(fd, all, done, all.length - done, done);
        if (was !== undefined) fs.ftruncateSync(fd, data.length);
      } finally {
        fs.closeSync(fd);
      }
      if (at.renamed) fs.renameSync(at.target, full);
    },
    link(existing, full) {
      const made = (): unknown => fs.linkSync(existing, full);
      ignoring(made, "EEXIST", () => (fs.unlinkSync(full), made()));
    },
    // gone already (removed by hand): the name gets its file all the same
    unlink: (full) => ignoring(() => fs.unlinkSync(full), "ENOENT"),
  };
}

/**
 * A batch's calls: ["d", folder], ["w", file, start, end, recorded length or -1] over the batch's
 * bytes, ["l", existing file, its new name], ["u", file].
 */
type Call =
  readonly ["d", string] | readonly ["w", string, number, number, number] | readonly ["l", string, string] | readonly ["u", string];

/** A failure of the thread's calls, as the build's own thread would have thrown it. */
interface CallError {
  readonly name: string;
  readonly message: string;
  readonly stack?: string;
  readonly code?: string;
  readonly errno?: number;
  readonly syscall?: string;
  readonly path?: string;
  readonly dest?: string;
}

/** The control words shared with the thread: the build asks it to stop; the thread says it is in a batch. */
const STOP = 0;
const BUSY = 1;

/** The writing thread's own code (given as text: it names nothing outside its body). */
function threadMain(calls: typeof fileCalls): void {
  const { parentPort, workerData } = process.getBuiltinModule("node:worker_threads");
  const { root, readAtOnce, control } = workerData as { root: string; readAtOnce: number; control: Int32Array };
  const made = calls(root, readAtOnce);
  let failed = false;
  const fail = (err: unknown) => {
    failed = true;
    const { name, message, stack, code, errno, syscall, path, dest } = err as NodeJS.ErrnoException & { dest?: string };
    parentPort!.postMessage({ error: { name, message, stack, code, errno, syscall, path, dest } });
  };
  // a batch that cannot be read: said, and counted as done, so that the build does not wait for it
  parentPort!.on("messageerror", (err) => {
    fail(err);
    parentPort!.postMessage({ done: true });
  });
  parentPort!.on("message", ({ calls: batch, bytes }: { calls: Call[]; bytes: ArrayBuffer }) => {
    // Busy first, then the stop word: the build's interrupt sets stop first, then waits while busy,
    // so one of the two always sees the other.
    Atomics.store(control, 1, 1);
    const data = new Uint8Array(bytes);
    for (const call of batch) {
      if (failed || Atomics.load(control, 0) === 1) break;
      try {
        if (call[0] === "d") made.folder(call[1]);
        else if (call[0] === "w") made.whole(call[1], data.subarray(call[2], call[3]), call[4] < 0 ? undefined : call[4]);
        else if (call[0] === "l") made.link(call[1], call[2]);
        else made.unlink(call[1]);
      } catch (err) {
        fail(err);
      }
    }
    Atomics.store(control, 1, 0);
    Atomics.notify(control, 1);
    // the batch's buffer goes back to be filled again
    parentPort!.postMessage({ done: true, bytes }, [bytes]);
  });
}

/** Bytes and calls gathered before a batch goes to the thread, and batches on their way at once. */
const BATCH_BYTES = 512 * 1024;
const BATCH_CALLS = 1024;
const IN_FLIGHT = 4;
/**
 * A batch's buffer, handed back by the thread and filled again: a batch holds under BATCH_BYTES and
 * one more file, and the build's thread writes a body over a piece itself (emit.ts). A new buffer a
 * batch (several thousand in a 40,000 build) came from the C library's heap, which keeps its
 * high-water mark (docs/performance.md, fortieth session).
 */
const BATCH_BUFFER = BATCH_BYTES + PIECE;

/**
 * A writing thread: the build hands it folders and whole files in batches (the bytes copied into one
 * transferred buffer a batch, at most IN_FLIGHT batches on their way) and goes on rendering. The calls
 * are made in the order they were handed, so a folder is there before its files. The first failure
 * stops the thread and is thrown by `settled`; an interrupt stops it before the build's folder is
 * removed (io/write/interrupt.ts).
 */
export class WritingThread {
  private readonly worker: Worker;
  private readonly control = new Int32Array(new SharedArrayBuffer(8));
  private calls: Call[] = [];
  private chunks: Uint8Array[] = [];
  private bytes = 0;
  private inFlight = 0;
  private waiting: (() => void)[] = [];
  /** buffers the thread handed back (at most IN_FLIGHT are out at once) */
  private readonly spare: ArrayBuffer[] = [];
  private readonly forget: () => void;
  failure: unknown;

  constructor(root: string, readAtOnce: number) {
    // esbuild (tsx, the tests' bundle) names functions through a helper of its module: given here
    this.worker = new Worker(`var __name = (f) => f;\n(${threadMain.toString()})(${fileCalls.toString()})`, {
      eval: true,
      // the eval'd text needs no loader (tsx under `npm run build`)
      execArgv: [],
      workerData: { root, readAtOnce, control: this.control },
      // it holds a batch or two and a set of folder names: far below these
      resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 2 },
    });
    this.worker.on("message", (m: { done?: true; error?: CallError; bytes?: ArrayBuffer }) => {
      if (m.bytes?.byteLength === BATCH_BUFFER && this.spare.length < IN_FLIGHT) this.spare.push(m.bytes);
      if (m.error) this.failure ??= Object.assign(new Error(m.error.message), m.error);
      if (m.done) this.inFlight--;
      this.wake();
    });
    this.worker.on("messageerror", (err) => {
      this.failure ??= err;
      this.wake();
    });
    this.worker.on("error", (err) => {
      this.failure ??= err;
      this.wake();
    });
    this.worker.on("exit", () => {
      this.failure ??= new Error("the writing thread ended before the build's files were written");
      this.inFlight = 0;
      this.wake();
    });
    // Innermost cleanup, so it runs before the build's folder is removed.
    this.forget = onInterrupt(() => {
      this.stop();
      return undefined;
    });
  }

  /**
   * No call after this returns (but one the thread is in, for up to two seconds): after an interrupt,
   * or a failure, before the build's folder is removed. Synchronous, as a signal's cleanup must be.
   */
  stop(): void {
    Atomics.store(this.control, STOP, 1);
    const until = Date.now() + 2000;
    while (Atomics.load(this.control, BUSY) === 1 && Date.now() < until) Atomics.wait(this.control, BUSY, 1, 50);
  }

  folder(dir: string): void {
    this.calls.push(["d", dir]);
    if (this.calls.length >= BATCH_CALLS) this.send();
  }

  link(existing: string, full: string): void {
    this.calls.push(["l", existing, full]);
    if (this.calls.length >= BATCH_CALLS) this.send();
  }

  unlink(full: string): void {
    this.calls.push(["u", full]);
    if (this.calls.length >= BATCH_CALLS) this.send();
  }

  whole(full: string, data: Uint8Array, was: number | undefined): void {
    this.calls.push(["w", full, this.bytes, this.bytes + data.length, was ?? -1]);
    this.chunks.push(data);
    this.bytes += data.length;
    if (this.bytes >= BATCH_BYTES || this.calls.length >= BATCH_CALLS) this.send();
  }

  /** Waits while IN_FLIGHT batches are on their way; undefined when one more may go now. */
  room(): Promise<void> | undefined {
    if (this.inFlight < IN_FLIGHT || this.failure !== undefined) return undefined;
    return (async () => {
      while (this.inFlight >= IN_FLIGHT && this.failure === undefined) await this.next();
    })();
  }

  /** Everything handed so far is on disk; throws the thread's first failure. */
  async settled(): Promise<void> {
    this.send();
    while (this.inFlight > 0 && this.failure === undefined) await this.next();
    if (this.failure !== undefined) throw this.failure;
  }

  /** Ends the thread; whatever it was doing is finished or never started once this returns. */
  async close(): Promise<void> {
    this.forget();
    this.stop();
    this.worker.removeAllListeners("exit");
    await this.worker.terminate();
  }

  private send(): void {
    if (this.calls.length === 0) return;
    const bytes = this.bytes <= BATCH_BUFFER ? (this.spare.pop() ?? new ArrayBuffer(BATCH_BUFFER)) : new ArrayBuffer(this.bytes);
    const view = new Uint8Array(bytes);
    let at = 0;
    for (const chunk of this.chunks) {
      view.set(chunk, at);
      at += chunk.length;
    }
    this.worker.postMessage({ calls: this.calls, bytes }, [bytes]);
    this.inFlight++;
    [this.calls, this.chunks, this.bytes] = [[], [], 0];
  }

  private next(): Promise<void> {
    return new Promise((ok) => this.waiting.push(ok));
  }

  private wake(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const ok of waiting) ok();
  }
}
