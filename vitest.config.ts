import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    setupFiles: ["test/support/setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two test files at a time even on 2 cores (vitest's default there is one): much of the suite waits
    // on CLI child processes, servers and the disk. Measured on 2 cores, eight of the slower files:
    // 187 s with one worker, 139 s with two, 152 s with three.
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
