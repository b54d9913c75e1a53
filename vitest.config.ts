import { readdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

/**
 * The suite in tiers (docs/development.md, "Tests"): `npm test` runs them all, `npm run test:fast`
 * the unit tier (`vitest run --project 'unit*'`: `unit` and `unit-isolated`). A test file is in the
 * tier whose names list it, else in `build`; test/architecture.test.ts checks that every name listed
 * is a test file, and that each host's
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
 * A worker's files share its modules (vitest's isolate: false): a file no longer imports src/ anew,
 * about half a second of CPU a file (the servers tier: 152 s of CPU isolated, 143 s shared; the unit
 * tier 34 s isolated, 24 s shared). But a file that replaces a module with vi.mock (filter-record,
 * output-record) must start with modules of its own, and its replacement must never reach another
 * file: such files run in an isolated project of their tier, `<tier>-isolated`, found here by their
 * text (test/architecture.test.ts checks that they are).
 */
export const MOCKING: readonly string[] = readdirSync(new URL("./test/", import.meta.url))
  .filter((f) => f.endsWith(".test.ts") && /\bvi\.(mock|doMock)\(/.test(readFileSync(new URL(`./test/${f}`, import.meta.url), "utf8")))
  .map((f) => `test/${f}`)
  .sort();

const files = (names: readonly string[]) => names.map((n) => `test/${n}.test.ts`);
const listed = Object.values(TIERS).flatMap(files);

/** A tier's projects: its files sharing modules, and those that mock one apart, isolated. */
function tier(name: string, include: string[], exclude: string[] = []) {
  const mine = MOCKING.filter((f) => (include.includes(f) || include.some((g) => g.includes("*"))) && !exclude.includes(f));
  return [
    { extends: true as const, test: { name, include, exclude: [...exclude, ...mine], isolate: false } },
    ...(mine.length === 0 ? [] : [{ extends: true as const, test: { name: `${name}-isolated`, include: mine, isolate: true } }]),
  ];
}

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
      ...Object.entries(TIERS).flatMap(([name, names]) => tier(name, files(names))),
      /** builds, CLI runs, cycles, importers, snapshots: everything else */
      ...tier("build", ["test/**/*.test.ts"], listed),
    ],
  },
});
