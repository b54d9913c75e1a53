import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { fileCalls, WritingThread } from "../src/io/write/file-calls.ts";
import { tempDir } from "./support/tree.ts";

/**
 * The writing thread (src/io/write/file-calls.ts) on its own: the calls in the order handed, a
 * failure thrown as the build's own thread would have thrown it and no call after it, a recycled
 * file written over (a link at its name replaced, never followed), and a root removed meanwhile
 * never made again. Builds through it: workflow.test (the same tree), interrupt.test (an interrupt).
 */
/** `body` with a writing thread into `root`, closed after it whatever happened. */
async function withThread(root: string, readAtOnce: number, body: (thread: WritingThread) => Promise<void>): Promise<void> {
  const thread = new WritingThread(root, readAtOnce);
  try {
    await body(thread);
  } finally {
    await thread.close();
  }
}

/** What `settled` threw, or undefined. */
const failureOf = (thread: WritingThread) =>
  thread.settled().then(
    () => undefined,
    (err: unknown) => err as NodeJS.ErrnoException,
  );

describe("the writing thread", () => {
  afterEach(() => void vi.unstubAllGlobals());

  it("makes folders and files in the order handed: new ones, and recycled ones written over and cut", async () => {
    const root = tempDir();
    await withThread(root, 16, async (thread) => {
      const long = Buffer.alloc(40, "b");
      for (let i = 0; i < 3000; i++) {
        thread.folder(path.join(root, "a", String(i % 7), String(i)));
        thread.whole(path.join(root, "a", String(i % 7), String(i), "index.json"), Buffer.from(`{"i":${i}}`), undefined);
        await thread.room();
      }
      await thread.settled();
      expect(readFileSync(path.join(root, "a/3/2999/index.json"), "utf8")).toBe('{"i":2999}');
      // recycled: shorter bytes cut to length; a long file renamed over; a planted link replaced, not followed
      const outside = path.join(tempDir(), "victim");
      writeFileSync(outside, "keep");
      const planted = path.join(root, "a/0/0/index.json");
      rmSync(planted);
      symlinkSync(outside, planted);
      thread.whole(planted, Buffer.from("{}"), 10);
      thread.whole(path.join(root, "a/1/1/index.json"), Buffer.from("{}"), 10);
      thread.whole(path.join(root, "a/2/2/index.json"), long, 40);
      await thread.settled();
      expect(readFileSync(outside, "utf8")).toBe("keep");
      expect(lstatSync(planted).isSymbolicLink()).toBe(false);
      expect(readFileSync(planted, "utf8")).toBe("{}");
      expect(readFileSync(path.join(root, "a/1/1/index.json"), "utf8")).toBe("{}");
      expect(readFileSync(path.join(root, "a/2/2/index.json"))).toEqual(long);
      expect(existsSync(path.join(root, "a/2/2/.index.json.new"))).toBe(false);
    });
  });

  it("writes a recycled file over in place with exactly its new bytes, whatever their length against a block", () => {
    const root = tempDir();
    const calls = fileCalls(root, 1 << 20);
    const file = path.join(root, "index.json");
    // its last block is filled with zeros before the cut (never read from the disk): none may stay
    for (const length of [10_000, 4096, 4097, 1, 0, 8191, 12_288, 3]) {
      writeFileSync(file, Buffer.alloc(10_000, "x"));
      const data = Buffer.alloc(length, "y");
      calls.whole(file, data, 10_000);
      expect(readFileSync(file)).toEqual(data);
    }
  });

  it("throws the first failure with its code and makes no call after it", async () => {
    const root = tempDir();
    await withThread(root, 16 * 1024, async (thread) => {
      mkdirSync(path.join(root, "x"));
      writeFileSync(path.join(root, "x/index.json"), "old");
      // a new file where one is: refused ("wx"), as the build's own thread refuses it
      thread.whole(path.join(root, "x/index.json"), Buffer.from("new"), undefined);
      thread.folder(path.join(root, "after"));
      const failed = await failureOf(thread);
      expect(failed?.code).toBe("EEXIST");
      expect(failed?.syscall).toBe("open");
      expect(failed?.message).toMatch(/^EEXIST: file already exists, open '.*index\.json'$/);
      expect(readFileSync(path.join(root, "x/index.json"), "utf8")).toBe("old");
      expect(existsSync(path.join(root, "after"))).toBe(false);
    });
  });

  it("makes no call once stopped (an interrupt's cleanup, a failure), though calls were handed", async () => {
    const root = tempDir();
    await withThread(root, 16 * 1024, async (thread) => {
      for (let i = 0; i < 20_000; i++) thread.folder(path.join(root, String(i)));
      await thread.room();
      // the first batches are being made now
      while (readdirSync(root).length === 0) await new Promise((ok) => setTimeout(ok, 1));
      thread.stop();
      const made = readdirSync(root).length;
      await new Promise((ok) => setTimeout(ok, 200));
      expect(readdirSync(root).length).toBe(made);
      expect(made).toBeLessThan(20_000);
    });
  });

  it("takes a folder the build's thread made meanwhile for made (a long file's folder is the build's thread's)", async () => {
    const root = tempDir();
    const direct = fileCalls(root, 16);
    await withThread(root, 16, async (thread) => {
      // both threads make the same chains of missing folders at once: each may find a folder made between its two tries
      for (let round = 0; round < 20; round++) {
        for (let i = 0; i < 400; i++) thread.folder(path.join(root, String(round), String(i), "x", "y"));
        thread.whole(path.join(root, String(round), "done"), Buffer.from("{}"), undefined);
        await thread.room();
        for (let i = 0; i < 400; i++) direct.folder(path.join(root, String(round), String(i), "x", "y"));
      }
      expect(await failureOf(thread)).toBeUndefined();
    });
    expect(readdirSync(path.join(root, "19")).length).toBe(401);
  });

  it("never makes the root again once it is gone", async () => {
    const parent = tempDir();
    const root = path.join(parent, "tmp");
    mkdirSync(root);
    await withThread(root, 16 * 1024, async (thread) => {
      rmSync(root, { recursive: true });
      thread.folder(path.join(root, "a", "b"));
      const failed = await failureOf(thread);
      expect(failed?.code).toBe("ENOENT");
      expect(existsSync(root)).toBe(false);
    });
  });

  it("fills the batches' buffers the thread hands back again, never one of its own a batch, and writes each file's bytes", async () => {
    // the buffers of at least half a MiB made meanwhile: a batch's (a new one each came from the C library's heap)
    let made = 0;
    class Counted extends ArrayBuffer {
      constructor(length: number) {
        super(length);
        if (length >= 512 * 1024) made++;
      }
    }
    vi.stubGlobal("ArrayBuffer", Counted);
    const root = tempDir();
    const body = (i: number) => Buffer.alloc(64 * 1024 + i, i % 251);
    await withThread(root, 16, async (thread) => {
      thread.folder(path.join(root, "f"));
      // 25 MiB: about fifty batches
      for (let i = 0; i < 400; i++) {
        thread.whole(path.join(root, "f", `${i}.json`), body(i), undefined);
        await thread.room();
      }
      await thread.settled();
    });
    vi.unstubAllGlobals();
    for (let i = 0; i < 400; i++) expect(readFileSync(path.join(root, "f", `${i}.json`)).equals(body(i))).toBe(true);
    // at most IN_FLIGHT on their way, one being filled, one handed back late
    expect(made).toBeGreaterThan(0);
    expect(made).toBeLessThanOrEqual(6);
  });
});
