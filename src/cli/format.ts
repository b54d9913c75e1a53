import { formatProblem, type Problem } from "../core/problems.ts";
import { plural } from "../core/values/text.ts";
import type { HostWarning } from "../hosts/host.ts";
import type { Progress } from "../pipeline.ts";

/** Text for people: counts with their noun, sizes in MB, warnings grouped by kind. */

export { plural };

/** Decimal megabytes (10^6 bytes), as file managers and hosts show them. */
export function megabytes(bytes: number): string {
  const mb = bytes / 1e6;
  return `${mb < 10 ? mb.toFixed(2) : mb < 100 ? mb.toFixed(1) : Math.round(mb).toLocaleString("en-US")} MB`;
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(2)} s`;
}

/** How many warnings of one kind are printed before the rest is summed up. */
export const SHOWN_PER_KIND = 5;

/**
 * The warning lines of a run: the first `shownPerKind` of each kind, in order, then one line
 * "... and N more <kind> warnings" per kind, naming the option that shows them all. Errors are never
 * grouped: each one is to be fixed.
 */
export function warningLines(
  problems: readonly Problem[],
  hostWarnings: readonly HostWarning[],
  shownPerKind: number = SHOWN_PER_KIND,
): string[] {
  const items = [
    ...problems.filter((p) => p.severity === "warning").map((p) => ({ kind: p.kind ?? "dump", text: formatProblem(p) })),
    ...hostWarnings.map((w) => ({ kind: w.kind, text: `warning: ${w.message}` })),
  ];
  const shown = new Map<string, number>();
  const lines: string[] = [];
  for (const item of items) {
    const n = (shown.get(item.kind) ?? 0) + 1;
    shown.set(item.kind, n);
    if (n <= shownPerKind) lines.push(item.text);
  }
  for (const [kind, n] of shown)
    if (n > shownPerKind)
      lines.push(`warning: ... and ${plural(n - shownPerKind, `more ${kind} warning`)} (--all-warnings shows every one)`);
  return lines;
}

export function warningCount(problems: readonly Problem[], hostWarnings: readonly HostWarning[]): number {
  return problems.filter((p) => p.severity === "warning").length + hostWarnings.length;
}

/**
 * A progress line on a terminal, for runs that take a while: nothing for the first `delayMs`, then
 * the stage and its count, redrawn at most every 200 ms on one line. Returns undefined when the
 * stream is not a terminal, so logs and CI output carry no progress.
 */
export function progressLine(
  stream: NodeJS.WriteStream,
  /** the stages this run goes through, in order: the line says which one of how many */
  stages: readonly Progress["stage"][] = ["reading", "writing"],
  delayMs = 2000,
): { update: (p: Progress) => void; done: () => void } | undefined {
  if (!stream.isTTY) return undefined;
  const started = Date.now();
  let drawn = 0;
  let visible = false;
  const what: Record<Progress["stage"], (done: number) => string> = {
    reading: (done) => `reading the dump: ${plural(done, "record")}`,
    writing: (done) => `writing the site: ${plural(done, "file")}`,
    snapshots: () => "writing the snapshot archives",
  };
  return {
    update(p) {
      const now = Date.now();
      if (now - started < delayMs || now - drawn < 200) return;
      drawn = now;
      visible = true;
      const step = stages.indexOf(p.stage);
      stream.write(`\r\x1b[2K${step < 0 ? "" : `step ${step + 1} of ${stages.length}, `}${what[p.stage](p.done)}`);
    },
    done() {
      if (visible) stream.write("\r\x1b[2K");
    },
  };
}

/** What an interrupt says: on a terminal it may come while a progress line is drawn, so it clears that line first. */
export function interruptLine(line: string, tty: boolean): string {
  return `${tty ? "\r\x1b[2K" : ""}mesh-api: ${line}\n`;
}
