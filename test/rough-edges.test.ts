import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import fg from "fast-glob";
import { describe, expect, it } from "vitest";
import { cli, tempDir } from "./support/tree.ts";

/**
 * The operator's rough edges of issue 28, each as the operator met it: the command as typed, what it
 * printed or did, and what it does now.
 */

const DATA = path.join(new URL("..", import.meta.url).pathname, "data");

describe("build's snapshot options and counts (item 4)", () => {
  it("refuses --keep or --previous without --snapshot, before any work", () => {
    const out = path.join(tempDir(), "dist");
    for (const extra of [["--keep", "3"], ["--previous", "https://example.org/snapshots/index.json"]]) {
      const r = cli(["build", "--data", DATA, "--out", out, ...extra]);
      expect([r.status, r.stderr]).toEqual([2, `mesh-api: ${extra[0]} is for --snapshot: add --snapshot, or leave it out\n`]);
      expect(existsSync(out)).toBe(false);
    }
  });

  it("says what --snapshot wrote, as the snapshot command does, and counts the --extra files among the files", () => {
    const work = tempDir();
    const extra = path.join(work, "extra");
    mkdirSync(path.join(extra, "about"), { recursive: true });
    writeFileSync(path.join(extra, "robots.txt"), "User-agent: *\n");
    writeFileSync(path.join(extra, "about", "index.html"), "<p>us</p>\n");
    const out = path.join(work, "dist");
    const r = cli(["build", "--data", DATA, "--out", out, "--snapshot", "--extra", extra]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`\\nsnapshot \\d{4}-\\d{2}-\\d{2} of ${DATA}: .+; 1 snapshot kept in ${out}/snapshots\\n`));
    // the site's files: the API's, the pages, the operator's; not the snapshots, nor the marker and record of the build
    const files = fg.sync("**", { cwd: out, dot: true, onlyFiles: true, ignore: ["snapshots/**", ".mesh-api-output", ".mesh-api-build.json"] }).length;
    expect(r.stderr).toContain(`built ${out}: ${files.toLocaleString("en-US")} files`);
  });
});
