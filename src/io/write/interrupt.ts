/**
 * Ctrl-C (SIGINT) or SIGTERM while a command writes: what it has made so far (a temporary folder, a
 * lock) is removed, one line says what became of the output, and the process ends with 128 + the
 * signal's number (130, 143), as a shell reports a process the signal ended.
 *
 * Writers register a cleanup for as long as they work (onInterrupt); the command line asks once for
 * the signals to be handled (exitOnInterrupt), so that an interrupt says a word at any point. A
 * library caller that does not ask keeps its own signal handling, and a killed writer's leftovers are
 * removed by the next write (io/write/swap.ts).
 */

/**
 * Runs inside the signal handler, so it must be synchronous: were the event loop to run on, the writes
 * in flight would go on filling the folder being removed. Returns what became of the output, if it
 * speaks for one ("previous output kept").
 */
export type Cleanup = () => string | undefined;

const cleanups = new Set<Cleanup>();
let report: ((line: string) => void) | undefined;
let installed = false;
let end: ((signal: "SIGINT" | "SIGTERM") => never) | undefined;

/** Registers `cleanup` until the returned function is called. */
export function onInterrupt(cleanup: Cleanup): () => void {
  cleanups.add(cleanup);
  return () => void cleanups.delete(cleanup);
}

/**
 * Called once by the command line: SIGINT and SIGTERM run the registered cleanups and end the
 * process. While nothing is registered, a command's own handler (the preview closes its server)
 * takes precedence.
 */
export function exitOnInterrupt(reportLine: (line: string) => void, exit: (signal: "SIGINT" | "SIGTERM") => never): void {
  report = reportLine;
  end = exit;
  if (installed) return;
  installed = true;
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.on(signal, () => {
      if (cleanups.size > 0 || process.listenerCount(signal) === 1) interrupted(signal);
    });
}

function interrupted(signal: "SIGINT" | "SIGTERM"): never {
  // Registered outermost first: the innermost (a folder inside another's temporary folder) goes first,
  // and the outermost output's fate is the one to tell.
  const registered = [...cleanups];
  cleanups.clear();
  const notes: string[] = [];
  const failures: string[] = [];
  for (const cleanup of registered.reverse()) {
    try {
      const note = cleanup();
      if (note) notes.push(note);
    } catch (err) {
      failures.push(err instanceof Error ? err.message : String(err));
    }
  }
  const outcome = notes.at(-1);
  report?.(outcome ? `interrupted, ${outcome}` : "interrupted");
  for (const failure of failures) report?.(`could not clean up: ${failure}`);
  // The command line that installed the handlers decides the code (cli/exit.ts).
  return end!(signal);
}
