import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { fetchDump } from "../src/io/fetch.ts";
import { cli, cliAsync, ROOT, tempDir, treeDigest } from "./support/tree.ts";
import { synthesize, writeSynthDump } from "../src/gen/synth.ts";
import { createHash } from "node:crypto";

/** The nightly workflow parses, calls only scripts that exist, and every secret and variable it uses is documented. */

const text = readFileSync(path.join(ROOT, ".github/workflows/nightly.yml"), "utf8");
const workflow = parse(text) as { on: Record<string, unknown>; jobs: Record<string, { steps: { run?: string; uses?: string; if?: string; name?: string }[] }> };
const steps = Object.values(workflow.jobs).flatMap((j) => j.steps);
const runs = steps.map((s) => s.run ?? "").join("\n");
const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
const scripts = Object.keys((JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts);

describe("nightly workflow", () => {
  it("runs on a schedule and on manual dispatch", () => {
    expect(workflow.on).toHaveProperty("schedule");
    expect(workflow.on).toHaveProperty("workflow_dispatch");
    expect((workflow.on.schedule as { cron: string }[])[0].cron).toMatch(/^\S+ \S+ \S+ \S+ \S+$/);
  });

  it("installs, tests, builds, snapshots with history, deploys and checks, in that order", () => {
    const order = ["npm ci", "npm test", "npm run build", "snapshot --data", "--previous", "netlify-cli", "mesh-api -- check"];
    const positions = order.map((s) => runs.indexOf(s));
    expect(positions.every((p) => p >= 0), JSON.stringify(positions)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(steps.some((s) => s.uses?.startsWith("actions/setup-node") && JSON.stringify(s).includes('"cache":"npm"'))).toBe(true);
  });

  it("calls only npm scripts that exist", () => {
    const called = [...runs.matchAll(/npm run (?:--silent )?([\w:-]+)/g)].map((m) => m[1]);
    expect(called.length).toBeGreaterThan(3);
    for (const s of called) expect(scripts).toContain(s);
  });

  it("documents every secret and variable it uses in the README", () => {
    const used = [...text.matchAll(/\b(secrets|vars)\.([A-Z0-9_]+)/g)].map((m) => m[2]);
    expect(new Set(used)).toEqual(new Set(["MESH_DUMP_URL", "MESH_SITE_URL", "MESH_KEEP_SNAPSHOTS", "NETLIFY_AUTH_TOKEN", "NETLIFY_SITE_ID"]));
    for (const name of used) expect(readme, name).toContain(`\`${name}\``);
  });

  it("skips the deploy with a visible notice when the secrets are absent", () => {
    const deploy = steps.find((s) => s.run?.includes("netlify-cli"))!;
    expect(deploy.if).toContain("NETLIFY_AUTH_TOKEN != ''");
    expect(steps.some((s) => s.if?.includes("NETLIFY_AUTH_TOKEN == ''") && s.run?.includes("::notice::"))).toBe(true);
  });
});

describe("fetch-dump", () => {
  async function serve(files: Record<string, Buffer>) {
    const server = createServer((req, res) => {
      const body = files[req.url ?? ""];
      res.statusCode = body ? 200 : 404;
      res.end(body ?? "");
    });
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
  }

  it("downloads, verifies against .sha256 beside it, and unpacks to the dump folder", async () => {
    const src = tempDir();
    await writeSynthDump(path.join(src, "nightly"), synthesize({ aps: 5, seed: 1 }));
    const archive = path.join(tempDir(), "dump.tar.gz");
    execFileSync("tar", ["-czf", archive, "-C", src, "nightly"]);
    const bytes = readFileSync(archive);
    const sha = createHash("sha256").update(bytes).digest("hex");
    const site = await serve({ "/d.tar.gz": bytes, "/d.tar.gz.sha256": Buffer.from(`${sha}  d.tar.gz\n`), "/bad.tar.gz": bytes, "/bad.tar.gz.sha256": Buffer.from("0".repeat(64)) });
    try {
      const out = tempDir();
      const dir = await fetchDump(`${site.url}/d.tar.gz`, out);
      expect(dir).toBe(path.join(out, "nightly"));
      expect(readFileSync(path.join(dir, "network.json"), "utf8")).toContain("mesh-topology-dump/1");
      await expect(fetchDump(`${site.url}/bad.tar.gz`, tempDir())).rejects.toThrow("does not match");
      await expect(fetchDump(`${site.url}/missing.tar.gz`, tempDir())).rejects.toThrow("HTTP 404");
      // The command prints the dump folder for the next step, and fails with a message and exit 1.
      const cliOut = tempDir();
      const ok = await cliAsync(["fetch-dump", `${site.url}/d.tar.gz`, "--out", cliOut, "-q"]);
      expect(ok).toMatchObject({ status: 0, stdout: `${path.join(cliOut, "nightly")}\n`, stderr: "" });
      const bad = await cliAsync(["fetch-dump", `${site.url}/bad.tar.gz`, "--out", tempDir()]);
      expect(bad.status).toBe(1);
      expect(bad.stderr).toMatch(/^mesh-api: .*does not match/m);
    } finally {
      site.close();
    }
  });

  it("refuses archives with paths that leave the folder", async () => {
    const src = tempDir();
    const archive = path.join(tempDir(), "evil.tar.gz");
    execFileSync("sh", ["-c", `mkdir -p ${src}/a && echo x > ${src}/x && tar -czf ${archive} -C ${src}/a --absolute-names ../x`]);
    const site = await serve({ "/e.tar.gz": readFileSync(archive) });
    try {
      await expect(fetchDump(`${site.url}/e.tar.gz`, tempDir())).rejects.toThrow("unsafe path");
    } finally {
      site.close();
    }
  });
});

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
