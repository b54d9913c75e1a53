// `npm test` after scripts/test-deps.mjs: the type check, the format check and every vitest suite, side
// by side rather than one after the other. tsc and prettier each keep one core busy for about 15 s, and
// vitest's shared set-up (test/support/global.ts) builds its networks on one core for about 10 s before
// any file runs: in sequence the second core idled for most of that. The checks' output is held and
// printed when they end, so it does not break into vitest's; the run fails if any of the three fails.
// Arguments are vitest's (`npm test -- test/map.test.ts`).
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
/** A package's command, as npm links it into node_modules/.bin (its package.json's `bin`). */
function bin(pkg, name) {
  const manifest = require.resolve(`${pkg}/package.json`);
  const { bin } = JSON.parse(readFileSync(manifest, "utf8"));
  return path.join(path.dirname(manifest), typeof bin === "string" ? bin : bin[name]);
}

/** A program run with its output held, or passed through. */
function run(name, args, { held }) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: held ? ["ignore", "pipe", "pipe"] : "inherit" });
    const chunks = [];
    if (held) for (const stream of [child.stdout, child.stderr]) stream.on("data", (c) => chunks.push(c));
    child.on("error", (err) => resolve({ name, code: 1, output: `${err.message}\n` }));
    child.on("close", (code, signal) =>
      resolve({ name, code: code ?? (signal ? 128 : 1), output: Buffer.concat(chunks).toString("utf8") }),
    );
  });
}

const checks = [
  run("type check (tsc --noEmit)", [bin("typescript", "tsc"), "--noEmit"], { held: true }),
  run("format check (prettier --check .)", [bin("prettier", "prettier"), "--check", "."], { held: true }),
];
const suite = run("vitest", [bin("vitest", "vitest"), "run", ...process.argv.slice(2)], { held: false });

const ended = [...(await Promise.all(checks)), await suite];
for (const r of ended.slice(0, 2)) {
  if (r.code === 0) continue;
  process.stderr.write(`\n${r.name} failed (exit ${r.code}):\n${r.output}`);
}
const failed = ended.filter((r) => r.code !== 0);
for (const r of ended.slice(0, 2)) if (r.code === 0) process.stdout.write(`${r.name}: passed\n`);
process.exitCode = failed.length === 0 ? 0 : (failed.find((r) => r.name === "vitest")?.code ?? 1);
