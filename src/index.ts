import { emitTree, type EmitResult } from "./emit.ts";
import { outputFiles, placeholderValues } from "./files.ts";
import { dataRules, type DataRules } from "./hosting.ts";
import { loadDump } from "./load.ts";
import { buildModel, type Model } from "./model.ts";
import { InvalidDumpError, type Problem } from "./problems.ts";
import { validateDump, type Dump } from "./validate.ts";

/** The library API: the pipeline load -> validate -> model -> resources -> emit, one call per command. */

export interface DumpSummary {
  readonly files: number;
  readonly accesspoints: number;
  readonly interfaces: number;
  readonly links: number;
  readonly sites: number;
  readonly takenAt: string | null;
}

export interface ValidateResult {
  readonly dump?: Dump;
  readonly model?: Model;
  readonly problems: readonly Problem[];
  readonly summary: DumpSummary;
}

export async function validate(options: { data: string }): Promise<ValidateResult> {
  const loaded = await loadDump(options.data);
  const { dump, problems } = validateDump(loaded);
  const model = dump ? buildModel(dump) : undefined;
  return {
    dump,
    model,
    problems,
    summary: {
      files: loaded.files.length,
      accesspoints: dump?.accesspoints.length ?? 0,
      interfaces: model?.interfaces.length ?? 0,
      links: dump?.links.length ?? 0,
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

/** Validates the dump and writes the API tree to `out`; throws InvalidDumpError (leaving `out` untouched) on bad input. */
export async function build(options: { data: string; out: string }): Promise<BuildResult> {
  const result = await validate(options);
  if (!result.model) throw new InvalidDumpError(result.problems);
  const netlify = dataRules(placeholderValues(result.model));
  const output = await emitTree(options.out, outputFiles(result.model, netlify));
  return { ...result, output, netlify };
}

export { InvalidDumpError, type Problem } from "./problems.ts";
export { formatProblem } from "./problems.ts";
export { resolve, parseRequest, RULES } from "./routes.ts";
export { startPreview, type Preview, type PreviewOptions } from "./serve.ts";
export { netlifyToml, dataRules } from "./hosting.ts";
