import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { RefusedOutputError } from "../io/write/ownership.ts";
import { readText } from "../io/write/whole.ts";

/**
 * The record a run leaves in its folder (`cycle.json`): what the next run decides from. A run's
 * settings are part of it, so that a run started with other settings than the state was set up
 * with (a cron line without `--default-status`) is refused instead of building other answers behind
 * the server's rules.
 */

export const KINDS = ["olsr", "wiki", "ondataservice"] as const;
export type Kind = (typeof KINDS)[number];

/**
 * What shapes the site, by the option that sets it: the values a run was given (resolved defaults
 * included), or null where the option was left out. Strings only, so that two records compare by
 * their JSON.
 */
export type Settings = Readonly<Record<string, string | null>>;

export interface SourceRecord {
  /** the run that imported it last */
  readonly run: number;
  /** the sha256 of the bytes that import read (a file, or the answer of an address) */
  readonly sha256?: string;
  /** the instant of that run (its `at`); absent in a record of an earlier release */
  readonly at?: string;
}

export interface CycleRecord {
  readonly format: "mesh-api-cycle/2";
  readonly runs: number;
  /** the run's instant: `taken_at` of its dump; the next run's must be later */
  readonly at: string;
  readonly sources: Readonly<Record<string, SourceRecord>>;
  readonly sitesRun?: number;
  readonly snapshotDay?: string;
  readonly settings: Settings;
  /** the build served, relative to the state folder */
  readonly build: string;
  /** how long the run took from its import to this record, in seconds (the metrics file's; absent in earlier releases' records) */
  readonly seconds?: number;
}

/** What an earlier release recorded (format 1): no instant and no settings. */
interface RecordV1 {
  readonly format: "mesh-api-cycle/1";
  readonly runs: number;
  readonly sources: Readonly<Record<string, SourceRecord>>;
  readonly sitesRun?: number;
  readonly snapshotDay?: string;
}

export type PreviousRecord = Omit<CycleRecord, "format" | "at" | "settings" | "build"> & {
  readonly at?: string;
  readonly settings?: Settings;
};

export const FIRST: PreviousRecord = { runs: 0, sources: {} };

/** The record at `file`; an earlier release's is read as far as it goes (its instant from its dump). */
export async function readRecord(file: string, dump: string): Promise<PreviousRecord> {
  const text = await readText(file);
  if (text === undefined) return FIRST;
  let parsed: CycleRecord | RecordV1;
  try {
    parsed = JSON.parse(text) as CycleRecord | RecordV1;
  } catch {
    throw new RefusedOutputError(`${file} is not a record of mesh-api cycle (not JSON); the state is not the cycle's own`);
  }
  if (parsed.format === "mesh-api-cycle/2") return parsed;
  if (parsed.format !== "mesh-api-cycle/1") throw new RefusedOutputError(`${file} is not a record of mesh-api cycle`);
  const network = await readFile(path.join(dump, "network.json"), "utf8")
    .then((t) => JSON.parse(t) as { taken_at?: unknown })
    .catch(() => undefined);
  const { runs, sources, sitesRun, snapshotDay } = parsed;
  return { runs, sources, sitesRun, snapshotDay, ...(typeof network?.taken_at === "string" && { at: network.taken_at }) };
}

export const recordText = (record: CycleRecord) => JSON.stringify(record, null, 2) + "\n";

export const sha256 = async (file: string) =>
  createHash("sha256")
    .update(await readFile(file))
    .digest("hex");

/**
 * The differences between the settings the state was set up with and this run's, one phrase each,
 * in the options' order: `--default-status: online before, not given now`.
 */
export function settingsChanged(before: Settings | undefined, now: Settings): string[] {
  if (before === undefined) return [];
  const said = (v: string | null | undefined) => (v === null || v === undefined ? "not given" : JSON.stringify(v));
  return [...new Set([...Object.keys(now), ...Object.keys(before)])]
    .filter((option) => (before[option] ?? null) !== (now[option] ?? null))
    .map((option) => `${option}: ${said(before[option])} before, ${said(now[option])} now`);
}

/** Refuses this run's settings when they differ from the state's, unless the operator says they change it. */
export function assertSameSettings(before: Settings | undefined, now: Settings, reconfigure: boolean): void {
  const changed = settingsChanged(before, now);
  if (changed.length === 0 || reconfigure) return;
  throw new RefusedOutputError(
    `refusing to run with other settings than the state's (${changed.join("; ")}): ` +
      `give the same options as before, or add --reconfigure once to change them from this run on.`,
  );
}

/** The instant of a run must be later than the last one's: timestamps never go back. */
export function assertLater(previous: string | undefined, at: string, given: boolean): void {
  if (previous === undefined || Date.parse(at) > Date.parse(previous)) return;
  throw new RefusedOutputError(
    `refusing to run at ${at}: the state's last run was at ${previous}, and a run at or before it would move ` +
      `timestamps back${given ? "" : " (this machine's clock is behind the state's; wait until it has passed that instant)"}; ` +
      `to replay earlier instants, use a new --state folder.`,
  );
}
