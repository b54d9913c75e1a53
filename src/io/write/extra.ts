import { constants } from "node:fs";
import { copyFile, mkdir, stat } from "node:fs/promises";
import path from "node:path";
import fg from "fast-glob";
import { API_DIR, FILES, HIDDEN as HIDDEN_ROOT, SNAPSHOT_DIR } from "../../core/routes.ts";
import { RefusedOutputError } from "./ownership.ts";

/**
 * The operator's own files for the site (`build --extra <dir>`: robots.txt, an about/ page, a
 * .well-known/ folder), copied into every build, so that nothing they add has to live in the output,
 * which each build replaces.
 */

/** The tool's own folders and hidden files: never the operator's, whatever else the build writes. */
const RESERVED = [API_DIR, SNAPSHOT_DIR];
const HIDDEN = Object.values(FILES)
  .map((f) => f.slice(1))
  .filter((f) => f.startsWith("."));
/** what the tool may name its own files later, or while it works (a snapshot's archive being written) */
const HIDDEN_PREFIX = HIDDEN_ROOT.slice(1);

/** The files of the extra folder, relative to it, sorted; refused before any work when it cannot be used. */
export async function listExtra(dir: string, option = "--extra"): Promise<string[]> {
  const s = await stat(dir).catch(() => undefined);
  if (!s?.isDirectory())
    throw new RefusedOutputError(`${option} ${dir} is not a folder; name the folder that holds your own files for the site.`);
  const files = (await fg("**", { cwd: dir, dot: true, onlyFiles: true, followSymbolicLinks: false })).sort();
  for (const f of files) {
    const top = f.split("/")[0];
    const why = RESERVED.includes(top)
      ? `${top}/ is the build's own folder`
      : HIDDEN.includes(f)
        ? `${f} is the build's own file`
        : top.startsWith(HIDDEN_PREFIX)
          ? `names starting with ${HIDDEN_PREFIX} are the build's own`
          : undefined;
    if (why) throw new RefusedOutputError(`${option} ${dir} holds ${f}, but ${why}; move it elsewhere.`);
  }
  return files;
}

/**
 * Copies the extra files into a complete build, never over a file the build wrote: a name that the
 * build also writes is a usage error, and the caller's output stays as it was.
 */
export async function copyExtra(dir: string, files: readonly string[], into: string, option = "--extra"): Promise<void> {
  for (const f of files) {
    const dest = path.join(into, f);
    try {
      await mkdir(path.dirname(dest), { recursive: true });
      await copyFile(path.join(dir, f), dest, constants.COPYFILE_EXCL);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EEXIST" || code === "ENOTDIR" || code === "EISDIR")
        throw new RefusedOutputError(
          `${option} ${dir} holds ${f}, which the build writes itself (or a folder of it); rename or remove it there.`,
        );
      throw err;
    }
  }
}
