// `npm test`: the Debian packages the tests drive (test-deps.mjs), then the lint (lint.mjs) and the
// suite (`vitest run`, with any arguments given to this script) side by side. The lint is about 20 s
// of CPU that used to run before the suite on a machine whose second core waits, during the lint's
// last seconds and the suite's first ten (its shared builds are made in one process before any test
// file starts). The suite's output is shown as it comes; the lint's is printed when it ends (at once
// if it failed), and the exit code is the worse of the two. Plain JavaScript: it runs before anything
// is compiled.
import { spawn, spawnSync } from "node:child_process";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const here = (file) => new URL(file, import.meta.url).pathname;

const deps = spawnSync(process.execPath, [here("test-deps.mjs")], { stdio: "inherit" });
if (deps.status !== 0) process.exit(deps.status ?? 1);

/** A child's exit code: a signal counts as a failure. */
const ended = (child) => new Promise((resolve) => child.on("close", (code, signal) => resolve(code ?? (signal ? 1 : 0))));

const lint = spawn(process.execPath, [here("lint.mjs")], { stdio: ["ignore", "pipe", "pipe"] });
let lintOutput = "";
lint.stdout.on("data", (c) => (lintOutput += c));
lint.stderr.on("data", (c) => (lintOutput += c));
const linted = ended(lint).then((code) => {
  if (code !== 0) process.stdout.write(`\n${lintOutput}npm run lint failed (exit ${code}); the suite goes on\n\n`);
  return code;
});

// vitest's command (its package exports no path to it, only package.json)
const bin = new URL("vitest.mjs", `file://${require.resolve("vitest/package.json")}`).pathname;
const vitest = spawn(process.execPath, [bin, "run", ...process.argv.slice(2)], { stdio: "inherit" });
const [lintCode, testCode] = await Promise.all([linted, ended(vitest)]);
if (lintCode === 0) process.stdout.write(lintOutput);
else process.stdout.write(`npm run lint failed (exit ${lintCode}): see its output above\n`);
process.exitCode = Math.max(lintCode, testCode);
