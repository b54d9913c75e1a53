import { formatProblem, type Problem } from "../core/problems.ts";
import { plural } from "../core/text.ts";
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
export function progressLine(stream: NodeJS.WriteStream, delayMs = 2000): { update: (p: Progress) => void; done: () => void } | undefined {
  if (!stream.isTTY) return undefined;
  const started = Date.now();
  let drawn = 0;
  let visible = false;
  const nouns: Record<Progress["stage"], string> = { reading: "record", writing: "file", snapshots: "" };
  return {
    update(p) {
      const now = Date.now();
      if (now - started < delayMs || now - drawn < 200) return;
      drawn = now;
      visible = true;
      const what = p.stage === "snapshots" ? "writing snapshots" : `${p.stage}: ${plural(p.done, nouns[p.stage])}`;
      stream.write(`\r\x1b[2K${what}`);
    },
    done() {
      if (visible) stream.write("\r\x1b[2K");
    },
  };
}
