import { CommandError } from "../../core/problems.ts";
/** A source the import cannot read: the CLI prints the message and exits 1. */
export class ImportOpennetError extends CommandError {
  readonly ending = "input";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ImportOpennetError";
  }
}

/** The error for a place in a source file: `file:line: message`, or `file: message` when no line applies. */
export function located(file: string, line: number | undefined, message: string): ImportOpennetError {
  return new ImportOpennetError(`${file}${line === undefined ? "" : `:${line}`}: ${message}`);
}
