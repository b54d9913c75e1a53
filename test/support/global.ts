import { rmSync } from "node:fs";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { build } from "../../src/index.ts";
import { synthesize, writeSynthDump } from "../../src/gen/synth.ts";
import { SHARED_BUILDS, stampOf, type SharedBuilds, type SharedName } from "./shared.ts";
import { hostileDump } from "./hostile.ts";
import { markedTempDir, sweepLeftovers, TEMP_ROOT } from "./tree.ts";

/**
 * vitest's globalSetup (vitest.config.ts): the networks many test files serve, built once per run in
 * the main process, before any test file starts, and handed to the files by `inject("builds")`
 * (shared.ts). The files only read them; a file that changed one would change another's answers, so
 * each file that used one checks after its tests that the tree is as built (shared.ts, setup.ts).
 *
 * vitest runs a project's globalSetup for each project; the builds live on globalThis of the main
 * process, so the second project finds them made.
 */

interface Made {
  readonly root: string;
  readonly builds: SharedBuilds;
}

const state = globalThis as typeof globalThis & { __meshSharedBuilds?: Promise<Made> };

async function makeAll(): Promise<Made> {
  const swept = await sweepLeftovers();
  if (swept.length > 0) console.log(`removed ${swept.length} temporary folders of stopped test runs from ${TEMP_ROOT}`);
  const root = markedTempDir("mesh-shared-");
  process.once("exit", () => rmSync(root, { recursive: true, force: true }));
  const synth = path.join(root, "dumps", "synth-300");
  await writeSynthDump(synth, synthesize({ aps: 300, seed: 20 }));
  const data = { synth, hostile: hostileDump() };
  const builds = {} as Record<SharedName, { data: string; out: string; stamp: string }>;
  for (const [name, recipe] of Object.entries(SHARED_BUILDS) as [SharedName, (typeof SHARED_BUILDS)[SharedName]][]) {
    const out = path.join(root, "builds", name);
    const dump = recipe.data(data);
    await build({ data: dump, out, ...("settings" in recipe && { settings: recipe.settings }) });
    builds[name] = { data: dump, out, stamp: stampOf(out) };
  }
  return { root, builds };
}

export default async function setup(project: TestProject): Promise<void> {
  const made = await (state.__meshSharedBuilds ??= makeAll());
  project.provide("builds", made.builds);
  project.provide("answersFolder", path.join(made.root, "answers"));
}
