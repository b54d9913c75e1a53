import { statSync } from "node:fs";
import path from "node:path";
import fg from "fast-glob";
import { inject } from "vitest";
import type { Model } from "../../src/core/model/model.ts";
import { ROOT } from "./tree.ts";

// No module of src/ is imported here at load time: setup.ts imports this file before each test
// file, and a module loaded then would escape the test file's vi.mock (test/filter-record.test.ts).
const PUBLIC_SAMPLE = new URL("../fixtures/public-sample/", import.meta.url).pathname;

/**
 * The builds every run makes once (global.ts) and the test files read: the public sample with
 * default options and with the opennet profile, data/, the synthetic network of 300 access points
 * (seed 20) and the hostile filter values (hostile.ts), the last two also with folders split into shards. A file that writes into a build, or needs
 * options of its own, builds its own.
 */
export const SHARED_BUILDS = {
  public: { data: () => `${PUBLIC_SAMPLE}dump` },
  "public-opennet": { data: () => `${PUBLIC_SAMPLE}dump`, settings: { brand: "opennet", defaultStatus: "online" } },
  data: { data: () => path.join(ROOT, "data") },
  "synth-300": { data: (d: Dumps) => d.synth },
  hostile: { data: (d: Dumps) => d.hostile },
  // Folder limits low enough to split the details' and filter values' folders into shards (core/routes/layout.ts).
  "synth-300-split": { data: (d: Dumps) => d.synth, settings: { folderLimit: 2 } },
  "hostile-split": { data: (d: Dumps) => d.hostile, settings: { folderLimit: 8 } },
} as const;

/** The dumps global.ts writes before building. */
export interface Dumps {
  readonly synth: string;
  readonly hostile: string;
}

export type SharedName = keyof typeof SHARED_BUILDS;
export type SharedBuilds = Readonly<Record<SharedName, { readonly data: string; readonly out: string; readonly stamp: string }>>;

declare module "vitest" {
  export interface ProvidedContext {
    builds: SharedBuilds;
    /** where the preview's answers on the shared builds are kept for the run (answers.ts) */
    answersFolder: string;
  }
}

/** Every file of a tree with its size and modification time: what a test that wrote into it changes. */
export function stampOf(dir: string): string {
  const files = fg.sync("**/*", { cwd: dir, dot: true, onlyFiles: true }).sort();
  return files
    .map((f) => {
      const st = statSync(path.join(dir, f));
      return `${f}\u0000${st.size}\u0000${st.mtimeMs}`;
    })
    .join("\n");
}

const used = new Set<SharedName>();

/**
 * The shared builds this test file used that are no longer as built (setup.ts checks after each file).
 * Then forgotten: outside the unit tier a worker's files share this module (vitest.config.ts), and
 * the next file names the builds it uses itself (each file calls sharedBuild), so the check after it
 * walks those, not every build an earlier file of the worker used (a third of a second for all seven).
 */
export function changedSharedBuilds(): SharedName[] {
  if (used.size === 0) return [];
  const builds = inject("builds");
  const changed = [...used].filter((name) => stampOf(builds[name].out) !== builds[name].stamp);
  used.clear();
  return changed;
}

/** A shared build's folder (read only) and its model, as validate makes it from the same dump and options. */
export async function sharedBuild(name: SharedName): Promise<{ readonly data: string; readonly out: string; readonly model: Model }> {
  const { data, out } = inject("builds")[name];
  used.add(name);
  const recipe = SHARED_BUILDS[name];
  const { validate } = await import("../../src/index.ts");
  const r = await validate({ data, ...("settings" in recipe && { settings: recipe.settings }) });
  if (!r.model) throw new Error(`${name}: the shared build's dump no longer validates`);
  return { data, out, model: r.model };
}
