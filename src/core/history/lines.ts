import type { z } from "zod";
import { ChangeEvent, RunCounts } from "./event.ts";
import { InvalidDumpError, jsonPath, type Problem } from "../problems.ts";

/** Where a dump keeps the changes its imports recorded (docs/dump-format.md, "History"). */
export const EVENTS_FILE = "history/events.ndjson";
/** Where a dump keeps each import's counts by status (docs/dump-format.md, "History"). */
export const COUNTS_FILE = "history/counts.ndjson";

/**
 * The records of an NDJSON file of the dump's history (`name`, for messages), each checked by
 * `schema`; none without the file. A line that is no record is bad input, located by file and line
 * (the history is written by this tool: a hand edit gone wrong).
 */
export function parseLines<T>(text: string | undefined, name: string, schema: z.ZodType<T>): T[] {
  if (text === undefined) return [];
  const records: T[] = [];
  const problems: Problem[] = [];
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      problems.push({ severity: "error", source: { file: name, line: i + 1 }, path: "$", message: "not JSON" });
      return;
    }
    const parsed = schema.safeParse(value);
    if (parsed.success) records.push(parsed.data);
    else
      for (const issue of parsed.error.issues)
        problems.push({ severity: "error", source: { file: name, line: i + 1 }, path: jsonPath(issue.path), message: issue.message });
  });
  if (problems.length > 0) throw new InvalidDumpError(problems);
  return records;
}

/**
 * The events of a dump's history file, oldest first. The strings many events repeat (an instant, a
 * kind, an access point at a link's end, a value before) are held once: parsed, each line has
 * copies of its own, and the window keeps up to 100,000 events for the whole build.
 */
export function parseEvents(text: string | undefined): ChangeEvent[] {
  const pool = new Map<string, string>();
  const once = <T>(v: T): T => {
    if (typeof v !== "string") return v;
    const had = pool.get(v);
    if (had !== undefined) return had as T;
    pool.set(v, v);
    return v;
  };
  const events = parseLines(text, EVENTS_FILE, ChangeEvent);
  for (const e of events) {
    e.at = once(e.at);
    e.kind = once(e.kind);
    e.subject.type = once(e.subject.type);
    if (e.subject.ends) e.subject.ends = [once(e.subject.ends[0]), once(e.subject.ends[1])];
    if ("before" in e) e.before = once(e.before);
    if ("after" in e) e.after = once(e.after);
  }
  return events;
}
/** The counts of a dump's history file, oldest first. */
export const parseCounts = (text: string | undefined): RunCounts[] => parseLines(text, COUNTS_FILE, RunCounts);
