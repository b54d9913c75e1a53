import { readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * Writes a small file whole or not at all: a temporary sibling (`.<name>.tmp-<pid>`) renamed over it,
 * so a reader (a web server including it, the next run) sees the old text or the new one.
 */
export async function writeWhole(file: string, text: string): Promise<void> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.tmp-${process.pid}`);
  try {
    await writeFile(tmp, text);
    await rename(tmp, file);
  } finally {
    await rm(tmp, { force: true });
  }
}

/** A file's text, or undefined when there is none. */
export const readText = (file: string) =>
  readFile(file, "utf8").catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return undefined;
    throw err;
  });
