import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import fg from "fast-glob";
import { spawn, spawnSync } from "node:child_process";

/** Every file under `dir` (dot files included) with the SHA-256 of its bytes, sorted by path. */
export function treeDigest(dir: string): Map<string, string> {
  const files = fg.sync("**/*", { cwd: dir, dot: true, onlyFiles: true }).sort();
  return new Map(
    files.map((f) => [
      f,
      createHash("sha256")
        .update(readFileSync(path.join(dir, f)))
        .digest("hex"),
    ]),
  );
}

const made: string[] = [];

/**
 * Removes the folders made by tempDir so far. Run after each test file (test/support/setup.ts): vitest
 * ends its workers without an "exit" event, so a process hook alone left every folder behind.
 */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}
process.once("exit", removeTempDirs);

export function tempDir(prefix = "mesh-api-test-"): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

export const ROOT = new URL("../../", import.meta.url).pathname;

/**
 * The CLI from source in one process: node with tsx's loader, named by its absolute URL so it
 * resolves from any working folder (tsx's own cli.mjs would start a second process for each run).
 */
export const CLI_ARGS = [
  "--import",
  pathToFileURL(path.join(ROOT, "node_modules/tsx/dist/loader.mjs")).href,
  path.join(ROOT, "src/cli/main.ts"),
];

/** Runs the CLI as a user does, returning exit code and output. */
export function cli(args: string[], cwd = ROOT, env: Record<string, string> = {}): { status: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [...CLI_ARGS, ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, ...env },
  });
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** The CLI without blocking this process, for commands that talk to a server running in the test. */
export function cliAsync(args: string[], cwd = ROOT): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...CLI_ARGS, ...args], { cwd });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("close", (status) => resolve({ status: status ?? -1, stdout, stderr }));
  });
}
