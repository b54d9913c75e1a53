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
  const file = path.join(inject("answersFolder"), `${key.digest("hex")}.bin`);
  mkdirSync(path.dirname(file), { recursive: true });
  // One file asks, a file that wants the same answers meanwhile waits for them (two server files
  // often start together); one whose asker stopped without writing them asks itself.
  const pending = `${file}.pending`;
  for (const until = Date.now() + 30_000; ;) {
    const kept = read(file);
    if (kept) return kept;
    try {
      closeSync(openSync(pending, "wx"));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    if (Date.now() > until) return ask();
    await new Promise((r) => setTimeout(r, 50));
  }
  try {
    const kept = read(file); // written between the look above and the claim
    if (kept) return kept;
    const answers = await ask();
    // Written whole under a name of this process, then renamed: a file reading it never sees a part.
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, serialize(toStored(answers)));
    renameSync(tmp, file);
    return answers;
  } finally {
    rmSync(pending, { force: true });
  }
}

function read(file: string): RawResponse[] | undefined {
  try {
    return fromStored(deserialize(readFileSync(file)) as Stored);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
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
