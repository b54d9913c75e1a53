import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { markedTempDir, sweepLeftovers, tempDir } from "./support/tree.ts";

describe("the suite's temporary folders", () => {
  it("are named by the pid of the process that made them", () => {
    expect(path.basename(tempDir())).toMatch(new RegExp(`^mesh-api-test-${process.pid}-[A-Za-z0-9]{6}$`));
    expect(path.basename(markedTempDir("mesh-shared-", tempDir()))).toMatch(new RegExp(`^mesh-shared-${process.pid}-[A-Za-z0-9]{6}$`));
  });

  it("left by a stopped run are removed, every other folder is kept", async () => {
    const root = tempDir();
    const gone = spawnSync(process.execPath, ["-e", ""]).pid; // a process that has ended
    expect(gone).toBeGreaterThan(0);
    const left = [`mesh-api-test-${gone}-aB3dE6`, `mesh-fuzz-${gone}-x1y2z3`, `mesh-shared-${gone}-QWERTY`];
    const kept = [
      `mesh-api-test-${process.pid}-aB3dE6`, // its maker runs
      `mesh-api-test-aB3dE6`, // no pid: not named by this suite's marker
      `other-${gone}-aB3dE6`,
      `mesh-api-test-${gone}-aB3dE6x`,
      `mesh-api-test-${gone}-aB3`,
    ];
    for (const name of [...left, ...kept]) {
      mkdirSync(path.join(root, name, "dist", "api"), { recursive: true });
      writeFileSync(path.join(root, name, "dist", "api", "index.json"), "{}");
    }
    writeFileSync(path.join(root, `mesh-fuzz-${gone}-f1l3ab`), "a file, not a folder");

    expect(await sweepLeftovers(root)).toEqual([...left].sort());
    for (const name of left) expect(existsSync(path.join(root, name))).toBe(false);
    expect(readdirSync(root).sort()).toEqual([...kept, `mesh-fuzz-${gone}-f1l3ab`].sort());
    expect(await sweepLeftovers(root)).toEqual([]);
  });
});
