import { readFileSync } from "node:fs";
import path from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The order the files start in (vitest.config.ts `sequence.sequencer`): longest first, across the
 * tiers, so that the two workers end together instead of one waiting while the other runs a long
 * file started last. vitest's own order keeps each tier together and, on a fresh clone (no timings
 * cached), takes the largest files first, which are not the longest. The lengths are those vitest
 * cached in an earlier run on this machine, else the committed ones (durations.json, measured on
 * the 2-core machine), else ten seconds for a file neither knows. The order never changes what a
 * test checks; a stale figure only makes the run end less evenly.
 */
const COMMITTED = (JSON.parse(readFileSync(new URL("./durations.json", import.meta.url), "utf8")) as { seconds: Record<string, number> })
  .seconds;
const UNKNOWN_MS = 10_000;

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const length = (spec: TestSpecification): number => {
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${path.relative(root, spec.moduleId)}`);
      if (cached && cached.duration > 0) return cached.duration;
      const committed = COMMITTED[path.basename(spec.moduleId).replace(/\.test\.ts$/, "")];
      return committed === undefined ? UNKNOWN_MS : committed * 1000;
    };
    const lengths = new Map(files.map((f) => [f, length(f)]));
    return [...files].sort((a, b) => lengths.get(b)! - lengths.get(a)! || (a.moduleId < b.moduleId ? -1 : 1));
  }
}
