// `npm run lint`: the type check and the format check side by side (each mostly one core: 8 and 7 s
// one after the other on 2 cores, the longer of the two together), each with its own output, the
// exit code the worst of the two. Plain JavaScript: it runs before anything is compiled.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
// TypeScript 7 (the compiler in Go, `typescript-go` in package.json) checks in a third of the CPU of
// TypeScript 5, whose JavaScript API the tests and openapi-typescript still import as `typescript`.
const tsc = path.join(path.dirname(require.resolve("typescript-go/package.json")), "bin", "tsc");
const checks = [
  { name: "tsc --noEmit", bin: tsc, args: ["--noEmit"] },
  { name: "prettier --check .", bin: require.resolve("prettier/bin/prettier.cjs"), args: ["--check", "."] },
];

const results = await Promise.all(
  checks.map(
    ({ name, bin, args }) =>
      new Promise((resolve) => {
        const child = spawn(process.execPath, [bin, ...args], { stdio: ["ignore", "pipe", "pipe"] });
        let output = "";
        child.stdout.on("data", (c) => (output += c));
        child.stderr.on("data", (c) => (output += c));
        child.on("error", (err) => resolve({ name, code: 1, output: String(err) }));
        child.on("close", (code, signal) => resolve({ name, code: code ?? (signal ? 1 : 0), output }));
      }),
  ),
);
// printed whole, one check after the other, so that their lines never mix
for (const { name, code, output } of results) {
  process.stdout.write(`> ${name}\n${output}`);
  if (code !== 0) process.stdout.write(`${name} failed (exit ${code})\n`);
}
process.exitCode = Math.max(...results.map((r) => r.code));
