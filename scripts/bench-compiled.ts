import { execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * The per-run scripts (a measured build, a measured cycle) as JavaScript, run by plain `node` as the
 * installed package's `mesh-api` runs `lib/`: through tsx, a process started at 118 MB of RSS where
 * the compiled code starts at 80 MB (measured 2026-11-29), and every peak the bench records carried
 * those 38 MB of the loader, which no user runs.
 *
 * Compiled with the `tsc` of the checkout's node_modules (TypeScript 7, types not checked: the lint checks them),
 * module by module as `npm run compile` makes `lib/`, into a temporary folder removed when the bench
 * ends; what the code reads beside itself (`assets/`, `package.json`, `node_modules/`) is reached
 * from there as from the package root. Once per checkout and process (the bench never changes a
 * checkout's sources once it runs them); a bench calls it before its first measurement, so that the
 * compile's writes do not fall into a measured run's time.
 */
const made = new Map<string, string>();

export type MeasuredScript = "bench-build" | "bench-cycle-run";

export function measuredScript(checkout: string, script: MeasuredScript): string {
  let out = made.get(checkout);
  if (out === undefined) {
    out = mkdtempSync(path.join(os.tmpdir(), "mesh-api-bench-js-"));
    const dir = out;
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    const files = ["bench-build", "bench-cycle-run"].map((s) => path.join(checkout, "scripts", `${s}.ts`));
    execFileSync(
      process.execPath,
      [
        path.join(checkout, "node_modules/typescript-go/bin/tsc"),
        ...files,
        ...["--outDir", dir, "--rootDir", checkout, "--module", "nodenext", "--target", "es2022", "--types", "node"],
        ...["--rewriteRelativeImportExtensions", "--allowImportingTsExtensions", "--verbatimModuleSyntax", "--resolveJsonModule"],
        ...["--skipLibCheck", "--noCheck", "--ignoreConfig"],
      ],
      { cwd: checkout, stdio: ["ignore", "inherit", "inherit"] },
    );
    // what the code reads relative to its own file (src/io/write/map-assets.ts, src/cli/package-version.ts),
    // the packages it imports; package.json also makes the modules ES modules
    for (const name of ["assets", "node_modules"]) symlinkSync(path.join(checkout, name), path.join(dir, name));
    copyFileSync(path.join(checkout, "package.json"), path.join(dir, "package.json"));
    made.set(checkout, dir);
  }
  return path.join(out, "scripts", `${script}.js`);
}
