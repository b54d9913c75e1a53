import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { rm } from "node:fs/promises";
import path from "node:path";
import { configKind, type ConfigOptions, type Host } from "../hosts/host.ts";
import { RefusedOutputError } from "../io/write/ownership.ts";
import { readText, writeWhole } from "../io/write/whole.ts";
import { LAYOUT } from "./state.ts";

/** The web server whose configuration follows the build (`host-config <host> --data`). */
export interface HostHook {
  readonly host: Host;
  readonly options: ConfigOptions;
  /** the file the server includes */
  readonly file: string;
  /** a shell command that exits 0 when the server accepts its configuration (`nginx -t`) */
  readonly test?: string;
  /** a shell command that makes the server read its configuration again (`systemctl reload nginx`) */
  readonly reload?: string;
  /** replace the file even when it is not one this tool wrote */
  readonly force?: boolean;
}

/**
 * The journal of a configuration change (`<state>/host-config.json`), written before the file is
 * touched: which run changed it and what it held before. A run that stops before its commit leaves
 * it for the next run, which puts the old text back (the server must never be reloaded with rules of
 * a build that was not served); once the run has committed, it means a reload is owed, and it goes
 * when a reload succeeded.
 */
interface Journal {
  readonly run: number;
  readonly file: string;
  /** the file's text before the run changed it; null: there was none */
  readonly before: string | null;
  /** the sha256 of the text the run wrote */
  readonly wrote: string;
  /** an earlier run's reload was still owed when this run changed the file */
  readonly owed?: boolean;
}

const digest = (text: string) => createHash("sha256").update(text).digest("hex");

export function sh(command: string, timeoutMs = 60_000): Promise<{ ok: boolean; output: string }> {
  return new Promise((resolve) => {
    execFile("/bin/sh", ["-c", command], { timeout: timeoutMs }, (err, stdout, stderr) =>
      resolve({ ok: err === null, output: `${stdout}${stderr}`.trim() }),
    );
  });
}

/** The file must be one this tool wrote (as `host-config --write` decides), unless the operator gives --force. */
export async function assertOurs(hook: HostHook): Promise<void> {
  if (hook.force) return;
  const text = await readText(hook.file);
  if (text === undefined || configKind(hook.host, text, hook.options) !== undefined) return;
  throw new RefusedOutputError(
    `refusing to replace ${hook.file} with --host-config: it was not written by mesh-api (its first line is not ours); ` +
      `name another file and include it in your server's configuration, or add --force to take it over.`,
  );
}

const journalFile = (state: string) => path.join(state, LAYOUT.hostJournal);

const writeJournal = (state: string, journal: Journal) => writeWhole(journalFile(state), JSON.stringify(journal) + "\n");

async function readJournal(state: string): Promise<Journal | undefined> {
  const text = await readText(journalFile(state));
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as Journal;
  } catch {
    return undefined; // cut short by a kill while it was written: the file was not touched yet
  }
}

/**
 * Settles what a run left: a change of a run that never committed is undone (the file gets its old
 * text back, when it still holds the text that run wrote); a committed run's change is a reload
 * owed, which this run makes. Returns whether a reload is owed.
 */
export async function recoverHost(state: string, committedRun: number): Promise<{ owed: boolean; note?: string }> {
  const journal = await readJournal(state);
  if (journal === undefined) {
    await rm(journalFile(state), { force: true });
    return { owed: false };
  }
  if (journal.run <= committedRun) return { owed: true };
  const now = await readText(journal.file);
  let note: string | undefined;
  if (now !== undefined && digest(now) === journal.wrote) {
    if (journal.before === null) await rm(journal.file, { force: true });
    else await writeWhole(journal.file, journal.before);
  } else if (now !== undefined) {
    note = `${journal.file} changed since an unfinished run wrote it; left as it is`;
  }
  await rm(journalFile(state), { force: true });
  // The reload an earlier run owed is still owed, for the text now back in the file.
  if (journal.owed && journal.before !== null)
    await writeJournal(state, { run: committedRun, file: journal.file, before: null, wrote: digest(journal.before) });
  return { owed: journal.owed === true, ...(note && { note }) };
}

export interface Configured {
  readonly changed: boolean;
  /** the server refused the new text: the old one is back */
  readonly refused?: string;
}

/**
 * Installs the run's configuration when it differs from the file, journalled first; the old text goes
 * back at once when the server refuses the new one. Before the run's commit.
 */
export async function configure(state: string, run: number, hook: HostHook, text: string, owed: boolean): Promise<Configured> {
  const before = await readText(hook.file);
  if (before === text) return { changed: false };
  await writeJournal(state, { run, file: path.resolve(hook.file), before: before ?? null, wrote: digest(text), ...(owed && { owed }) });
  await writeWhole(hook.file, text);
  if (hook.test !== undefined) {
    const t = await sh(hook.test);
    if (!t.ok) {
      if (before === undefined) await rm(hook.file, { force: true });
      else await writeWhole(hook.file, before);
      if (!owed) await rm(journalFile(state), { force: true });
      else if (before !== undefined)
        await writeJournal(state, { run: run - 1, file: path.resolve(hook.file), before: null, wrote: digest(before) });
      return {
        changed: false,
        refused: `--host-test ${JSON.stringify(hook.test)} failed${t.output ? `: ${t.output.split("\n").slice(-3).join(" ")}` : ""}`,
      };
    }
  }
  return { changed: true };
}

/** After the commit: the reload the journal owes; the journal goes only when it succeeded. */
export async function reload(state: string, hook: HostHook): Promise<{ failed?: string }> {
  if (hook.reload !== undefined) {
    const r = await sh(hook.reload);
    if (!r.ok) return { failed: `--host-reload ${JSON.stringify(hook.reload)} failed${r.output ? `: ${r.output}` : ""}` };
  }
  await rm(journalFile(state), { force: true });
  return {};
}

/** A journal of a committed run without a hook in this run (settings changed with --reconfigure): nothing is owed any more. */
export async function forgetJournal(state: string): Promise<void> {
  await rm(journalFile(state), { force: true });
}
