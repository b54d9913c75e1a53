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

/** The events of a dump's history file, oldest first. */
export const parseEvents = (text: string | undefined): ChangeEvent[] => parseLines(text, EVENTS_FILE, ChangeEvent);
/** The counts of a dump's history file, oldest first. */
export const parseCounts = (text: string | undefined): RunCounts[] => parseLines(text, COUNTS_FILE, RunCounts);
