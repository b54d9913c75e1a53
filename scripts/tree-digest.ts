import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import fg from "fast-glob";

/**
 * npm run digest -- <dir> [--exclude <glob>...]: one SHA-256 over every file of a build (path and
 * bytes, sorted), and the file count. Compares output trees before and after a restructuring.
 */
const [dir, ...rest] = process.argv.slice(2);
if (!dir) {
  process.stderr.write("usage: tree-digest <dir> [--exclude <glob>...]\n");
  process.exit(2);
}
const ignore = rest.filter((_, i) => rest[i - 1] === "--exclude");
const files = fg.sync("**/*", { cwd: dir, dot: true, onlyFiles: true, ignore }).sort();
const all = createHash("sha256");
for (const f of files) {
  const h = createHash("sha256")
    .update(readFileSync(path.join(dir, f)))
    .digest("hex");
  all.update(`${h}  ${f}\n`);
}
process.stdout.write(`${all.digest("hex")}  ${files.length} files  ${dir}\n`);
