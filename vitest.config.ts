import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

/**
 * The suite in tiers (docs/development.md, "Tests"): `npm test` runs them all, `npm run test:fast`
 * the unit tier (`vitest --project unit`). A test file is in the tier whose names list it, else in
 * `build`; test/architecture.test.ts checks that every name listed is a test file, and that each host's
 * test is in the tier its record names (Host.test, src/hosts/host.ts). They are not read from the records
 * here: importing src/hosts would bundle most of src/ into loading this file (20 ms, then 0.35 to 0.8 s).
 */
export const TIERS = {
  /** rules, validation, routing, documents and the preview in-process: no web server, browser or other Node.js */
  unit: [
    "architecture",
    "bounds",
    "compiled",
    "compression",
    "conformance",
    "derive",
    "docs-facts",
    "events",
    "filter-record",
    "fixtures",
    "format",
    "layout",
    "limits",
    "metrics",
    "netjson",
    "openapi",
    "output-record",
    "pages",
    "path-safety",
    "preview",
    "readme",
    "routes",
    "surface",
    "temp-folders",
    "validate",
  ],
  /** the real web servers (Debian's Apache, nginx, Caddy) and Netlify's engines on the generated configurations */
  servers: ["apache", "caddy", "host-config", "netlify", "netlify-edge", "nginx", "rule-limit"],
  /** a headless Chromium on the pages */
  browser: ["docs", "map", "status"],
  /** other Node.js versions, the installed package and the OpenAPI linter */
  runtimes: ["node-versions", "openapi-lint", "package"],
} as const;

/**
 * The tiers whose files each start with modules of their own. The others share a worker's modules
 * from file to file (vitest's isolate: false): each file imported src/ anew, about half a second of
 * CPU a file (the servers tier: 152 s of CPU isolated, 143 s shared). The unit tier stays isolated:
 * a file that replaces a module of src/ with vi.mock (filter-record, output-record) must be in it, so
 * that the replacement never reaches another file (test/architecture.test.ts checks it).
 */
export const ISOLATED: ReadonlySet<string> = new Set(["unit"]);

const files = (names: readonly string[]) => names.map((n) => `test/${n}.test.ts`);
const listed = Object.values(TIERS).flatMap(files);

export default defineConfig({
  test: {
    setupFiles: ["test/support/setup.ts"],
    // the networks many files serve, built once per run (test/support/shared.ts)
    globalSetup: ["test/support/global.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two test files at a time even on 2 cores (vitest's default there is one): much of the suite waits
    // on CLI child processes, servers and the disk. Measured on 2 cores, eight of the slower files:
    // 187 s with one worker, 139 s with two, 152 s with three.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      ...Object.entries(TIERS).map(([name, names]) => ({
        extends: true as const,
        test: { name, include: files(names), isolate: ISOLATED.has(name) },
      })),
      /** builds, CLI runs, cycles, importers, snapshots: everything else */
      { extends: true as const, test: { name: "build", include: ["test/**/*.test.ts"], exclude: listed, isolate: false } },
    ],
  },
});
