import { renameSync, rmSync, symlinkSync } from "node:fs";
import { lstat, readdir, readlink, realpath, rm, stat } from "node:fs/promises";
import path from "node:path";
import { alive } from "./lock.ts";
import { owned, RefusedOutputError } from "./ownership.ts";

/**
 * A served folder behind a symbolic link. A web server whose root is a link follows it on every
 * request; pointing the link elsewhere is one rename(2) of a new link over the old one, so a request
 * finds the old folder or the new one, never none (two folder renames leave an instant without one).
 *
 * `build --out <link>` writes each build into a new folder beside the link's target, named
 * `<link's name>.<n>` (n one past the highest number that name has there), points the link at it,
 * keeps the folder served until then (requests in flight finish on it) and removes the older builds
 * of that name. Only folders of this name that hold a build of mesh-api are ever removed.
 */

export interface LinkLayout {
  /** the link, absolute, as named */
  readonly link: string;
  /** the folder it points at now (absolute, real), when there is one */
  readonly served?: string;
  /** the new build's folder: `<served's folder>/<link name>.<n>` */
  readonly next: string;
  /** what the link will hold: relative when it holds a relative path now, else absolute */
  readonly text: string;
  /** the builds of this name before the one served: removed once the new one is served */
  readonly retire: readonly string[];
}

/** Whether `p` is a symbolic link (not followed). */
export async function isLink(p: string): Promise<boolean> {
  return (await lstat(path.resolve(p)).catch(() => undefined))?.isSymbolicLink() ?? false;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** `<name>.<n>`, the folders of builds served through a link named `name`. */
export const numbered = (name: string) => new RegExp(`^${escape(name)}\\.(\\d+)$`);

/** Where the link `out` points: refused when that is another link, or in a folder that does not exist. */
async function pointed(out: string): Promise<{ link: string; linkDir: string; before: string; folder: string; target: string }> {
  const link = path.resolve(out);
  const linkDir = await realpath(path.dirname(link));
  const before = await readlink(link);
  const target = path.resolve(linkDir, before);
  const refuse = (why: string, todo: string): never => {
    throw new RefusedOutputError(`refusing to write to ${out}: ${why}; ${todo}.`);
  };
  if ((await lstat(target).catch(() => undefined))?.isSymbolicLink())
    refuse(`it is a symbolic link to another link, ${before}`, `point ${out} at a folder (ln -sfn <folder> ${out})`);
  const folder = await realpath(path.dirname(target)).catch(() => undefined);
  if (folder === undefined)
    return refuse(
      `it is a symbolic link to ${before}, in a folder that does not exist`,
      `make ${path.dirname(target)}, or point ${out} elsewhere`,
    );
  return { link, linkDir, before, folder, target };
}

/** Refuses, before any work, a link that a build cannot point at a new folder (linkLayout). */
export async function assertLinkUsable(out: string): Promise<void> {
  await pointed(out);
}

/**
 * The layout of a build through the link `out` (as the user named it, for messages). To be read under
 * the link's lock: the number and the folders to retire depend on the others' builds.
 */
export async function linkLayout(out: string): Promise<LinkLayout> {
  const { link, linkDir, before, folder, target } = await pointed(out);
  const name = path.basename(link);
  const served = (await stat(target).catch(() => undefined))?.isDirectory() ? path.join(folder, path.basename(target)) : undefined;
  const pattern = numbered(name);
  const names = await readdir(folder);
  const taken = names.map((n) => Number(pattern.exec(n)?.[1] ?? -1));
  const next = path.join(folder, `${name}.${Math.max(0, ...taken) + 1}`);
  const retire: string[] = [];
  for (const other of names.sort())
    if (pattern.test(other) && path.join(folder, other) !== served)
      if ((await owned(path.join(folder, other)).catch(() => undefined)) === "build") retire.push(path.join(folder, other));
  return { link, served, next, text: path.isAbsolute(before) ? next : path.relative(linkDir, next), retire };
}

/**
 * What killed builds through the link left: new links not renamed yet (`.<name>.link-<pid>-<time>`
 * beside the link), temporary and half-removed build folders (`.<name>.<n>.tmp-…`, `.trash-…`, io/write/swap.ts)
 * beside the builds; only those whose process no longer runs.
 */
export async function sweepLink(layout: LinkLayout): Promise<void> {
  const name = escape(path.basename(layout.link));
  const sweep = async (dir: string, pattern: RegExp) => {
    for (const n of await readdir(dir).catch(() => [] as string[])) {
      const pid = Number(pattern.exec(n)?.[1]);
      if (pid && pid !== process.pid && !alive(pid)) await rm(path.join(dir, n), { recursive: true, force: true, maxRetries: 3 });
    }
  };
  await sweep(path.dirname(layout.link), new RegExp(`^\\.${name}\\.link-(\\d+)-\\d+$`));
  await sweep(path.dirname(layout.next), new RegExp(`^\\.${name}\\.\\d+\\.(?:tmp|trash)-(\\d+)-\\d+$`));
}

/**
 * Points the symbolic link `link` at `text` in one rename: a new link made beside it
 * (`.<name>.link-<pid>-<time>`) is renamed over it. Synchronous, so that it can close a swap
 * (io/write/swap.ts) without a signal handler running in between; a failure leaves the link as it was.
 */
export function pointLink(link: string, text: string): void {
  const tmp = path.join(path.dirname(link), `.${path.basename(link)}.link-${process.pid}-${Date.now()}`);
  symlinkSync(text, tmp);
  try {
    renameSync(tmp, link);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}
