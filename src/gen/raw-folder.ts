import { lstat, readdir, readFile, realpath, writeFile } from "node:fs/promises";
import path from "node:path";
import { assertReplaceable, owned, RefusedOutputError } from "../io/write/ownership.ts";
import { replaceFolder } from "../io/write/swap.ts";
import { ondataserviceDb } from "./ondataservice-db.ts";
import { assertStep, rawSources } from "./raw.ts";
import type { SynthDump } from "./synth.ts";

/**
 * A folder of a synthetic network's raw sources, as `import opennet` and `cycle` read them:
 * `olsr.txt` (`--olsr`), `wiki.html` (`--wiki`), `ondataservice.db` (`--ondataservice`).
 *
 * The folder carries a marker of its own, not the `.mesh-api-output` of dumps and builds: a dump's
 * marker would let `synth --raw` replace a dump that `import opennet` wrote from a real network, and
 * let the importers replace these sources. Every command of mesh-api refuses the folder as one it did
 * not write; `synth --raw` replaces it only while it holds nothing but what it wrote there.
 */

export const RAW_FILES = { olsr: "olsr.txt", wiki: "wiki.html", ondataservice: "ondataservice.db" } as const;
export const RAW_MARKER = ".mesh-api-synth-raw";
const RAW_FORMAT = "mesh-api-synth-raw/1";
const OURS = new Set<string>([RAW_MARKER, ...Object.values(RAW_FILES)]);

export interface RawFolderOptions {
  readonly seed: number;
  readonly step: number;
  /** the option that named the folder, for messages */
  readonly option?: string;
  readonly cwd?: string;
  readonly home?: string;
}

const refuse = (dir: string, why: string, todo: string): never => {
  throw new RefusedOutputError(`refusing to write to ${dir}: ${why}; ${todo}.`);
};

/** Whether the folder carries this writer's marker (its other entries are not looked at here). */
async function marked(dir: string): Promise<boolean> {
  try {
    return (JSON.parse(await readFile(path.join(dir, RAW_MARKER), "utf8")) as { format?: unknown }).format === RAW_FORMAT;
  } catch {
    return false;
  }
}

/**
 * Throws RefusedOutputError unless `dir` may be replaced by raw sources: absent, empty, or a folder
 * of raw sources this writer made that holds nothing else. Everything else is refused as
 * `assertReplaceable` refuses it (a file, the root, the home folder, the current folder or one above
 * it, a folder of someone else's), and so is a folder of mesh-api's own of another kind.
 */
export async function assertRawReplaceable(dir: string, options: Omit<RawFolderOptions, "seed" | "step"> = {}): Promise<void> {
  const option = options.option ?? "--raw";
  const names = await readdir(dir).catch(() => undefined);
  if (names !== undefined && names.includes(RAW_MARKER) && (await marked(dir))) {
    const others: string[] = [];
    for (const name of names.sort()) if (!OURS.has(name) || !(await lstat(path.join(dir, name))).isFile()) others.push(name);
    if (others.length > 0)
      refuse(
        dir,
        `it holds ${others.length === 1 ? "an entry" : "entries"} that synth --raw did not write (${others.slice(0, 3).join(", ")}${others.length > 3 ? ", …" : ""})`,
        `move ${others.length === 1 ? "it" : "them"} away or choose a new folder for ${option}`,
      );
    // Nothing but files of ours, so it cannot lie above the current folder; being it is refused as for any output.
    if ((await realpath(dir)) === (await realpath(options.cwd ?? process.cwd())))
      refuse(dir, "it is the current folder", `choose a new folder for ${option}, such as raw`);
    return;
  }
  if (names !== undefined && names.length > 0) {
    const kind = await owned(dir).catch(() => undefined);
    if (kind === "build" || kind === "dump" || kind === "live")
      refuse(
        dir,
        `it holds a ${kind === "live" ? "cycle's state" : kind} of mesh-api, not raw sources`,
        `choose another folder for ${option}`,
      );
  }
  try {
    // absent or empty: what is left to refuse is where no output may go at all
    await assertReplaceable({ out: dir, option, kind: "dump", cwd: options.cwd, home: options.home });
  } catch (err) {
    // assertReplaceable suggests a folder named after the kind it checks; these are no dump
    if (err instanceof RefusedOutputError) throw new RefusedOutputError(err.message.replace(/(, such as \S*?)dump(-new)?\.$/, "$1raw."));
    throw err;
  }
}

/**
 * Writes the raw sources of `dump` at `step` into `dir`, after assertRawReplaceable: into a temporary
 * sibling first, then swapped in (a failure or an interrupt leaves `dir` as it was). The files are
 * the same bytes for the same network, seed and step.
 */
export async function writeRawFolder(dir: string, dump: SynthDump, options: RawFolderOptions): Promise<void> {
  assertStep(options.step);
  await assertRawReplaceable(dir, options);
  const raw = rawSources(dump, options.step, options.seed);
  const db = await ondataserviceDb(dump, options.step, options.seed);
  const marker = {
    format: RAW_FORMAT,
    tool: "mesh-static-api",
    accesspoints: dump.accesspoints.length,
    seed: options.seed,
    step: options.step,
  };
  await replaceFolder(dir, async (tmp) => {
    await writeFile(path.join(tmp, RAW_FILES.olsr), raw.olsr);
    await writeFile(path.join(tmp, RAW_FILES.wiki), raw.wiki);
    await writeFile(path.join(tmp, RAW_FILES.ondataservice), db);
    await writeFile(path.join(tmp, RAW_MARKER), JSON.stringify(marker) + "\n");
  });
}
