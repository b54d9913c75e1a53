/** The library: what the command line uses, for scripts that build, check or serve from code. */
export { build, snapshot, validate, type BuildResult, type SnapshotSettings, type ValidateResult } from "./pipeline.ts";
export type { DumpSummary } from "./core/model/model.ts";
export { formatProblem, InvalidDumpError, type Problem } from "./core/problems.ts";
export { parseRequest, resolve, RULES, type Rule } from "./core/routes.ts";
export type { ConfigOptions, Host, HostReport, HostWarning } from "./hosts/host.ts";
export { HOSTS, hostNamed } from "./hosts/index.ts";
export { dataRules, netlifyToml } from "./hosts/netlify.ts";
export { checkDeployment, formatCheck, type CheckOptions, type CheckResult } from "./publish/deployment.ts";
export { startPreview, type Preview, type PreviewOptions } from "./serve/server.ts";
