import { existsSync } from "node:fs";
import { stat } from "node:fs/promises";
import path from "node:path";
import type { DumpSummary } from "./core/model.ts";
import { buildModel, type Model } from "./core/model.ts";
import { outputFiles, placeholderValues } from "./core/plan.ts";
import { InvalidDumpError, type Problem } from "./core/problems.ts";
import { createValidator } from "./core/validate.ts";
import { dataRules, hostFiles, ruleCountWarnings, type DataRules } from "./hosts/netlify.ts";
import { emitTree, type EmitResult } from "./io/emit.ts";
import { loadDump } from "./io/load.ts";
import { assertReplaceable, owned, RefusedOutputError, writeMarker } from "./io/ownership.ts";
import { API_DIR, SNAPSHOT_DIR, SNAPSHOT_FILES } from "./core/routes.ts";
import { writeSnapshots, type SnapshotIndex } from "./publish/snapshot.ts";
import { mapAssets } from "./io/map-assets.ts";
import type { MapSettings } from "./core/map.ts";
import type { SiteSettings } from "./core/settings.ts";

/** The library API: load -> validate -> model -> plan -> emit, one call per command. */

/** Where a long run is, for a progress line: records read so far, files written so far. */
export interface Progress {
  readonly stage: "reading" | "writing" | "snapshots";
  readonly done: number;
}

export interface PipelineOptions {
  readonly progress?: (p: Progress) => void;
}

/** Something a host cannot reproduce for this network: the build works, one host answers differently. */
export interface HostWarning {
  readonly kind: string;
  readonly message: string;
}

export interface ValidateResult {
  /** dump files found, relative to the dump directory */
  readonly dumpFiles: readonly string[];
  /** present when the dump has no errors */
  readonly model?: Model;
  readonly problems: readonly Problem[];
  /** present when the dump has no errors: the data-dependent Netlify rules */
  readonly netlify?: DataRules;
  /** the same for `validate` and `build`, so both report the same warnings */
  readonly hostWarnings: readonly HostWarning[];
  readonly summary: DumpSummary;
}

/** The site settings a command was given; what it leaves out comes from the dump's network.json, else the defaults. */
export interface SettingsOptions {
  readonly settings?: Partial<SiteSettings>;
}

export async function validate(options: { data: string } & SettingsOptions & PipelineOptions): Promise<ValidateResult> {
  // Records are validated as they are read, so the raw parse of the whole dump is never held at once.
  const validator = createValidator();
  let records = 0;
  const loaded = await loadDump(options.data, (record) => {
    validator.accept(record);
    options.progress?.({ stage: "reading", done: ++records });
  });
  const { dump, problems } = validator.finish(loaded);
  // Only the model is returned: it keeps what the API needs, and the records can go (the memory target).
  const model = dump ? buildModel(dump, options.settings) : undefined;
  const netlify = model ? dataRules(placeholderValues(model)) : undefined;
  return {
    dumpFiles: loaded.files,
    model,
    problems,
    netlify,
    hostWarnings: [
      ...(netlify?.unreachable ?? []).map((v) => ({
        kind: "Netlify rule",
        message: `${v.param}=${JSON.stringify(v.value)} cannot be a Netlify rule: ${v.reason}; Netlify answers 404 for it, the preview serves it`,
      })),
      ...(netlify ? ruleCountWarnings(netlify) : []),
    ],
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
 * Validates the dump and writes the API tree to `out` (with snapshots when asked). Throws
 * RefusedOutputError before any work when `out` is not ours to replace, and InvalidDumpError,
 * leaving `out` untouched, on bad input.
 */
export async function build(
  options: { data: string; out: string; snapshot?: SnapshotSettings; map?: MapSettings } & SettingsOptions & PipelineOptions,
): Promise<BuildResult> {
  await assertReplaceable({ out: options.out, option: "--out", kind: "build", protect: [{ dir: options.data, option: "--data" }] });
  const result = await validate(options);
  if (!result.model || !result.netlify) throw new InvalidDumpError(result.problems);
  const { model, netlify } = result;
  const { snapshot, progress } = options;
  const finish = async (dir: string) => {
    await writeMarker(dir, "build");
    if (!snapshot) return;
    progress?.({ stage: "snapshots", done: 0 });
    // Without --previous, the history comes from the output being replaced.
    const previous =
      snapshot.previous ??
      (existsSync(path.join(options.out, SNAPSHOT_DIR, SNAPSHOT_FILES.index)) ? path.join(options.out, SNAPSHOT_DIR) : undefined);
    await writeSnapshots({ ...snapshot, previous, data: options.data, dumpFiles: result.dumpFiles, summary: result.summary, dist: dir });
  };
  const output = await emitTree(options.out, allFiles(model, netlify, options.map), {
    finish,
    progress: progress && ((done) => progress({ stage: "writing", done })),
  });
  return { ...result, output, netlify };
}

function* allFiles(model: Model, netlify: DataRules, map: MapSettings | undefined) {
  yield* outputFiles(model, { map });
  yield* mapAssets();
  yield* hostFiles(netlify);
}

/** Writes `<dist>/snapshots/` for an existing build of the dump in `data`. */
export async function snapshot(options: { data: string; dist: string } & SnapshotSettings & PipelineOptions): Promise<SnapshotIndex> {
  // Snapshots go into a build of this tool: anything else gets that advice, before the general rules.
  const dist = await stat(options.dist).catch(() => undefined);
  if (!dist?.isDirectory() || !existsSync(path.join(options.dist, API_DIR)) || (await owned(options.dist)) !== "build") {
    throw new RefusedOutputError(
      `refusing to write to ${options.dist}: it holds no build of mesh-api; run build --out ${options.dist} first, or name the build's folder with --dist.`,
    );
  }
  await assertReplaceable({
    out: options.dist,
    option: "--dist",
    kind: "build",
    writesInside: true,
    protect: [{ dir: options.data, option: "--data" }],
  });
  const result = await validate(options);
  if (!result.model) throw new InvalidDumpError(result.problems);
  options.progress?.({ stage: "snapshots", done: 0 });
  return writeSnapshots({ ...options, dumpFiles: result.dumpFiles, summary: result.summary });
}
