import { DEFAULTS } from "../../core/defaults.ts";
import { lstat, readdir, readFile, readlink, realpath, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { API, API_DIR, FILES, SNAPSHOT_DIR } from "../../core/routes.ts";
import { CommandError } from "../../core/problems.ts";

/**
 * Which folders a command may replace. A command writes only into a folder that is absent, empty, or
 * marked as written by this tool; everything else is refused before any work, with one sentence that
 * says why and what to do. Folders are compared after resolving symbolic links, so a link cannot
 * smuggle the dump folder or the home folder in.
 */

/** The marker every folder this tool writes carries at its top (hidden: hosts and the preview skip it). */
export const MARKER = FILES.marker.slice(1);
/** `live`: the state folder of `mesh-api cycle` (its dump, its builds, its record of runs) */
export type OutputKind = "build" | "dump" | "live";
const FORMAT = "mesh-api-output/1";

export function markerBody(kind: OutputKind): string {
  return JSON.stringify({ format: FORMAT, tool: "mesh-static-api", kind }) + "\n";
}

export async function writeMarker(dir: string, kind: OutputKind): Promise<void> {
  await writeFile(path.join(dir, MARKER), markerBody(kind));
}

/** A usage error: the command was asked to write where it must not. The CLI exits 2. */
export class RefusedOutputError extends CommandError {
  readonly ending = "usage";
  constructor(message: string) {
    super(message);
    this.name = "RefusedOutputError";
  }
}

export interface OutputCheck {
  /** the folder to be replaced, as the user named it */
  readonly out: string;
  /** the option that named it, for the message (`--out`, `--dist`) */
  readonly option: string;
  /** what the command writes there: a folder marked as the other kind is not its to replace */
  readonly kind: OutputKind;
  /** the command writes inside the folder (snapshot) instead of replacing it, so a mount point will do */
  readonly writesInside?: boolean;
  /** folders the output must not be, lie inside or contain (the dump being read) */
  readonly protect?: readonly { readonly dir: string; readonly option: string }[];
  /** the current folder; the process's own by default */
  readonly cwd?: string;
  readonly home?: string;
}

const KIND_NAMES: Record<OutputKind, string> = { build: "build", dump: "dump", live: "cycle's state" };

/**
 * The real paths of the folders whose lock (io/write/lock.ts) this process holds, with a count per folder.
 * A folder inside a cycle's state is written only by the process holding the state's lock: the cycle
 * itself, building into its state and importing into its dump.
 */
const locked = new Map<string, number>();

/** Notes that this process holds the lock of the folder at the real path `real`; the function returned forgets it. */
export function lockedHere(real: string): () => void {
  locked.set(real, (locked.get(real) ?? 0) + 1);
  let forgotten = false;
  return () => {
    if (forgotten) return;
    forgotten = true;
    const n = (locked.get(real) ?? 1) - 1;
    if (n > 0) locked.set(real, n);
    else locked.delete(real);
  };
}

/**
 * The state folder of `mesh-api cycle` (its marker's kind is `live`) that the real path `real` is or
 * lies inside, looking at `real` itself (unless `strictly`) and each of its ancestors.
 */
export async function liveStateAround(real: string, strictly = false): Promise<string | undefined> {
  for (let at = strictly ? path.dirname(real) : real; ; at = path.dirname(at)) {
    const text = await readFile(path.join(at, MARKER), "utf8").catch(() => undefined);
    if (text !== undefined) {
      try {
        const marker = JSON.parse(text) as { format?: unknown; kind?: unknown };
        if (marker.format === FORMAT && marker.kind === "live") return at;
      } catch {
        // not a marker of ours
      }
    }
    if (path.dirname(at) === at) return undefined;
  }
}

/**
 * Refuses an output that is a cycle's served link, or any path whose real place is a cycle's state
 * folder or lies inside one (its builds, its dump): the cycle alone writes there, under the state's
 * lock, and a folder put in place of its link or its builds stops every later run. The one exception
 * is this process holding that state's lock (the cycle building and importing).
 */
export async function assertNotLive(check: Pick<OutputCheck, "out" | "option" | "kind">): Promise<void> {
  const out = await resolveReal(check.out);
  const state = await liveStateAround(out, check.kind === "live");
  if (state === undefined || locked.has(state)) return;
  // The path itself, a symbolic link not followed: a link of the cycle's own lies inside the state too.
  const named = path.join(await resolveReal(path.dirname(path.resolve(check.out))), path.basename(path.resolve(check.out)));
  const link = (await lstat(named).catch(() => undefined))?.isSymbolicLink();
  const why =
    out === state && named === state
      ? `it is the state folder of mesh-api cycle`
      : link && named !== state && !inside(named, state)
        ? `it is a symbolic link into ${state}, the state folder of mesh-api cycle`
        : `it lies inside ${state}, the state folder of mesh-api cycle`;
  throw new RefusedOutputError(
    `refusing to write to ${check.out}: ${why}, which only the cycle writes; ` +
      `run mesh-api cycle --state ${state} … to rebuild it, and mesh-api snapshot --state ${state} for a snapshot.`,
  );
}

/** Throws RefusedOutputError when `out` may not be replaced; returns quietly otherwise. */
export async function assertReplaceable(check: OutputCheck): Promise<void> {
  const name = check.out;
  const out = await resolveReal(check.out);
  await assertNotLive(check);
  // The advice names a folder that is neither the refused one nor one it protects.
  const protectedDirs = await Promise.all((check.protect ?? []).map((p) => resolveReal(p.dir)));
  const candidates = check.kind === "build" ? [DEFAULTS.dist, "site", "public"] : [check.kind, `${check.kind}-new`];
  const suggestion =
    candidates.find((c) => ![out, ...protectedDirs].includes(path.resolve(check.cwd ?? process.cwd(), c))) ?? candidates[0];
  const refuse = (why: string, todo = `choose a new folder for ${check.option}, such as ${suggestion}`) => {
    throw new RefusedOutputError(`refusing to write to ${name}: ${why}; ${todo}.`);
  };
  if (out === path.parse(out).root) refuse("it is the root of the file system");
  const home = await resolveReal(check.home ?? os.homedir());
  if (out === home) refuse("it is your home folder");
  const cwd = await resolveReal(check.cwd ?? process.cwd());
  if (out === cwd) refuse("it is the current folder");
  if (inside(cwd, out)) refuse("it contains the current folder");
  for (const p of check.protect ?? []) {
    const dir = await resolveReal(p.dir);
    if (out === dir) refuse(`it is the ${p.option} folder`);
    if (inside(out, dir)) refuse(`it is inside the ${p.option} folder ${p.dir}`);
    if (inside(dir, out)) refuse(`it contains the ${p.option} folder ${p.dir}`);
  }
  const s = await stat(out).catch(() => undefined);
  if (!s) return;
  if (!s.isDirectory()) refuse("it is a file, not a folder", `choose a folder for ${check.option}`);
  // The folder is replaced by renaming it, which a mount point does not allow.
  const parent = await stat(path.dirname(out)).catch(() => undefined);
  if (parent && parent.dev !== s.dev && !check.writesInside) {
    refuse(
      "it is a mount point, and the folder is replaced by renaming it",
      `choose a folder inside it, such as ${path.join(name, check.kind === "dump" ? "dump" : DEFAULTS.dist)}`,
    );
  }
  const owner = await owned(out);
  if (owner === undefined) {
    refuse(
      `it is not empty and was not written by mesh-api (no ${MARKER} file in it)`,
      `empty it or choose a new folder for ${check.option}`,
    );
  }
  if (owner !== "empty" && owner !== check.kind) {
    refuse(`it holds a ${KIND_NAMES[owner!]} of mesh-api, not a ${KIND_NAMES[check.kind]}`, `choose another folder for ${check.option}`);
  }
}

/**
 * What an existing folder holds, as far as replacing it goes: nothing ("empty"), something this tool
 * wrote (its marker's kind; a build of 0.1.0, from before the marker, by its layout), or anything
 * else (undefined).
 */
export async function owned(dir: string): Promise<OutputKind | "empty" | undefined> {
  const names = (await readdir(dir)).sort();
  if (names.length === 0) return "empty";
  if (names.includes(MARKER)) {
    const text = await readFile(path.join(dir, MARKER), "utf8").catch(() => "");
    try {
      const marker = JSON.parse(text) as { format?: unknown; kind?: unknown };
      if (marker.format !== FORMAT) return undefined;
      return marker.kind === "dump" || marker.kind === "build" || marker.kind === "live" ? marker.kind : undefined;
    } catch {
      return undefined;
    }
  }
  // Outputs of release 0.1.0: exactly api/ (holding v1/), _redirects and 404.html, and the snapshots/
  // that `build --snapshot` added.
  const legacy = [FILES.notFoundPage, FILES.redirectRules, `/${API_DIR}`].map((f) => f.slice(1)).sort();
  const rest = names.filter((n) => n !== SNAPSHOT_DIR);
  if (rest.join("/") !== legacy.join("/")) return undefined;
  return (await stat(path.join(dir, API)).catch(() => undefined))?.isDirectory() ? "build" : undefined;
}

function inside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
}

/**
 * The real path of `p`, or of its nearest existing ancestor joined with the rest; a symbolic link
 * whose target is absent (dangling) is followed to where its target would be.
 */
export async function resolveReal(p: string, depth = 0): Promise<string> {
  const full = path.resolve(p);
  const rest: string[] = [];
  for (let at = full; ; at = path.dirname(at)) {
    const real = await realpath(at).catch(() => undefined);
    if (real !== undefined) return path.join(real, ...rest.reverse());
    const text = depth < 40 ? await readlink(at).catch(() => undefined) : undefined;
    if (text !== undefined) return resolveReal(path.join(path.resolve(path.dirname(at), text), ...rest.reverse()), depth + 1);
    if (path.dirname(at) === at) return full;
    rest.push(path.basename(at));
  }
}
