import { createHash } from "node:crypto";
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { deserialize, serialize } from "node:v8";
import { inject } from "vitest";
import type { RawResponse } from "./http.ts";
import type { SharedName } from "./shared.ts";

/**
 * The preview's answers to a list of requests on a shared build, kept for the run. Every server's
 * test file (served.ts) replays the same lists on the same shared builds against the preview, and
 * the preview runs inside the test's own process (about half a millisecond a request, most of a
 * replay's time on 2 cores). The first file to ask keeps its answers under the shared set-up's
 * folder (global.ts), the others read them: the same build (setup.ts checks after each file that
 * no file changed one) and the same code, so the same answers, compared byte for byte as before.
 * Builds a file makes itself are always asked.
 */
export async function previewAnswersOnce(
  shared: SharedName | undefined,
  requests: readonly { readonly method: string; readonly target: string }[],
  ask: () => Promise<RawResponse[]>,
): Promise<RawResponse[]> {
  if (!shared) return ask();
  const key = createHash("sha256").update(shared);
  for (const r of requests) key.update(`\n${r.method} ${r.target}`);
  return onceARun(
    path.join(inject("answersFolder"), `${key.digest("hex")}.bin`),
    ask,
    (answers) => serialize(toStored(answers)),
    (bytes) => fromStored(deserialize(bytes) as Stored),
  );
}

/**
 * What `make` gives, made once a run by whichever test file asks first and kept in `file` (under
 * the shared set-up's folder) for the others: a file that asks while another makes it waits for it
 * (two server files often start together), and one whose maker stopped without writing it makes it
 * itself.
 */
export async function onceARun<T>(
  file: string,
  make: () => Promise<T>,
  write: (value: T) => Buffer | string,
  read: (bytes: Buffer) => T,
): Promise<T> {
  mkdirSync(path.dirname(file), { recursive: true });
  const kept = () => {
    try {
      return { value: read(readFileSync(file)) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw err;
    }
  };
  const pending = `${file}.pending`;
  for (const until = Date.now() + 30_000; ;) {
    const found = kept();
    if (found) return found.value;
    try {
      closeSync(openSync(pending, "wx"));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    if (Date.now() > until) return make();
    await new Promise((r) => setTimeout(r, 50));
  }
  try {
    const found = kept(); // written between the look above and the claim
    if (found) return found.value;
    const value = await make();
    // Written whole under a name of this process, then renamed: a file reading it never sees a part.
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, write(value));
    renameSync(tmp, file);
    return value;
  } finally {
    rmSync(pending, { force: true });
  }
}

/** Answers with each distinct body once (most lists and not-found pages repeat). */
interface Stored {
  readonly bodies: Buffer[];
  readonly answers: { readonly status: number; readonly headers: Record<string, string>; readonly body: number }[];
}

function toStored(answers: readonly RawResponse[]): Stored {
  const index = new Map<string, number>();
  const bodies: Buffer[] = [];
  return {
    bodies,
    answers: answers.map(({ status, headers, body }) => {
      const digest = createHash("sha256").update(body).digest("hex");
      let i = index.get(digest);
      if (i === undefined) index.set(digest, (i = bodies.push(body) - 1));
      return { status, headers, body: i };
    }),
  };
}

function fromStored(s: Stored): RawResponse[] {
  const bodies = s.bodies.map((b) => Buffer.from(b.buffer, b.byteOffset, b.byteLength));
  return s.answers.map(({ status, headers, body }) => ({ status, headers, body: bodies[body] }));
}
