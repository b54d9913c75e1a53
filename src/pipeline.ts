import { DEFAULTS } from "./core/defaults.ts";
import { existsSync } from "node:fs";
import { stat } from "node:fs/promises";
import path from "node:path";
import type { DumpSummary } from "./core/model/model.ts";
import { buildModel, type Model } from "./core/model/model.ts";
import { outputParts, placeholderValues, type PlaceholderValues } from "./core/plan.ts";
import { InvalidDumpError, type Problem } from "./core/problems.ts";
import { assertOutputSettings } from "./core/outputs/option-values.ts";
import { createValidator } from "./core/model/validator.ts";
import { hostReport, type HostReport, type HostWarning } from "./hosts/host.ts";
import { HOSTS } from "./hosts/index.ts";
import { emitTree, type EmitOptions, type EmitResult, type SideBySide } from "./io/write/emit.ts";
import { lockOutput } from "./io/write/lock.ts";
import { assertNothingForeign, emptySnapshotFolder, lockBeforeWork, lockLink, unmake } from "./io/write/output-folder.ts";
import { assertLinkUsable, isLink, linkLayout, sweepLink, type LinkLayout } from "./io/write/link.ts";
import { loadDump } from "./io/read/load.ts";
import type { CheckedDump, Handover } from "./io/write/write-dump.ts";
import { assertNotLive, assertReplaceable, owned, RefusedOutputError, writeMarker } from "./io/write/ownership.ts";
import { API_DIR, isApiServed, SNAPSHOT_DIR, SNAPSHOT_FILES } from "./core/routes.ts";
import { carriedBy, earlierOf } from "./io/read/earlier.ts";
import { apiArchiveAsBuilt, carrySnapshots, writeSnapshots, type SnapshotWritten } from "./publish/archives.ts";
import type { ArchiveStream } from "./io/read/archive.ts";
import { dumpEntry, readBuildRecord, writeBuildRecord } from "./io/write/build-record.ts";
import { copyExtra, listExtra } from "./io/write/extra.ts";
import { docsAssets } from "./io/write/docs-assets.ts";
import { mapAssets } from "./io/write/map-assets.ts";
import type { MapSettings } from "./core/documents/map.ts";
import type { SiteSettings } from "./core/settings.ts";
import type { CycleHealth } from "./core/model/model.ts";

/** The library API: load -> validate -> model -> plan -> emit, one call per command. */

/** Where a long run is, for a progress line: records read so far, files written so far. */
export interface Progress {
  readonly stage: "reading" | "writing" | "snapshots";
  readonly done: number;
}

export interface PipelineOptions {
  readonly progress?: (p: Progress) => void;
  /**
   * Called once the dump is read and the model made (or found invalid): from here on nearly all a run
   * allocates is dropped soon after. The command line tightens the heap's growth there (cli/memory.ts).
   */
  readonly loaded?: () => void;
}

export interface ValidateResult {
  /** dump files found, relative to the dump directory */
  readonly dumpFiles: readonly string[];
  /** present when the dump has no errors */
  readonly model?: Model;
  readonly problems: readonly Problem[];
  /** present when the dump has no errors: what every host is configured from (hosts/host.ts) */
  readonly values?: PlaceholderValues;
  /** each host's report, by name (empty when the dump has errors, or with `reportHosts: false`) */
  readonly hosts: Readonly<Record<string, HostReport>>;
  /** every host's warnings, in registry order: the same for `validate` and `build`, so both report the same */
  readonly hostWarnings: readonly HostWarning[];
  readonly summary: DumpSummary;
}

/** The site settings a command was given; what it leaves out comes from the dump's network.json, else the defaults. */
export interface SettingsOptions {
  readonly settings?: Partial<SiteSettings>;
}

/** The dump at `data` as the import that has just written it validated it (io/write/write-dump.ts): not read again. */
export interface CheckedOption {
  readonly checked?: Handover<CheckedDump>;
}

/** `reportHosts: false`: no host's report (`hosts` and `hostWarnings` empty), for a run that shows none (a cycle's build). */
export interface ReportOption {
  readonly reportHosts?: boolean;
}

export async function validate(
  options: { data: string } & SettingsOptions & PipelineOptions & CheckedOption & ReportOption,
): Promise<ValidateResult> {
  const { files, model, problems, takenAt } = await readModel(options);
  options.loaded?.();
  // From here on only the model is alive: the host reports' work (hundreds of thousands of literal
  // rules at the memory case's size) would otherwise stack on top of every validated record.
  const values = model ? placeholderValues(model) : undefined;
  const hosts = Object.fromEntries(values && options.reportHosts !== false ? HOSTS.map((h) => [h.name, hostReport(h, values)]) : []);
  return {
    dumpFiles: files,
    model,
    problems,
    values,
    hosts,
    hostWarnings: Object.values(hosts).flatMap((r) => r.warnings),
    summary: {
      files: files.length,
      accesspoints: model?.accesspoints.length ?? 0,
      interfaces: model?.interfaces.length ?? 0,
      links: model?.links.length ?? 0,
      sites: model?.sites.length ?? 0,
      takenAt,
    },
  };
}

/**
 * The dump read, validated and turned into the model. Only the model leaves this function: the
 * validator and the validated records it holds (about 170 MiB at the memory case's size) can be
 * collected as soon as it returns.
 */
async function readModel(
  options: { data: string } & SettingsOptions & PipelineOptions & CheckedOption,
): Promise<{ files: readonly string[]; model?: Model; problems: readonly Problem[]; takenAt: string | null }> {
  const checked = options.checked?.take();
  if (checked) {
    const { dump, files } = checked;
    return { files, model: buildModel(dump, options.settings), problems: [], takenAt: dump.takenAt?.text ?? null };
  }
  // Records are validated as they are read, so the raw parse of the whole dump is never held at once.
  const validator = createValidator();
  let records = 0;
  const loaded = await loadDump(options.data, (record) => {
    validator.accept(record);
    options.progress?.({ stage: "reading", done: ++records });
  });
  const { dump, problems } = validator.finish(loaded);
  const model = dump ? buildModel(dump, options.settings) : undefined;
  return { files: loaded.files, model, problems, takenAt: dump?.takenAt?.text ?? null };
}

export interface BuildResult extends ValidateResult {
  /** every file of the output: the API's, the site's and the operator's extra files */
  readonly output: EmitResult;
  readonly values: PlaceholderValues;
  /** the snapshot written, with `snapshot` */
  readonly snapshot?: SnapshotWritten;
}

export interface SnapshotSettings {
  /** earlier snapshots to carry forward: a folder or the URL of a deployed index.json */
  readonly previous?: string;
  readonly keep?: number;
  readonly warn?: (line: string) => void;
}

/**
 * Validates the dump and writes the API tree to `out`, with the operator's extra files, the history
 * of snapshots the output held (and a new snapshot when asked), and a record of the dump and the
 * files written. Throws RefusedOutputError before any work when `out` is not ours to replace or holds
 * files the build did not write, and InvalidDumpError, leaving `out` untouched, on bad input.
 *
 * An `out` that is a symbolic link is served through it (io/write/link.ts): the build goes into a new folder
 * beside the link's target, `<link name>.<n>`, and the link is pointed at it in one rename; the build
 * served until then stays, older builds of that name go. A folder `out` is replaced as a whole.
 */
export async function build(
  options: {
    data: string;
    out: string;
    extra?: string;
    snapshot?: SnapshotSettings;
    map?: MapSettings;
    /** the build whose snapshots are carried forward (default: `out`, the output being replaced); `cycle` builds into a new folder */
    carry?: string;
    /** "background": the previous output is removed by a detached process after the swap (io/write/swap.ts); the command line's choice */
    removeOld?: EmitOptions["removeOld"];
    /** a recyclable output (io/write/emit.ts), started from an earlier one no longer served: `cycle`'s choice */
    recycle?: EmitOptions["recycle"];
    /** the health of the cycle making the build, for the metrics file (core/history/metrics.ts); a plain build has none */
    health?: CycleHealth;
  } & SettingsOptions &
    PipelineOptions &
    CheckedOption &
    ReportOption,
): Promise<BuildResult> {
  const protect = [{ dir: options.data, option: "--data" }, ...(options.extra ? [{ dir: options.extra, option: "--extra" }] : [])];
  await assertReplaceable({ out: options.out, option: "--out", kind: "build", protect });
  const extra = options.extra === undefined ? undefined : { dir: options.extra, files: await listExtra(options.extra) };
  await assertNothingForeign(options.out);
  const linked = await isLink(options.out);
  if (linked) await assertLinkUsable(options.out);
  // Taken before the work, so a second build into the same output is refused at once, not after validating.
  const { lock, made } = await lockBeforeWork(options.out, linked);
  let built = false;
  try {
    // Read under the link's lock: the next number and the builds to retire depend on the builds before.
    let layout: LinkLayout | undefined;
    if (linked) {
      layout = await linkLayout(options.out);
      await sweepLink(layout);
    }
    const result = await validate(options);
    if (!result.model || !result.values) throw new InvalidDumpError(result.problems);
    const { model, values } = result;
    assertOutputSettings(model.settings.outputs, model.takenAt?.text ?? null);
    const { snapshot, progress } = options;
    const dump = await dumpEntry(options.data, result.dumpFiles);
    let written: SnapshotWritten | undefined;
    let placeholder = false;
    const finish = async (dir: string, archive?: ArchiveStream) => {
      if (extra) await copyExtra(extra.dir, extra.files, dir);
      await writeMarker(dir, "build");
      await writeBuildRecord(dir, dump, extra?.files ?? []);
      const carry = options.carry ?? options.out;
      if (!snapshot) {
        // The history the replaced output held, if it held any; else the page that says there is none yet.
        if (existsSync(path.join(carry, SNAPSHOT_DIR, SNAPSHOT_FILES.index))) return carrySnapshots(carry, dir);
        placeholder = await emptySnapshotFolder(dir);
        return;
      }
      progress?.({ stage: "snapshots", done: 0 });
      // the operator's files at served names join the answers the build wrote (it leaves /freifunk/api.json free when that output is off)
      await archive!.files(servedExtras(extra?.files), dir);
      written = await writeSnapshots({
        ...snapshot,
        // without --previous, the history comes from the output being replaced
        previous:
          snapshot.previous ??
          (existsSync(path.join(carry, SNAPSHOT_DIR, SNAPSHOT_FILES.index)) ? path.join(carry, SNAPSHOT_DIR) : undefined),
        data: options.data,
        dumpFiles: result.dumpFiles,
        summary: result.summary,
        dist: dir,
        apiArchive: { file: archive!.target, ...(await archive!.end()) },
      });
    };
    // What each output carries from the build being replaced and the dump (meshviewer's first sightings, the
    // history's changes and days), as the original's database kept it.
    const before = options.carry ?? (existsSync(options.out) ? options.out : undefined);
    const carried = await carriedBy(earlierOf(before, options.data), model.settings.outputs);
    const output = await emitTree(
      layout?.next ?? options.out,
      allFiles({ ...model, carried, health: options.health }, values, options.map),
      {
        finish,
        progress: progress && ((done) => progress({ stage: "writing", done })),
        archive: snapshot && apiArchiveAsBuilt(result.summary.takenAt),
        lock,
        removeOld: options.removeOld,
        recycle: options.recycle,
        ...(layout && {
          link: { path: layout.link, name: options.out, text: layout.text, served: layout.served, retire: layout.retire },
        }),
      },
    );
    // the operator's extra files are files of the site too
    const files = output.files + (extra?.files.length ?? 0) + (placeholder ? 1 : 0);
    built = true;
    return { ...result, output: { ...output, files }, values, ...(written ? { snapshot: written } : {}) };
  } finally {
    lock.release();
    if (!built && made) await unmake(made, path.dirname(path.resolve(options.out)));
  }
}

/**
 * The operator's extra files at served names (the build leaves `/freifunk/api.json` free when its output
 * is off): the snapshot's API archive holds them after the answers the build wrote.
 */
const servedExtras = (files: readonly string[] = []): string[] => files.filter((f) => isApiServed(`/${f}`));

function allFiles(model: Model, values: PlaceholderValues, map: MapSettings | undefined): SideBySide {
  // the values validate found: the layout is the dump's, not recomputed for the model with what the outputs carry
  const { lists, outputs, resources } = outputParts(model, { map }, values);
  // the assets and the hosts' files go with the lists: few files, some of them long (_redirects)
  const withAssets = function* () {
    yield* lists;
    yield* mapAssets();
    yield* docsAssets();
    for (const host of HOSTS) yield* host.files(values);
  };
  return { sideBySide: [withAssets(), outputs, resources] };
}

/**
 * Writes `<dist>/snapshots/` for an existing build, of the dump that build was made from: `data`
 * defaults to the dump the build recorded, and another dump is refused.
 */
export async function snapshot(
  options: { data?: string; dist: string } & SnapshotSettings & PipelineOptions,
): Promise<SnapshotWritten & { readonly data: string }> {
  // A cycle's build is the cycle's to snapshot (its served link, its state): that advice first.
  await assertNotLive({ out: options.dist, option: "--dist", kind: "build" });
  // Snapshots go into a build of this tool: anything else gets that advice, before the general rules.
  const dist = await stat(options.dist).catch(() => undefined);
  if (!dist?.isDirectory() || !existsSync(path.join(options.dist, API_DIR)) || (await owned(options.dist)) !== "build") {
    throw new RefusedOutputError(
      `refusing to write to ${options.dist}: it holds no build of mesh-api; run build --out ${options.dist} first, or name the build's folder with --dist.`,
    );
  }
  const record = await readBuildRecord(options.dist);
  const data = options.data ?? (record ? path.relative(process.cwd(), record.dump.path) || "." : DEFAULTS.data);
  await assertReplaceable({
    out: options.dist,
    option: "--dist",
    kind: "build",
    writesInside: true,
    protect: [{ dir: data, option: "--data" }],
  });
  // The build's lock: a build swapping the folder away meanwhile would take the new snapshots with it.
  // Through a link, also the link's: a build through it would carry the snapshots before these.
  const lock = (await isLink(options.dist)) ? await lockLink(options.dist) : lockOutput(path.resolve(options.dist), options.dist);
  try {
    const result = await validate({ ...options, data });
    if (!result.model) throw new InvalidDumpError(result.problems);
    if (record) {
      const given = await dumpEntry(data, result.dumpFiles);
      if (given.sha256 !== record.dump.sha256) {
        const built = path.relative(process.cwd(), record.dump.path) || ".";
        throw new RefusedOutputError(
          `refusing to snapshot ${data}: the build in ${options.dist} was made from ${built === data ? "another state of it" : built} ` +
            `(dump sha256 ${record.dump.sha256.slice(0, 12)}), and ${data} now holds another dump (sha256 ${given.sha256.slice(0, 12)}); ` +
            `build --data ${data} --out ${options.dist} first${built === data ? "" : `, or snapshot --data ${built}`}.`,
        );
      }
    } else {
      options.warn?.(`${options.dist} records no dump (a build of an earlier mesh-api): the snapshot archives ${data} as given`);
    }
    options.progress?.({ stage: "snapshots", done: 0 });
    const written = await writeSnapshots({ ...options, data, dumpFiles: result.dumpFiles, summary: result.summary });
    return { ...written, data };
  } finally {
    lock.release();
  }
}
