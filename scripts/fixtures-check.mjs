// Compares the fixtures copied from ../shared/reference/ (beside the project) with the shared files, the
// contract: prints each copy that differs or is gone there and exits 1; with --refresh, copies the shared
// file over each differing copy (a link in test/fixtures, a file kept once, is compared through it and
// left a link). Run it when ../shared changes. Usage: node scripts/fixtures-check.mjs [--refresh]
import { copyFileSync, existsSync, lstatSync, readFileSync, readdirSync, realpathSync } from "node:fs";
import path from "node:path";

const root = path.resolve(new URL("..", import.meta.url).pathname);
const shared = path.resolve(root, "../shared/reference");
const copies = { "public-sample": "public-sample", "live-sample": "live-sample" };
const refresh = process.argv.includes("--refresh");
if (!existsSync(shared)) {
  console.error(`fixtures-check: ${shared} not found: nothing to compare with`);
  process.exit(2);
}
const walk = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
let differ = 0;
let compared = 0;
for (const [fixture, source] of Object.entries(copies)) {
  const base = path.join(root, "test/fixtures", fixture);
  for (const file of walk(base).sort()) {
    const rel = path.relative(base, file);
    if (path.basename(rel) === "LICENSE.md") continue; // the project's own note beside a copy
    const from = path.join(shared, source, rel);
    compared++;
    if (!existsSync(from)) {
      console.log(`${fixture}/${rel}: not in ../shared/reference/${source}/`);
      differ++;
    } else if (!readFileSync(from).equals(readFileSync(file))) {
      console.log(`${fixture}/${rel}: differs from ../shared/reference/${source}/${rel}`);
      differ++;
      if (refresh) copyFileSync(from, lstatSync(file).isSymbolicLink() ? realpathSync(file) : file);
    }
  }
}
console.log(`fixtures-check: ${compared} copies compared, ${differ} differ${refresh && differ ? " (refreshed)" : ""}`);
process.exit(differ && !refresh ? 1 : 0);
