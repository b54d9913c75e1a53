import { InvalidArgumentError, Option } from "commander";
import { formatProblem, InvalidDumpError, type Problem } from "../core/problems.ts";

/** Options and output helpers every command shares. */

export interface QuietOption {
  readonly quiet?: boolean;
}

export const quietOption = () => new Option("-q, --quiet", "print nothing but errors");

export const log = (opts: QuietOption, line: string) => {
  if (!opts.quiet) process.stderr.write(line + "\n");
};

export const warn = (line: string) => void process.stderr.write(`warning: ${line}\n`);

export const report = (problems: readonly Problem[], opts: QuietOption) => {
  for (const p of problems) if (p.severity === "error" || !opts.quiet) process.stderr.write(formatProblem(p) + "\n");
};

/** Invalid input: list every problem, say what was left alone, exit 1. Anything else is not ours to explain. */
export const invalid = (err: unknown, opts: QuietOption, consequence: string) => {
  if (!(err instanceof InvalidDumpError)) throw err;
  report(err.problems, opts);
  process.stderr.write(`${err.message}; ${consequence}\n`);
  process.exitCode = 1;
};

export function count(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("a count is a positive integer");
  return n;
}

export function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError("a port is an integer from 0 to 65535");
  return n;
}
