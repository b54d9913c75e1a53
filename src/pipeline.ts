import { existsSync } from "node:fs";
import path from "node:path";
import { emitTree, type EmitResult } from "./io/emit.ts";
import { SNAPSHOT_DIR, writeSnapshots, type SnapshotIndex } from "./publish/snapshot.ts";
import { outputFiles, placeholderValues } from "./core/plan.ts";
import { dataRules, type DataRules } from "./hosts/netlify.ts";
import { loadDump } from "./io/load.ts";
import { buildModel, type Model } from "./core/model.ts";
import { InvalidDumpError, type Problem } from "./core/problems.ts";
import type { DumpSummary } from "./core/model.ts";
import { createValidator } from "./core/validate.ts";

/** The library API: the pipeline load -> validate -> model -> resources -> emit, one call per command. */


export interface ValidateResult {
  /** dump files found, relative to the dump directory */
  readonly dumpFiles: readonly string[];
  /** present when the dump has no errors */
  readonly model?: Model;
  readonly problems: readonly Problem[];
  readonly summary: DumpSummary;
}

export async function validate(options: { data: string }): Promise<ValidateResult> {
  // Records are validated as they are read, so the raw parse of the whole dump is never held at once.
  const validator = createValidator();
  const loaded = await loadDump(options.data, (record) => validator.accept(record));
  const { dump, problems } = validator.finish(loaded);
  // Only the model is returned: it keeps what the API needs, and the records can go (the memory target).
  const model = dump ? buildModel(dump) : undefined;
  return {
    dumpFiles: loaded.files,
    model,
    problems,
    summary: {
      files: loaded.files.length,
      accesspoints: model?.accesspoints.length ?? 0,
      interfaces: model?.interfaces.length ?? 0,
      links: model?.links.length ?? 0,
      sites: model?.sites.length ?? 0,
      takenAt: dump?.takenAt?.text ?? null,
    },
  };
}

export interface BuildResult extends ValidateResult {
  readonly output: EmitResult;
  /** the data-dependent Netlify rules written to `<out>/_redirects` */
  readonly netlify: DataRules;
}

export interface SnapshotSettings {
  /** earlier snapshots to carry forward: a folder or the URL of a deployed index.json */
  readonly previous?: string;
  readonly keep?: number;
  readonly warn?: (line: string) => void;
}

/**
 * Validates the dump and writes the API tree to `out` (with snapshots when asked); throws
 * InvalidDumpError, leaving `out` untouched, on bad input.
 */
export async function build(options: { data: string; out: string; snapshot?: SnapshotSettings }): Promise<BuildResult> {
  const result = await validate(options);
  if (!result.model) throw new InvalidDumpError(result.problems);
  const netlify = dataRules(placeholderValues(result.model));
  const { snapshot } = options;
  const finish = snapshot
    ? async (dir: string) => {
        // Without --previous, the history comes from the output being replaced.
        const previous = snapshot.previous ?? (existsSync(path.join(options.out, SNAPSHOT_DIR, "index.json")) ? path.join(options.out, SNAPSHOT_DIR) : undefined);
        await writeSnapshots({ ...snapshot, previous, data: options.data, dumpFiles: result.dumpFiles, summary: result.summary, dist: dir });
      }
    : undefined;
  const output = await emitTree(options.out, outputFiles(result.model, netlify), finish);
  return { ...result, output, netlify };
}

/** Writes `<dist>/snapshots/` for an existing build of the dump in `data`. */
export async function snapshot(options: { data: string; dist: string } & SnapshotSettings): Promise<SnapshotIndex> {
  const result = await validate(options);
  if (!result.model) throw new InvalidDumpError(result.problems);
  if (!existsSync(path.join(options.dist, "api"))) throw new Error(`${options.dist} holds no build (no api/ folder); run build first`);
  return writeSnapshots({ ...options, dumpFiles: result.dumpFiles, summary: result.summary });
}
