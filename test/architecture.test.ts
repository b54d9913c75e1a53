import { readFileSync } from "node:fs";
import path from "node:path";
import fg from "fast-glob";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { HOST_NAMES, HOSTS } from "../src/hosts/index.ts";
import { ROOT } from "./support/tree.ts";

/**
 * The layers of src/ as folders: core is pure and imports nothing from the edges; each edge imports
 * only the layers before it; there are no import circles. Read from the import statements of the
 * source, so a new file is checked the day it lands.
 */
const SRC = path.join(ROOT, "src");
const files = fg.sync("**/*.ts", { cwd: SRC }).sort();

function importsOf(file: string): { local: string[]; packages: string[] } {
  const text = readFileSync(path.join(SRC, file), "utf8");
  const specs = [
    ...text.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+"([^"]+)"|^\s*import\s+"([^"]+)"|import\(\s*"([^"]+)"\s*\)/gm),
  ].map((m) => m[1] ?? m[2] ?? m[3]);
  const local = specs.filter((s) => s.startsWith(".")).map((s) => path.posix.normalize(path.posix.join(path.posix.dirname(file), s)));
  return { local, packages: specs.filter((s) => !s.startsWith(".")) };
}

const layerOf = (file: string) => (file.includes("/") ? file.split("/")[0] : file.replace(/\.ts$/, ""));

/** Which layers each layer may import (besides itself). */
const ALLOWED: Record<string, readonly string[]> = {
  core: [],
  io: ["core"],
  hosts: ["core"],
  serve: ["core", "hosts", "io"],
  publish: ["core", "hosts", "io"],
  pipeline: ["core", "hosts", "io", "publish"],
  index: ["core", "hosts", "io", "publish", "serve", "pipeline"],
  cli: ["core", "hosts", "io", "publish", "serve", "pipeline", "importers", "live"],
  live: ["core", "hosts", "io", "publish", "pipeline", "importers"],
  gen: ["core", "io"],
  importers: ["core", "io"],
  types: [],
};

/** core computes; it does not touch the file system, the network or processes. */
const IMPURE = /^node:(fs|fs\/promises|http|https|net|child_process|dns|tls|worker_threads|os)$|^(fast-glob|http-server|tar-stream)$/;

/** The hosts there are (hosts/index.ts) or will be. */
const HOST_NAMES_PATTERN = new RegExp(
  [...HOST_NAMES, "cloudflare", "github pages"].map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"),
  "i",
);

describe("the layers of src/", () => {
  it("every file lies in a known layer", () => {
    expect(files.map(layerOf).filter((l) => !(l in ALLOWED))).toEqual([]);
  });

  it("each layer imports only the layers before it; core imports nothing impure", () => {
    const wrong: string[] = [];
    for (const file of files) {
      const from = layerOf(file);
      const { local, packages } = importsOf(file);
      for (const target of local) {
        const to = layerOf(target);
        if (to !== from && !ALLOWED[from]?.includes(to)) wrong.push(`${file} -> ${target}`);
      }
      if (from === "core") for (const p of packages) if (IMPURE.test(p)) wrong.push(`${file} -> ${p}`);
    }
    expect(wrong).toEqual([]);
  });

  it("has no import circles", () => {
    const graph = new Map(files.map((f) => [f, importsOf(f).local.filter((t) => files.includes(t))]));
    const cycles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const stack: string[] = [];
    const visit = (f: string) => {
      state.set(f, "open");
      stack.push(f);
      for (const t of graph.get(f) ?? []) {
        if (state.get(t) === "open") cycles.push([...stack.slice(stack.indexOf(t)), t].join(" -> "));
        else if (!state.has(t)) visit(t);
      }
      stack.pop();
      state.set(f, "done");
    };
    for (const f of files) if (!state.has(f)) visit(f);
    expect(cycles).toEqual([]);
  });

  it("core names no host: the route table states what a rule means, each host in hosts/ how it says it", () => {
    const named = files
      .filter((f) => layerOf(f) === "core")
      .flatMap((f) =>
        readFileSync(path.join(SRC, f), "utf8")
          .split("\n")
          .flatMap((line, i) => (HOST_NAMES_PATTERN.test(line) ? [`${f}:${i + 1}: ${line.trim()}`] : [])),
      );
    expect(named).toEqual([]);
  });

  it("ships only what the package runs: every compiled file is reached by imports from index.ts or cli/main.ts (code for tests lives in test/)", () => {
    const build = JSON.parse(readFileSync(path.join(ROOT, "tsconfig.build.json"), "utf8")) as { exclude: string[] };
    const excluded = build.exclude.map((e) => `${path.posix.relative("src", e)}/`);
    const compiled = files.filter((f) => !f.endsWith(".d.ts") && !excluded.some((e) => f.startsWith(e)));
    const reached = new Set<string>();
    const visit = (f: string) => {
      if (reached.has(f)) return;
      reached.add(f);
      for (const t of importsOf(f).local) if (files.includes(t)) visit(t);
    };
    for (const entry of ["index.ts", "cli/main.ts"]) visit(entry);
    expect(compiled.length).toBeGreaterThan(50);
    expect(compiled.filter((f) => !reached.has(f))).toEqual([]);
  });

  it("finds the imports it checks (the reader itself works)", () => {
    expect(importsOf("cli/program.ts").local).toContain("cli/build.ts");
    expect(importsOf("pipeline.ts").local).toContain("core/plan.ts");
    expect(importsOf("core/routes.ts").local.length).toBeGreaterThan(0);
  });
});

/**
 * docs/development.md's layer table, read back: each row's layer (`src/<layer>/` or `src/<layer>.ts`),
 * the code names of its text, and the layers it may import (its last column's code names).
 */
function layerTable(text: string): Map<string, { readonly named: Set<string>; readonly imports: string[] }> {
  const rows = new Map<string, { named: Set<string>; imports: string[] }>();
  const section = text.slice(text.indexOf("## Layout"), text.indexOf("\n## ", text.indexOf("## Layout") + 1));
  for (const line of section.split("\n")) {
    const cells = line.split(/(?<!\\)\|/).slice(1, -1);
    const layer = /^\s*`src\/([a-z-]+)(?:\/|\.ts)`\s*$/.exec(cells[0] ?? "")?.[1];
    if (!layer || cells.length !== 3) continue;
    const codes = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
    rows.set(layer, { named: new Set(codes(cells[1])), imports: codes(cells[2]).filter((c) => c in ALLOWED && c !== layer) });
  }
  return rows;
}

/** What the table gets wrong against the map of layers and the folders of src/. */
function tableProblems(text: string): string[] {
  const rows = layerTable(text);
  const problems: string[] = [];
  for (const [layer, allowed] of Object.entries(ALLOWED)) {
    const row = rows.get(layer);
    if (!row) problems.push(`no row for src/${layer}`);
    else if ([...row.imports].sort().join() !== [...allowed].sort().join())
      problems.push(`src/${layer} may import ${allowed.join(", ") || "nothing"}, the table says ${row.imports.join(", ") || "nothing"}`);
  }
  for (const dir of fg.sync("**", { cwd: SRC, onlyDirectories: true })) {
    const [layer, ...inner] = dir.split("/");
    if (inner.length > 0 && !rows.get(layer)?.named.has(`${inner.join("/")}/`)) problems.push(`src/${dir} is not named in its layer's row`);
  }
  return problems;
}

/** The longest function body a source file may hold, in lines (issue 43: a long function holds several jobs). */
const MOST_LINES = 80;

/** Every function of a source text whose body (from its brace to its brace) is longer than `most` lines. */
function longFunctions(file: string, text: string, most: number): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const long: string[] = [];
  const visit = (n: ts.Node) => {
    if (ts.isFunctionLike(n) && "body" in n && n.body) {
      const body = n.body as ts.Node;
      const lines = sf.getLineAndCharacterOfPosition(body.getEnd()).line - sf.getLineAndCharacterOfPosition(body.getStart(sf)).line + 1;
      if (lines > most) long.push(`${file}:${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1} (${lines} lines)`);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return long;
}

describe("the functions of src/", () => {
  it(`are at most ${MOST_LINES} lines long, each (the body, measured with the TypeScript parser)`, () => {
    expect(
      files.filter((f) => !f.endsWith(".d.ts")).flatMap((f) => longFunctions(f, readFileSync(path.join(SRC, f), "utf8"), MOST_LINES)),
    ).toEqual([]);
  });

  it("live in files of names of their own: no two source files share a name (a folder's index.ts aside)", () => {
    const byName = new Map<string, string[]>();
    for (const f of files) if (path.basename(f) !== "index.ts") byName.set(path.basename(f), [...(byName.get(path.basename(f)) ?? []), f]);
    expect([...byName.values()].filter((fs) => fs.length > 1)).toEqual([]);
  });

  it("the measure finds a long one", () => {
    const text = `export function f() {\n${"  g();\n".repeat(MOST_LINES)}}\nconst h = () => {\n  g();\n};\n`;
    expect(longFunctions("x.ts", text, MOST_LINES)).toEqual([`x.ts:1 (${MOST_LINES + 2} lines)`]);
  });
});

describe("docs/development.md's layer table", () => {
  const doc = readFileSync(path.join(ROOT, "docs/development.md"), "utf8");

  it("has a row for every layer, with the layers it may import, and names every folder of src/", () => {
    expect(tableProblems(doc)).toEqual([]);
  });

  it("fails when a folder or a layer is left out, or a row says other imports", () => {
    const without = (pattern: RegExp) => doc.replace(pattern, "");
    expect(tableProblems(without(/^\| `src\/gen\/` .*\n/m))).toContain("no row for src/gen");
    expect(tableProblems(doc.replace("(`outputs/`:", "(outputs:"))).toContain("src/core/outputs is not named in its layer's row");
    expect(tableProblems(doc.replace("| `core`, `io` |\n| `src/hosts/`", "| `core` |\n| `src/hosts/`"))).toContain(
      "src/importers may import core, io, the table says core",
    );
  });
});

describe("the command line's exit codes", () => {
  it("are set in one place: cli/main.ts, from what cli/exit.ts decides (program.ts's runCommandLine asks it); commands throw", () => {
    const setting = files.filter((f) => /process\.exitCode\s*=|process\.exit\(\s*[1-9]/.test(readFileSync(path.join(SRC, f), "utf8")));
    expect(setting).toEqual(["cli/main.ts"]);
    expect(readFileSync(path.join(SRC, "cli/main.ts"), "utf8")).toMatch(
      /runCommandLine\(process\.argv\.slice\(2\)\)\.then\(\(code\) => \{\n\s*process\.exitCode = code;/,
    );
    expect(readFileSync(path.join(SRC, "cli/program.ts"), "utf8")).toMatch(/return ended\(err\);/);
  });
});

describe("the test tiers (vitest.config.ts)", () => {
  it("name only test files that exist, each in one tier; the rest is the build tier", async () => {
    const { TIERS } = await import("../vitest.config.ts");
    const names = Object.values(TIERS).flat();
    const tests = new Set(fg.sync("*.test.ts", { cwd: path.join(ROOT, "test") }).map((f) => f.replace(/\.test\.ts$/, "")));
    expect(names.filter((n) => !tests.has(n))).toEqual([]);
    expect(names.length).toBe(new Set(names).size);
    expect(tests.size - names.length).toBeGreaterThan(0);
  });

  it("run every file that replaces a module with vi.mock apart, in the isolated project, and every other file in the shared one", async () => {
    const { MOCKING, projectsFor } = await import("../vitest.config.ts");
    const all = fg.sync("*.test.ts", { cwd: path.join(ROOT, "test") }).map((f) => `test/${f}`);
    const mocking = all.filter((f) => /\bvi\.(mock|doMock)\(/.test(readFileSync(path.join(ROOT, f), "utf8"))).sort();
    expect(mocking.length).toBeGreaterThan(0);
    expect(MOCKING).toEqual(mocking);
    const projects = projectsFor(undefined).map((p) => p.test);
    for (const f of all) {
      const runs = projects.filter((p) => p.include.includes(f));
      expect(
        runs.map((p) => [p.name, p.isolate]),
        f,
      ).toEqual([mocking.includes(f) ? ["isolated", true] : ["suite", false]]);
    }
  });

  it("take the tiers MESH_TEST_TIER names, and refuse a tier there is not", async () => {
    const { tierOf, projectsFor } = await import("../vitest.config.ts");
    expect(tierOf("test/nginx.test.ts")).toBe("servers");
    expect(tierOf("test/cycle.test.ts")).toBe("build");
    const [shared, isolated] = projectsFor("unit").map((p) => p.test.include);
    expect(shared).toContain("test/routes.test.ts");
    expect(shared).not.toContain("test/nginx.test.ts");
    expect(shared).not.toContain("test/cycle.test.ts");
    expect(isolated).toContain("test/filter-record.test.ts");
    const both = projectsFor(" servers, build").flatMap((p) => p.test.include);
    expect(both).toEqual(expect.arrayContaining(["test/nginx.test.ts", "test/cycle.test.ts"]));
    expect(both).not.toContain("test/routes.test.ts");
    expect(() => projectsFor("unit,severs")).toThrow(
      /^MESH_TEST_TIER: no tier severs; the tiers are unit, servers, browser, runtimes, build$/,
    );
  });

  it("hold each host's test in the tier its record names (Host.test)", async () => {
    const { TIERS } = await import("../vitest.config.ts");
    const tiers: Record<string, readonly string[]> = TIERS;
    const misplaced = HOSTS.filter((h) => !tiers[h.test.tier]?.includes(h.test.file));
    expect(misplaced.map((h) => `${h.name}: ${h.test.file} is not in TIERS.${h.test.tier}`)).toEqual([]);
  });
});

describe("the programs the hosts' tests start (Host.test.program, installed by scripts/test-deps.mjs)", () => {
  const programs = HOSTS.flatMap((h) => (h.test.program ? [{ host: h.name, ...h.test.program }] : []));

  it("every server host's test starts a real server: its record names the program, the variable naming another, its Debian package", () => {
    expect(HOSTS.filter((h) => h.server && !h.test.program).map((h) => h.name)).toEqual([]);
    const wrong = programs.filter(
      (p) => !path.isAbsolute(p.path) || !/^MESH_API_[A-Z0-9_]+$/.test(p.env) || !/^[a-z0-9][a-z0-9.+-]+$/.test(p.debian),
    );
    expect(wrong).toEqual([]);
    expect(new Set(programs.map((p) => p.env)).size).toBe(programs.length);
  });

  it("are the programs test/ starts, where the records say (process.env.<env> ?? <path>)", () => {
    const text = fg
      .sync(["*.ts", "support/*.ts"], { cwd: path.join(ROOT, "test") })
      .map((f) => readFileSync(path.join(ROOT, "test", f), "utf8"))
      .join("\n");
    const unused = programs.filter((p) => !text.includes(`process.env.${p.env} ?? ${JSON.stringify(p.path)}`));
    expect(unused.map((p) => `${p.host}: process.env.${p.env} ?? ${JSON.stringify(p.path)}`)).toEqual([]);
  });
});
