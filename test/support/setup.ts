import { afterAll } from "vitest";
import { changedSharedBuilds } from "./shared.ts";
import { removeTempDirs } from "./tree.ts";

// Each test file's temporary folders go with it, so repeated runs do not fill the disk.
afterAll(removeTempDirs);

// The shared builds are read by every file that uses them: one that wrote into one fails here.
afterAll(() => {
  const changed = changedSharedBuilds();
  if (changed.length > 0) throw new Error(`this file changed the shared builds ${changed.join(", ")}: build a network of its own instead`);
});
