import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { command, ROOT, tempDir, treeDigest } from "./support/tree.ts";
import { synthesize, writeSynthDump } from "../src/gen/synth.ts";
import { validate } from "../src/pipeline.ts";
import { netlifyRules } from "../src/hosts/netlify.ts";
import { EDGE_FUNCTION_FILE, EDGE_FUNCTIONS_DIR, edgeToml } from "../src/hosts/netlify-edge.ts";

/** The publish workflow parses, calls only scripts that exist, and every secret and variable it uses is documented. */

const text = readFileSync(path.join(ROOT, ".github/workflows/publish.yml"), "utf8");
const workflow = parse(text) as {
  on: Record<string, unknown>;
  jobs: Record<
    string,
    { steps: { run?: string; uses?: string; if?: string; name?: string; id?: string; with?: Record<string, unknown> }[] }
  >;
};
const steps = Object.values(workflow.jobs).flatMap((j) => j.steps);
const runs = steps.map((s) => s.run ?? "").join("\n");
// The README links the set-up steps, which live in docs/hosting.md.
const readme = readFileSync(path.join(ROOT, "README.md"), "utf8") + readFileSync(path.join(ROOT, "docs/hosting.md"), "utf8");
const scripts = Object.keys(
  (JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts,
);

describe("publish workflow", () => {
  it("runs on a schedule and on manual dispatch", () => {
    expect(workflow.on).toHaveProperty("schedule");
    expect(workflow.on).toHaveProperty("workflow_dispatch");
    expect((workflow.on.schedule as { cron: string }[])[0].cron).toMatch(/^\S+ \S+ \S+ \S+ \S+$/);
  });

  it("has these steps, in this order, with these inputs and conditions", () => {
    const deploy = "env.NETLIFY_AUTH_TOKEN != '' && env.NETLIFY_SITE_ID != ''";
    expect(steps.map(({ run: _run, ...step }) => step)).toEqual([
      { uses: "actions/checkout@v4" },
      { uses: "actions/setup-node@v4", with: { "node-version": 24, cache: "npm" } },
      {}, // npm ci: no npm test, the tests run on push (test.yml)
      { name: "Choose the dumps", id: "dumps" },
      { name: "Build" },
      { name: "Snapshot, with the history of the live site" },
      { name: "Netlify edge function" },
      { name: "Compare with the deployed build", id: "compare" },
      { name: "Deploy to Netlify", if: `${deploy} && steps.compare.outputs.changed == 'true'` },
      { name: "Deploy skipped", if: "env.NETLIFY_AUTH_TOKEN == '' || env.NETLIFY_SITE_ID == ''" },
      { name: "Check the live site", if: `${deploy} && env.SITE_URL != ''` },
    ]);
  });

  it("installs, tests, builds, snapshots with history, deploys and checks: each step's commands, with the dump the data step chose", () => {
    const dump = '"${{ steps.dumps.outputs.dir }}"';
    const keep = '${KEEP_SNAPSHOTS:+--keep "$KEEP_SNAPSHOTS"}';
    // each step's npm and npx commands, up to the end of the command (`;`, a line's end, or the `)` closing a `$(`)
    const commands = steps.map((s) => [...(s.run ?? "").matchAll(/\b(?:npm|npx) [^;\n]*/g)].map((m) => m[0].replace(/\)\s*$/, "").trim()));
    expect(commands).toEqual([
      [],
      [],
      ["npm ci"],
      [
        'npm run --silent mesh-api -- fetch-dump "$DUMP_URL" --out "$RUNNER_TEMP/dump"',
        'npm run --silent mesh-api -- import api "$MIRROR_URL" --out "$RUNNER_TEMP/dump"',
      ],
      [`npm run build -- --data ${dump} $extra`],
      [
        `npm run mesh-api -- snapshot --data ${dump} --previous "$SITE_URL/snapshots/index.json" ${keep}`,
        `npm run mesh-api -- snapshot --data ${dump} ${keep}`,
      ],
      ["npm run --silent mesh-api -- host-config netlify-edge --write netlify.toml --force"],
      ["npm run --silent digest -- dist --exclude build.sha256 | cut -d' ' -f1"],
      ['npx --yes netlify-cli@27 deploy --prod --dir dist --no-build --message "publish $(date -u +%Y-%m-%dT%H:%MZ)"'],
      [],
      ['npm run mesh-api -- check "$SITE_URL"'],
    ]);
    // the data step writes the output the later steps read
    expect(steps[3].run).toContain('echo "dir=$dir" >> "$GITHUB_OUTPUT"');
  });

  it("calls only npm scripts that exist", () => {
    const called = [...runs.matchAll(/npm run (?:--silent )?([\w:-]+)/g)].map((m) => m[1]);
    expect(called.length).toBeGreaterThan(3);
    for (const s of called) expect(scripts).toContain(s);
  });

  it("documents every secret and variable it uses (README and docs/hosting.md)", () => {
    const used = [...text.matchAll(/\b(secrets|vars)\.([A-Z0-9_]+)/g)].map((m) => m[2]);
    expect(new Set(used)).toEqual(
      new Set(["MESH_DUMP_URL", "MESH_MIRROR_URL", "MESH_SITE_URL", "MESH_KEEP_SNAPSHOTS", "NETLIFY_AUTH_TOKEN", "NETLIFY_SITE_ID"]),
    );
    for (const name of used) expect(readme, name).toContain(`\`${name}\``);
  });

  it("deploys with the edge function and its netlify.toml, from where netlify-cli reads them, and checks Allow too", () => {
    const config = steps.find((s) => s.run?.includes("host-config netlify-edge"))!;
    const deploy = steps.find((s) => s.run?.includes("netlify-cli"))!.run!;
    // ./netlify.toml: netlify-cli reads the netlify.toml of the folder it runs in (never one in the
    // deployed folder); the function goes to netlify/edge-functions/ beside it, which that file names.
    // --force: the checkout holds the committed generic rules, which host-config otherwise keeps.
    expect(config.run).toContain("host-config netlify-edge --write netlify.toml --force");
    expect(edgeToml()).toContain(`edge_functions = "${EDGE_FUNCTIONS_DIR}"`);
    expect(EDGE_FUNCTION_FILE.startsWith(`${EDGE_FUNCTIONS_DIR}/`)).toBe(true);
    // the live check compares every header, Allow included
    expect(steps.find((s) => s.name === "Check the live site")!.run).not.toContain("--skip-header");
    expect(config.if).toBeUndefined();
    expect(deploy).toMatch(/netlify-cli@\d+ deploy --prod --dir dist --no-build/);
    expect(deploy).not.toMatch(/--cwd|--config|\bcd\b/);
    // nothing else writes it; the comparison only reads it (the rules are part of what is deployed)
    const writers = steps.filter((s) => s.run?.includes("netlify.toml") && s.run !== config.run);
    expect(writers.map((s) => s.name)).toEqual(["Compare with the deployed build"]);
    expect(writers[0].run).toContain(`cat netlify.toml ${EDGE_FUNCTION_FILE} | sha256sum`);
    expect(writers[0].run).not.toMatch(/> *netlify\.toml/);
  });

  it("deploys only a build that differs from the one the site serves: one digest of the files and the rules, published as /build.sha256", () => {
    const compare = steps.find((s) => s.id === "compare")!.run!;
    expect(compare).toContain('echo "$files $rules" > dist/build.sha256');
    expect(compare).toContain('curl -fsS "$SITE_URL/build.sha256"');
    expect(compare).toContain('echo "changed=false" >> "$GITHUB_OUTPUT"');
    const deploy = steps.find((s) => s.run?.includes("netlify-cli"))!;
    expect(deploy.if).toContain("steps.compare.outputs.changed == 'true'");
    // the comparison comes after everything that writes into dist/, the deploy after it
    const names = steps.map((s) => s.name);
    expect(names.indexOf("Compare with the deployed build")).toBe(names.indexOf("Deploy to Netlify") - 1);
  });

  it("leaves the tests to the push and pull request workflow, which runs exactly CI's script", () => {
    expect(runs).not.toMatch(/npm (run )?test/);
    const test = parse(readFileSync(path.join(ROOT, ".github/workflows/test.yml"), "utf8")) as typeof workflow;
    expect(Object.keys(test.on)).toEqual(["push", "pull_request"]);
    expect(Object.values(test.jobs).flatMap((j) => j.steps.map((s) => s.run).filter(Boolean))).toEqual(["bash .ci/run"]);
  });

  it("skips the deploy with a visible notice when the secrets are absent", () => {
    const deploy = steps.find((s) => s.run?.includes("netlify-cli"))!;
    expect(deploy.if).toContain("NETLIFY_AUTH_TOKEN != ''");
    expect(steps.some((s) => s.if?.includes("NETLIFY_AUTH_TOKEN == ''") && s.run?.includes("::notice::"))).toBe(true);
  });
});

// fetch-dump: test/fetch-dump.test.ts.

/** Runs a step's script with bash, `npm` replaced by a stub that logs its arguments and `curl` by one that fails. */
function runStep(name: string, env: Record<string, string>) {
  const step = steps.find((s) => s.name === name)!;
  const dir = tempDir();
  const bin = path.join(dir, "bin");
  mkdirSync(bin);
  writeFileSync(path.join(bin, "npm"), `#!/bin/sh\necho "$@" >> "${dir}/npm.log"\necho "${dir}/fetched"\n`, { mode: 0o755 });
  writeFileSync(path.join(bin, "curl"), "#!/bin/sh\nexit 22\n", { mode: 0o755 });
  const out = path.join(dir, "out");
  const r = spawnSync("bash", ["-e", "-c", step.run!.replace(/\$\{\{ steps\.dumps\.outputs\.dir \}\}/g, "dump")], {
    encoding: "utf8",
    env: {
      PATH: `${bin}:${process.env.PATH}`,
      GITHUB_OUTPUT: out,
      RUNNER_TEMP: dir,
      DUMP_URL: "",
      MIRROR_URL: "",
      DATA_SOURCE: "auto",
      ...env,
    },
  });
  const read = (f: string) => (existsSync(f) ? readFileSync(f, "utf8") : "");
  return { status: r.status, stdout: r.stdout, output: read(out), npm: read(path.join(dir, "npm.log")), dir };
}

describe("the workflow's snapshot step", () => {
  it("keeps MESH_KEEP_SNAPSHOTS snapshots when it is set, else snapshot's own default: the workflow states none", () => {
    expect(runStep("Snapshot, with the history of the live site", { KEEP_SNAPSHOTS: "7" }).npm).toBe(
      "run mesh-api -- snapshot --data dump --keep 7\n",
    );
    expect(runStep("Snapshot, with the history of the live site", { KEEP_SNAPSHOTS: "" }).npm).toBe(
      "run mesh-api -- snapshot --data dump\n",
    );
    expect(text).not.toMatch(/MESH_KEEP_SNAPSHOTS \|\|/);
  });
});

describe("the workflow's data step", () => {
  const dataStep = (env: Record<string, string>) => runStep("Choose the dumps", env);

  it("auto takes the archive, else the mirror, else data/", () => {
    expect(dataStep({}).output).toBe("dir=data\n");
    const mirror = dataStep({ MIRROR_URL: "https://api.example.org" });
    expect(mirror.npm).toMatch(/^run --silent mesh-api -- import api https:\/\/api\.example\.org --out .*\/dump\n$/);
    expect(mirror.output).toBe(`dir=${mirror.dir}/dump\n`);
    const both = dataStep({ DUMP_URL: "https://x.org/d.tar.gz", MIRROR_URL: "https://api.example.org" });
    expect(both.npm).toMatch(/fetch-dump https:\/\/x\.org\/d\.tar\.gz/);
    expect(both.output).toBe(`dir=${both.dir}/fetched\n`);
  });

  it("a manual choice is followed, and fails when its variable is missing", () => {
    expect(dataStep({ DATA_SOURCE: "committed", DUMP_URL: "https://x.org/d.tar.gz" }).output).toBe("dir=data\n");
    const missing = dataStep({ DATA_SOURCE: "mirror" });
    expect(missing.status).not.toBe(0);
    expect(missing.stdout).toContain("::error::data=mirror needs the variable MESH_MIRROR_URL");
    expect(missing.npm).toBe("");
  });

  it("offers the same choices as the step knows", () => {
    const input = (workflow.on.workflow_dispatch as { inputs: { data: { options: string[] } } }).inputs.data;
    expect(input.options).toEqual(["auto", "archive", "mirror", "committed"]);
  });
});

describe("command line wrappers", () => {
  it("netlify-config --write writes the generated rules to ./netlify.toml", async () => {
    const dir = tempDir();
    expect((await command(["netlify-config", "--write"], dir)).status).toBe(0);
    expect(readFileSync(path.join(dir, "netlify.toml"), "utf8")).toBe(readFileSync(path.join(ROOT, "netlify.toml"), "utf8"));
    // Its own earlier file it replaces; a netlify.toml of the user's it leaves alone (exit 2).
    expect((await command(["netlify-config", "--write"], dir)).status).toBe(0);
    writeFileSync(path.join(dir, "netlify.toml"), '[build]\n  command = "make site"\n');
    const r = await command(["netlify-config", "--write"], dir);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^mesh-api: refusing to write to netlify.toml: it was not generated by mesh-api/);
    expect(readFileSync(path.join(dir, "netlify.toml"), "utf8")).toBe('[build]\n  command = "make site"\n');
  });

  it("netlify-config --write replaces a netlify.toml it wrote, never the committed generic rules with a dump's (without --force), and decides before it prints", async () => {
    const dir = tempDir();
    const target = path.join(dir, "netlify.toml");
    const data = path.join(ROOT, "data");
    const deploy = netlifyRules((await validate({ data })).values!).config();
    // The repository's committed file, as in a checkout: the rules for one dump do not replace it.
    const committed = readFileSync(path.join(ROOT, "netlify.toml"), "utf8");
    writeFileSync(target, committed);
    const refused = await command(["netlify-config", "--data", data, "--write"], dir);
    expect(refused.status).toBe(2);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toMatch(
      /^mesh-api: refusing to write to netlify\.toml: it holds the generic rules a repository commits .*--force.*\n$/,
    );
    expect(readFileSync(target, "utf8")).toBe(committed);
    // The generic rules may replace the generic rules (how the committed file is regenerated).
    expect((await command(["netlify-config", "--write"], dir)).status).toBe(0);
    expect(readFileSync(target, "utf8")).toBe(committed);
    // --force replaces them; a deploy's file is netlify-config's own, replaced by either kind.
    const forced = await command(["netlify-config", "--data", data, "--write", "--force", "-q"], dir);
    expect(forced).toMatchObject({ status: 0, stdout: "", stderr: "" });
    expect(readFileSync(target, "utf8")).toBe(deploy);
    expect((await command(["netlify-config", "--data", data, "--write", "-q"], dir)).status).toBe(0);
    expect(readFileSync(target, "utf8")).toBe(deploy);
    expect((await command(["netlify-config", "--write"], dir)).status).toBe(0);
    expect(readFileSync(target, "utf8")).toBe(committed);
    // A file of the user's: refused before the dump is read, so nothing but the refusal is printed.
    writeFileSync(target, "# Generated by hand\n[build]\n");
    const foreign = await command(["netlify-config", "--data", data, "--write"], dir);
    expect(foreign.status).toBe(2);
    expect(foreign.stderr).toMatch(/^mesh-api: refusing to write to netlify\.toml: it was not generated by mesh-api; .*--force.*\n$/);
    expect(foreign.stdout).toBe("");
    expect(readFileSync(target, "utf8")).toBe("# Generated by hand\n[build]\n");
    expect(readdirSync(dir)).toEqual(["netlify.toml"]);
  });

  it("netlify-config --data writes the deploy's rules for that dump: the generic ones with the literal rules in place", async () => {
    const dir = tempDir();
    const r = await command(["netlify-config", "--data", path.join(ROOT, "data"), "--write"], dir);
    expect(r.status, r.stderr).toBe(0);
    const written = readFileSync(path.join(dir, "netlify.toml"), "utf8");
    expect(written).toBe(netlifyRules((await validate({ data: path.join(ROOT, "data") })).values!).config());
    expect(written).toContain('query = { wifi_ssid = "Café Meshtest" }');
    expect(r.stderr).toMatch(/netlify: [\d,]+ literal rules in netlify\.toml, [\d,]+ of them also in the build's _redirects\n/);
    // An invalid dump: exit 1, nothing written.
    const bad = tempDir();
    writeFileSync(path.join(bad, "network.json"), "{");
    const empty = tempDir();
    expect((await command(["netlify-config", "--data", bad, "--write"], empty)).status).toBe(1);
    expect(existsSync(path.join(empty, "netlify.toml"))).toBe(false);
  });

  it("MESH_API_WRITE_CONCURRENCY=1 (one twin at a time) and MESH_API_WRITER_THREAD_FROM=0 (every file through the writing thread) build the same tree as the default", async () => {
    const data = tempDir();
    await writeSynthDump(data, synthesize({ aps: 30, seed: 4 }));
    const [one, threaded, many] = [path.join(tempDir(), "dist"), path.join(tempDir(), "dist"), path.join(tempDir(), "dist")];
    expect((await command(["build", "--data", data, "--out", one, "-q"], ROOT, { MESH_API_WRITE_CONCURRENCY: "1" })).status).toBe(0);
    expect((await command(["build", "--data", data, "--out", threaded, "-q"], ROOT, { MESH_API_WRITER_THREAD_FROM: "0" })).status).toBe(0);
    expect((await command(["build", "--data", data, "--out", many, "-q"])).status).toBe(0);
    expect(treeDigest(one)).toEqual(treeDigest(many));
    expect(treeDigest(threaded)).toEqual(treeDigest(many));
  });
});
