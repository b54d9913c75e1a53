import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { cli, ROOT, tempDir, treeDigest } from "./support/tree.ts";
import { synthesize, writeSynthDump } from "../src/gen/synth.ts";

/** The nightly workflow parses, calls only scripts that exist, and every secret and variable it uses is documented. */

const text = readFileSync(path.join(ROOT, ".github/workflows/nightly.yml"), "utf8");
const workflow = parse(text) as {
  on: Record<string, unknown>;
  jobs: Record<string, { steps: { run?: string; uses?: string; if?: string; name?: string }[] }>;
};
const steps = Object.values(workflow.jobs).flatMap((j) => j.steps);
const runs = steps.map((s) => s.run ?? "").join("\n");
// The README links the set-up steps, which live in docs/hosting.md.
const readme = readFileSync(path.join(ROOT, "README.md"), "utf8") + readFileSync(path.join(ROOT, "docs/hosting.md"), "utf8");
const scripts = Object.keys(
  (JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts,
);

describe("nightly workflow", () => {
  it("runs on a schedule and on manual dispatch", () => {
    expect(workflow.on).toHaveProperty("schedule");
    expect(workflow.on).toHaveProperty("workflow_dispatch");
    expect((workflow.on.schedule as { cron: string }[])[0].cron).toMatch(/^\S+ \S+ \S+ \S+ \S+$/);
  });

  it("installs, tests, builds, snapshots with history, deploys and checks, in that order", () => {
    const order = ["npm ci", "npm test", "npm run build", "snapshot --data", "--previous", "netlify-cli", "mesh-api -- check"];
    const positions = order.map((s) => runs.indexOf(s));
    expect(
      positions.every((p) => p >= 0),
      JSON.stringify(positions),
    ).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(steps.some((s) => s.uses?.startsWith("actions/setup-node") && JSON.stringify(s).includes('"cache":"npm"'))).toBe(true);
  });

  it("calls only npm scripts that exist", () => {
    const called = [...runs.matchAll(/npm run (?:--silent )?([\w:-]+)/g)].map((m) => m[1]);
    expect(called.length).toBeGreaterThan(3);
    for (const s of called) expect(scripts).toContain(s);
  });

  it("documents every secret and variable it uses (README and docs/hosting.md)", () => {
    const used = [...text.matchAll(/\b(secrets|vars)\.([A-Z0-9_]+)/g)].map((m) => m[2]);
    expect(new Set(used)).toEqual(
      new Set(["MESH_DUMP_URL", "MESH_SITE_URL", "MESH_KEEP_SNAPSHOTS", "NETLIFY_AUTH_TOKEN", "NETLIFY_SITE_ID"]),
    );
    for (const name of used) expect(readme, name).toContain(`\`${name}\``);
  });

  it("skips the deploy with a visible notice when the secrets are absent", () => {
    const deploy = steps.find((s) => s.run?.includes("netlify-cli"))!;
    expect(deploy.if).toContain("NETLIFY_AUTH_TOKEN != ''");
    expect(steps.some((s) => s.if?.includes("NETLIFY_AUTH_TOKEN == ''") && s.run?.includes("::notice::"))).toBe(true);
  });
});

// fetch-dump: test/fetch-dump.test.ts.

describe("command line wrappers", () => {
  it("netlify-config --write writes the generated rules to ./netlify.toml", () => {
    const dir = tempDir();
    expect(cli(["netlify-config", "--write"], dir).status).toBe(0);
    expect(readFileSync(path.join(dir, "netlify.toml"), "utf8")).toBe(readFileSync(path.join(ROOT, "netlify.toml"), "utf8"));
  });

  it("MESH_API_WRITE_CONCURRENCY=1 (one file at a time) builds the same tree as the default", async () => {
    const data = tempDir();
    await writeSynthDump(data, synthesize({ aps: 30, seed: 4 }));
    const [one, many] = [path.join(tempDir(), "dist"), path.join(tempDir(), "dist")];
    expect(cli(["build", "--data", data, "--out", one, "-q"], ROOT, { MESH_API_WRITE_CONCURRENCY: "1" }).status).toBe(0);
    expect(cli(["build", "--data", data, "--out", many, "-q"]).status).toBe(0);
    expect(treeDigest(one)).toEqual(treeDigest(many));
  });
});
