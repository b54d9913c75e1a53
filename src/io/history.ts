import { existsSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileFor } from "../core/routes.ts";
import type { z } from "zod";
import { ChangeEvent, RunCounts } from "../core/history/event.ts";
import { NO_DAYS, type CarriedDays, type Day } from "../core/history/daily.ts";
import type { Body } from "../core/body.ts";
import { InvalidDumpError, jsonPath, type Problem } from "../core/problems.ts";

/** Where a dump keeps the changes its imports recorded (docs/dump-format.md, "History"). */
export const EVENTS_FILE = "history/events.ndjson";

/**
 * The events a dump keeps, oldest first; none when it keeps none. A line that is not an event is bad
 * input, located by file and line (the history is written by this tool: a hand edit gone wrong).
 */
export async function readEvents(dump: string): Promise<ChangeEvent[]> {
  return readLines(dump, EVENTS_FILE, ChangeEvent);
}

/** The records of an NDJSON file of the dump's history, each checked by `schema`; none when the file is absent. */
async function readLines<T>(dump: string, name: string, schema: z.ZodType<T>): Promise<T[]> {
  const text = await readFile(path.join(dump, name), "utf8").catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return undefined;
    throw err;
  });
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

/** Where a dump keeps each import's counts by status (docs/dump-format.md, "History"). */
export const COUNTS_FILE = "history/counts.ndjson";

/** The counts a dump keeps, oldest first; none when it keeps none. A bad line is bad input, located. */
export async function readCounts(dump: string): Promise<RunCounts[]> {
  return readLines(dump, COUNTS_FILE, RunCounts);
}

export const countsText = (counts: readonly RunCounts[]) => counts.map((c) => JSON.stringify(c) + "\n").join("");

export const eventsText = (events: readonly ChangeEvent[]) => events.map((e) => JSON.stringify(e) + "\n").join("");

/**
 * The history by day that the build at `dir` holds (its index, and each day's graph and diff read when
 * written), for the build that replaces it (core/history/daily.ts). A build without one, or with an
 * index that is not ours, carries none.
 */
export async function readCarriedDays(dir: string | undefined, windowDays: number): Promise<CarriedDays> {
  if (dir === undefined) return { ...NO_DAYS, windowDays };
  const text = await readFile(path.join(dir, fileFor("netjsonHistory")), "utf8").catch(() => undefined);
  let days: Day[] = [];
  try {
    const index = text === undefined ? [] : (JSON.parse(text) as { day?: unknown; at?: unknown; since?: unknown }[]);
    const isDay = (v: unknown): v is string => typeof v === "string" && /^\d{4}-\d{2}-\d{2}$/.test(v);
    days = index
      .filter((d) => isDay(d.day) && typeof d.at === "string" && (d.since === null || isDay(d.since)))
      .map((d) => ({ day: d.day as string, at: d.at as string, since: (d.since as string | null) ?? null }))
      .filter((d) => existsSync(path.join(dir, fileFor("netjsonDay", { day: d.day }))));
  } catch {
    days = [];
  }
  // Read as they are written, so that thirty days of graphs are never held at once.
  const lazily = (file: string): Body => ({
    text: {
      *[Symbol.iterator]() {
        yield readFileSync(file, "utf8");
      },
    },
  });
  return {
    days,
    windowDays,
    graph: (day) => lazily(path.join(dir, fileFor("netjsonDay", { day }))),
    diff: (day) => {
      const file = path.join(dir, fileFor("netjsonDiff", { day }));
      return existsSync(file) ? lazily(file) : undefined;
    },
  };
}
