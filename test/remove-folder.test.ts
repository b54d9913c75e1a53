import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { removeFolder } from "../src/io/write/swap.ts";
import { tempDir } from "./support/tree.ts";

describe("removeFolder (io/write/swap.ts: a build's tree removed without Node's walk in the heap)", () => {
  it("removes a tree of folders and files whole", async () => {
    const dir = path.join(tempDir(), "build");
    for (let i = 0; i < 20; i++) {
      mkdirSync(path.join(dir, "api", `~${i}`, "deep"), { recursive: true });
      writeFileSync(path.join(dir, "api", `~${i}`, "deep", "index.json"), "{}");
    }
    await removeFolder(dir);
    expect(existsSync(dir)).toBe(false);
  });

  it("removes a link to a folder, never what it points at", async () => {
    const root = tempDir();
    const theirs = path.join(root, "theirs");
    mkdirSync(theirs);
    writeFileSync(path.join(theirs, "keep.txt"), "not ours");
    const link = path.join(root, "link");
    symlinkSync(theirs, link);
    await removeFolder(link);
    expect(existsSync(link)).toBe(false);
    expect(readFileSync(path.join(theirs, "keep.txt"), "utf8")).toBe("not ours");
  });

  it("removes a file, and takes a name that is not there as removed", async () => {
    const root = tempDir();
    const file = path.join(root, "a-file");
    writeFileSync(file, "x");
    await removeFolder(file);
    expect(existsSync(file)).toBe(false);
    await expect(removeFolder(path.join(root, "absent"))).resolves.toBeUndefined();
  });
});
