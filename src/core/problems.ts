/** Where a record came from: a dump file, plus its NDJSON line or JSON array index. */
export interface Source {
  /** path relative to the dump directory, with forward slashes */
  readonly file: string;
  readonly line?: number;
  readonly index?: number;
}

export interface Problem {
  readonly severity: "error" | "warning";
  readonly source: Source;
  /** JSON path inside the record, `$` for the record itself */
  readonly path: string;
  readonly message: string;
  /** what sort of warning this is, for grouping ("shared address", "shared link peers") */
  readonly kind?: string;
}

export function formatSource(s: Source): string {
  if (s.line !== undefined) return `${s.file}:${s.line}`;
  if (s.index !== undefined) return `${s.file} [${s.index}]`;
  return s.file;
}

export function formatProblem(p: Problem): string {
  return `${p.severity}: ${formatSource(p.source)} ${p.path}: ${p.message}`;
}

export function jsonPath(path: readonly PropertyKey[]): string {
  let out = "$";
  for (const part of path) {
    out +=
      typeof part === "number"
        ? `[${part}]`
        : /^[A-Za-z_][A-Za-z0-9_]*$/.test(String(part))
          ? `.${String(part)}`
          : `[${JSON.stringify(String(part))}]`;
  }
  return out;
}

export function compareSources(a: Source, b: Source): number {
  if (a.file !== b.file) return a.file < b.file ? -1 : 1;
  return (a.line ?? a.index ?? -1) - (b.line ?? b.index ?? -1);
}

/**
 * How an error ends a command, carried by the error itself, so that the command line decides the code
 * in one place without knowing every error of every layer (cli/exit.ts): "usage", refused before any
 * work (exit 2); "input", bad input or a source that failed, with what was left alone said after it
 * (exit 1); "configRefused", a cycle's build served while the web server refused its configuration (exit 3);
 * "machine", the machine would not let the work be done (a full disk, missing rights, a read-only
 * folder), with what was left alone (exit 4).
 */
export type Ending = "usage" | "input" | "configRefused" | "machine";

export abstract class CommandError extends Error {
  abstract readonly ending: Ending;
}

/**
 * Bad input or a source that failed, said in one sentence (exit 1): what a command throws for a
 * reason of the data's or the source's. Anything thrown that is neither a CommandError nor the
 * system's error about a path or a connection is a bug of mesh-api (cli/exit.ts).
 */
export class InputError extends CommandError {
  readonly ending = "input";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "InputError";
  }
}

/** Thrown for invalid input; carries every problem found, so the CLI can list them all. */
export class InvalidDumpError extends CommandError {
  readonly ending = "input";
  constructor(readonly problems: readonly Problem[]) {
    const errors = problems.filter((p) => p.severity === "error").length;
    super(`the dump is invalid: ${errors} problem${errors === 1 ? "" : "s"}`);
    this.name = "InvalidDumpError";
  }
}

/**
 * Thrown when a command is given something it cannot work with at all (a dump folder that does not
 * exist, a file where a folder belongs): a usage error, one sentence, exit 2.
 */
export class UsageError extends CommandError {
  readonly ending = "usage";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "UsageError";
  }
}

/**
 * What the system says when the machine, not the data, stops a command: a full disk, missing rights,
 * a read-only file system, too many open files. Each with the words an operator acts on.
 */
const MACHINE: Readonly<Record<string, string>> = {
  ENOSPC: "the disk is full",
  EDQUOT: "the disk quota is used up",
  EACCES: "permission denied",
  EPERM: "the operation is not permitted",
  EROFS: "the file system is read-only",
  EMFILE: "too many open files",
  ENFILE: "too many open files on the machine",
  EIO: "an input/output error of the disk",
};

/** The file system refused a write or a read for a reason of the machine's (MACHINE); exit 4. */
export class MachineError extends CommandError {
  readonly ending = "machine";
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "MachineError";
  }
}

/**
 * The system's error as a MachineError, when it is one, naming the path the system names (Node's
 * errors of a write to an open file name none: `where`, the folder being written, is named then);
 * anything else as it is.
 */
export function machineError(err: unknown, where?: string): unknown {
  const e = err as { code?: unknown; path?: unknown; syscall?: unknown };
  if (err instanceof CommandError || typeof e?.code !== "string" || !(e.code in MACHINE)) return err;
  const at = typeof e.path === "string" ? e.path : where;
  const verb = typeof e.syscall === "string" ? ` (${e.syscall})` : "";
  return new MachineError(e.code, `${at ? `cannot write ${at}` : "cannot go on"}: ${MACHINE[e.code]}${verb}, ${e.code}`);
}
