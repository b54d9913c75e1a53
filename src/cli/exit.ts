import { constants } from "node:os";
import { CommanderError } from "commander";
import { CommandError, InvalidDumpError, machineError, UsageError, type Ending } from "../core/problems.ts";
import { report, type ReportOptions } from "./options.ts";
import { VERSION } from "./package-version.ts";

/**
 * How a run ends, decided here for every command: a command returns, or throws, and main.ts asks
 * this module for the words and the exit code. The codes: 0 ok, 1 invalid input (or a failure the
 * command found and reported, such as a deployment that differs), 2 usage error, 3 a cycle published
 * its build but the web server refused the new configuration (the previous one stays) or its reload
 * failed, 4 the machine stopped the work (a full disk, missing rights, a read-only folder: the path
 * and what was left as it was are said), 70 a bug of mesh-api's own (BSD's EX_SOFTWARE): anything thrown
 * that no part of the program meant to throw, said as such, with its stack and causes under --debug.
 */
export const EXIT = { ok: 0, invalid: 1, usage: 2, configRefused: 3, machine: 4, bug: 70 } as const;

/** `--debug` or MESH_API_DEBUG=1: an error's stack and causes are printed with its message. */
export const DEBUG_ENV = "MESH_API_DEBUG";

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

/**
 * The system's own error about a path, a connection or a peer (ENOENT, ECONNREFUSED, undici's
 * UND_ERR_…, fetch's "fetch failed" over one): what the operator gave does not work, not a bug.
 */
function systemError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  // errno codes (ENOENT, EAI_AGAIN), not Node's own ERR_… of a wrong call (a bug) but a bad URL or TLS
  if (typeof code === "string" && /^((?!ERR_)E[A-Z0-9_]+|UND_ERR_[A-Z_]+|ERR_INVALID_URL|ERR_TLS_[A-Z_]+)$/.test(code)) return true;
  const cause = (err as { cause?: unknown } | null)?.cause;
  return err instanceof Error && cause !== undefined && cause !== err && systemError(cause);
}

/**
 * How the error ends the command: it says so itself (core/problems.ts CommandError); the system's
 * errors about what the command was given are failures of input; anything else is a bug.
 */
const endingOf = (err: unknown) => (err instanceof CommandError ? err.ending : systemError(err) ? "input" : "bug");

/** The error's stack, then each cause's, for --debug. */
export function debugText(err: unknown): string {
  const lines: string[] = [];
  const seen = new Set<unknown>();
  for (let e: unknown = err, first = true; e !== undefined && !seen.has(e); first = false) {
    seen.add(e);
    const text = e instanceof Error ? (e.stack ?? `${e.name}: ${e.message}`) : String(e);
    lines.push(first ? text : `caused by: ${text}`);
    e = e instanceof Error ? e.cause : undefined;
  }
  return lines.join("\n") + "\n";
}

/** Says why the run ended (unless commander or the command already did) and returns its exit code. */
export function ended(
  thrown: unknown,
  write = (text: string) => void process.stderr.write(text),
  debug = process.env[DEBUG_ENV] === "1",
): number {
  // A system error of the machine's (a full disk) says so, with its path, and is not invalid input.
  const err = thrown instanceof Stopped ? machineError(thrown.error, thrown.where) : machineError(thrown);
  if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage; // commander has printed its message
  if (err instanceof ReportedFailure) return EXIT.invalid;
  const ending = endingOf(err);
  const code = said(thrown, err, ending, write, debug);
  // the stack and causes after the words, on request
  if (debug) write(debugText(err));
  return code;
}

/** Writes the words an ending says and returns its exit code. */
function said(thrown: unknown, err: unknown, ending: Ending | "bug", write: (text: string) => void, debug: boolean): number {
  const message = err instanceof Error ? err.message : String(err);
  if (ending === "bug") {
    write(
      `mesh-api: internal error: ${message}\n` +
        `This is a bug of mesh-api ${VERSION}, not a problem of what it was given${thrown instanceof Stopped ? ` (${thrown.outcome})` : ""}. ` +
        `Please report it with the command you ran and ${debug ? "the stack below" : `what the same command prints with --debug (or ${DEBUG_ENV}=1)`}.\n`,
    );
    return EXIT.bug;
  }
  if (ending === "configRefused") {
    write(`mesh-api: ${message}\n`);
    return EXIT.configRefused;
  }
  const outcome = thrown instanceof Stopped && (ending === "input" || ending === "machine") ? `; ${thrown.outcome}` : "";
  if (err instanceof InvalidDumpError) {
    // Each problem on its own line, then the verdict: the only message without the program's name.
    report(err.problems, [], thrown instanceof Stopped ? thrown.opts : {});
    write(`${err.message}${outcome}\n`);
  } else {
    write(`mesh-api: ${message}${outcome}\n`);
  }
  return ending === "usage" ? EXIT.usage : ending === "machine" ? EXIT.machine : EXIT.invalid;
}
