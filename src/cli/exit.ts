import { constants } from "node:os";
import { CommanderError } from "commander";
import { CommandError, InvalidDumpError, machineError, UsageError } from "../core/problems.ts";
import { report, type ReportOptions } from "./options.ts";

/**
 * How a run ends, decided here for every command: a command returns, or throws, and main.ts asks
 * this module for the words and the exit code. The codes: 0 ok, 1 invalid input (or a failure the
 * command found and reported, such as a deployment that differs), 2 usage error, 3 a cycle published
 * its build but the web server refused the new configuration (the previous one stays) or its reload
 * failed, 4 the machine stopped the work (a full disk, missing rights, a read-only folder: the path
 * and what was left as it was are said).
 */
export const EXIT = { ok: 0, invalid: 1, usage: 2, configRefused: 3, machine: 4 } as const;

/** Interrupted by a signal: the shell's convention, 128 + its number (130 for Ctrl-C, 143 for SIGTERM). */
export function interruptedCode(signal: "SIGINT" | "SIGTERM"): number {
  return 128 + constants.signals[signal];
}

/** The command line asks for what cannot be done as given (beyond what commander checks itself); the library throws it too. */
export { UsageError };

/** The command has printed why it failed (validate's problems, check's differences): nothing more to say. */
export class ReportedFailure extends Error {
  constructor() {
    super("reported");
    this.name = "ReportedFailure";
  }
}

/** An error that stopped a command, with what the command left alone and how it prints problems. */
class Stopped extends Error {
  constructor(
    readonly error: unknown,
    readonly outcome: string,
    readonly opts: ReportOptions,
    readonly where?: string,
  ) {
    super(error instanceof Error ? error.message : String(error));
    this.name = "Stopped";
  }
}

/**
 * Throws what stopped a command's work on to main, with what the command left alone ("nothing
 * written", "dist left unchanged"), said after an input error, and the folder it was writing (named
 * when the system's error names no path: a full disk while writing an open file).
 */
export function stopped(error: unknown, opts: ReportOptions, outcome: string, where?: string): never {
  throw new Stopped(error, outcome, opts, where);
}

/** How the error ends the command: it says so itself (core/problems.ts CommandError); anything else is a failure of input. */
const endingOf = (err: unknown) => (err instanceof CommandError ? err.ending : undefined);

/** Says why the run ended (unless commander or the command already did) and returns its exit code. */
export function ended(thrown: unknown, write = (text: string) => void process.stderr.write(text)): number {
  // A system error of the machine's (a full disk) says so, with its path, and is not invalid input.
  const err = thrown instanceof Stopped ? machineError(thrown.error, thrown.where) : machineError(thrown);
  if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage; // commander has printed its message
  if (err instanceof ReportedFailure) return EXIT.invalid;
  const ending = endingOf(err);
  if (ending === "configRefused") {
    write(`mesh-api: ${(err as Error).message}\n`);
    return EXIT.configRefused;
  }
  const usage = ending === "usage";
  const outcome = thrown instanceof Stopped && (ending === "input" || ending === "machine") ? `; ${thrown.outcome}` : "";
  if (err instanceof InvalidDumpError) {
    // Each problem on its own line, then the verdict: the only message without the program's name.
    report(err.problems, [], thrown instanceof Stopped ? thrown.opts : {});
    write(`${err.message}${outcome}\n`);
  } else {
    write(`mesh-api: ${err instanceof Error ? err.message : String(err)}${outcome}\n`);
  }
  return usage ? EXIT.usage : ending === "machine" ? EXIT.machine : EXIT.invalid;
}
