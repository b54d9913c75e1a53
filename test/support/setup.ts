import { afterAll } from "vitest";
import { removeTempDirs } from "./tree.ts";

// Each test file's temporary folders go with it, so repeated runs do not fill the disk.
afterAll(removeTempDirs);
