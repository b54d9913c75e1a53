import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

const ROOT_DIR = path.dirname(new URL(import.meta.url).pathname);

/**
 * The suite in tiers (docs/development.md, "Tests"): `npm test` runs them all, `npm run test:fast`
 * the unit tier (`MESH_TEST_TIER=unit vitest run`). A test file is in the
 * tier whose names list it, else in `build`; test/architecture.test.ts checks that every name listed
 * is a test file, and that each host's
 * test is in the tier its record names (Host.test, src/hosts/host.ts). They are not read from the records
 * here: importing src/hosts would bundle most of src/ into loading this file (20 ms, then 0.35 to 0.8 s).
 */
export const TIERS = {
  /** rules, validation, routing, documents and the preview in-process: no web server, browser or other Node.js */
  unit: [
    "architecture",
    "bench-disk",
    "body",
    "bounds",
    "compiled",
    "compression",
    "conformance",
    "derive",
    "docs-facts",
    "events",
    "file-calls",
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
    "plan",
    "preview",
    "readme",
    "remove-folder",
    "routes",
    "surface",
    "tar",
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
 * file: such files run in the project `isolated`, found here by their text (test/architecture.test.ts
 * checks that they are).
 */
export const MOCKING: readonly string[] = readdirSync(new URL("./test/", import.meta.url))
  .filter((f) => f.endsWith(".test.ts") && /\bvi\.(mock|doMock)\(/.test(readFileSync(new URL(`./test/${f}`, import.meta.url), "utf8")))
  .map((f) => `test/${f}`)
  .sort();

const files = (names: readonly string[]) => names.map((n) => `test/${n}.test.ts`);
const ALL = readdirSync(new URL("./test/", import.meta.url))
  .filter((f) => f.endsWith(".test.ts"))
  .map((f) => `test/${f}`);

/** Each test file's tier: the one whose names list it, else `build`. */
export const tierOf = (file: string): string => Object.entries(TIERS).find(([, names]) => files(names).includes(file))?.[0] ?? "build";

/**
 * The projects of a run that takes the tiers `given` names (MESH_TEST_TIER: `unit`, `servers,browser`),
 * or every tier: the files that share modules, and those that mock one apart. An unknown name stops
 * the run with the names there are, rather than run nothing.
 */
export function projectsFor(given: string | undefined) {
  const known = [...Object.keys(TIERS), "build"];
  const names = given?.trim() ? given.split(",").map((n) => n.trim()) : undefined;
  const unknown = (names ?? []).filter((n) => !known.includes(n));
  if (unknown.length > 0) throw new Error(`MESH_TEST_TIER: no tier ${unknown.join(", ")}; the tiers are ${known.join(", ")}`);
  const included = ALL.filter((f) => !names || names.includes(tierOf(f)));
  return [
    { extends: true as const, test: { name: "suite", include: included.filter((f) => !MOCKING.includes(f)), isolate: false } },
    { extends: true as const, test: { name: "isolated", include: included.filter((f) => MOCKING.includes(f)), isolate: true } },
  ];
}

/**
 * The order the files start in, the same on every run (vitest's own keeps no timings on a fresh
 * clone, and runs the projects one after the other, by name): the heavy tiers first (each host file
 * replays thousands of requests, a runtime file installs Node.js or a package), then the builds and
 * CLI runs, the pages, and the unit tier's short files last, each tier's longer files first. Two
 * workers then finish close together instead of one running a long file alone at the end.
 */
const TIER_ORDER = ["servers", "runtimes", "build", "browser", "unit"];

class HeavyFirst extends BaseSequencer {
  override async sort(specs: TestSpecification[]): Promise<TestSpecification[]> {
    const weight = (spec: TestSpecification) => {
      const file = path.relative(ROOT_DIR, spec.moduleId);
      return { tier: TIER_ORDER.indexOf(tierOf(file)), size: statSync(spec.moduleId).size };
    };
    const weights = new Map(specs.map((s) => [s, weight(s)]));
    return [...specs].sort((a, b) => {
      const [x, y] = [weights.get(a)!, weights.get(b)!];
      return x.tier - y.tier || y.size - x.size;
    });
  }
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
    sequence: { sequencer: HeavyFirst },
    // Two projects, not one per tier: vitest runs its projects one after the other, each with workers
    // and modules of its own (measured: issue 44, docs/test-suite.md). A tier is chosen with MESH_TEST_TIER.
    projects: projectsFor(process.env.MESH_TEST_TIER),
  },
});
