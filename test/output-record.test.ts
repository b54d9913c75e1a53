import { mkdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { BUILDS } from "./fixtures/extra-output.ts";
import { synthesize } from "../src/gen/synth.ts";
import { rawSources } from "../src/gen/raw.ts";
import { tempDir } from "./support/tree.ts";
import { PUBLIC_SAMPLE } from "./support/expected.ts";

/**
 * Issue 43, item 1: an output is one record. A record that is no part of mesh-api (test/fixtures/
 * extra-output.ts: an option, a check of its settings, a value carried from the build it replaces) is
 * added to the registry here, and nothing else: `build`, `cycle` and `help` take its option, the cycle
 * records it among its settings, the OpenAPI document describes it, the API root names it, the
 * preview answers it, and every host routes it as it routes the outputs of mesh-api.
 */
vi.mock("../src/core/outputs/index.ts", async (importOriginal) => {
  const real = await importOriginal<typeof import("../src/core/outputs/index.ts")>();
  return { ...real, OUTPUTS: [...real.OUTPUTS, BUILDS] };
});

const { createProgram } = await import("../src/cli/program.ts");
const { validate } = await import("../src/pipeline.ts");
const { HOSTS } = await import("../src/hosts/index.ts");
const { openApiDocument } = await import("../src/core/documents/openapi.ts");
const { DEFAULT_SETTINGS } = await import("../src/core/settings.ts");
const { startPreview } = await import("../src/serve/server.ts");

const DUMP = `${PUBLIC_SAMPLE}dump`;

/** The command line in this process (so that it sees the registry above); what it printed on stdout. */
async function run(...args: string[]): Promise<string> {
  let out = "";
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string) => ((out += chunk), true)) as typeof process.stdout.write;
  try {
    await createProgram().parseAsync(["node", "mesh-api", ...args]);
  } finally {
    process.stdout.write = write;
  }
  return out;
}

const count = (dir: string) => JSON.parse(readFileSync(path.join(dir, "data/builds.json"), "utf8")) as { builds: number };

describe("an output added as one record (issue 43)", () => {
  it("help of build and cycle lists its option", () => {
    const program = createProgram();
    for (const name of ["build", "cycle"]) {
      const help = program.commands.find((c) => c.name() === name)!.helpInformation();
      expect(help).toContain("--builds-start <n>");
      expect(help).toContain("the count of a first build");
    }
  });

  it("build takes its option, checks it before any work, and carries its value from the build it replaces", async () => {
    const out = path.join(tempDir(), "dist");
    await run("build", "-q", "--data", DUMP, "--out", out, "--builds-start", "5");
    expect(count(out)).toEqual({ builds: 5 });
    await run("build", "-q", "--data", DUMP, "--out", out);
    expect(count(out)).toEqual({ builds: 6 });
    // its own check, before any work: the output stays as it was
    await expect(run("build", "-q", "--data", DUMP, "--out", out, "--builds-start", "2000")).rejects.toThrow(/at most 1000/);
    expect(count(out)).toEqual({ builds: 6 });
    // the commander's parser its value kind names: a count
    await expect(run("build", "-q", "--data", DUMP, "--out", out, "--builds-start", "x")).rejects.toThrow();

    // the API root and the preview answer it
    const preview = await startPreview({ dir: out, port: 0 });
    try {
      const root = (await (await fetch(`${preview.url}/api/v1/`)).json()) as Record<string, unknown>;
      expect(root.builds).toBe("/data/builds.json");
      const r = await fetch(`${preview.url}/data/builds.json?status=online`);
      expect(r.status).toBe(200);
      expect(await r.json()).toEqual({ builds: 6 });
      const options = await fetch(`${preview.url}/data/builds.json`, { method: "OPTIONS" });
      expect(((await options.json()) as { name: string }).name).toBe("Build Count");
    } finally {
      await preview.close();
    }
  });

  it("cycle takes its option, records it among the state's settings, and carries the value from run to run", async () => {
    const dir = tempDir();
    const network = synthesize({ aps: 20, seed: 43 });
    const raw = rawSources(network, 0);
    mkdirSync(path.join(dir, "src"));
    writeFileSync(path.join(dir, "src/olsr.txt"), raw.olsr);
    writeFileSync(path.join(dir, "src/wiki.html"), raw.wiki);
    const state = path.join(dir, "state");
    const serve = path.join(dir, "www");
    const cycle = (at: string, ...more: string[]) =>
      run(
        "cycle",
        "-q",
        "--state",
        state,
        "--serve",
        serve,
        "--olsr",
        path.join(dir, "src/olsr.txt"),
        "--wiki",
        path.join(dir, "src/wiki.html"),
        "--at",
        at,
        ...more,
      );
    await cycle("2026-11-20T10:00:00Z", "--builds-start", "3");
    expect(count(path.resolve(path.dirname(serve), readlinkSync(serve)))).toEqual({ builds: 3 });
    await cycle("2026-11-20T10:06:00Z", "--builds-start", "3");
    expect(count(serve)).toEqual({ builds: 4 });
    const record = JSON.parse(readFileSync(path.join(state, "cycle.json"), "utf8")) as { settings: Record<string, unknown> };
    expect(record.settings["--builds-start"]).toBe("3");
    // another value is another setting: refused without --reconfigure, naming the option
    await expect(cycle("2026-11-20T10:12:00Z", "--builds-start", "9")).rejects.toThrow(/--builds-start/);
    expect(count(serve)).toEqual({ builds: 4 });
  });

  it("the OpenAPI document describes it and every host routes it as it routes meshviewer's file", async () => {
    const doc = JSON.parse(openApiDocument(DEFAULT_SETTINGS)) as {
      paths: Record<string, { get: { summary: string } }>;
      components: { schemas: Record<string, unknown> };
    };
    expect(doc.paths["/data/builds.json"].get.summary).toBe("How many builds this site has had");
    expect(doc.components.schemas.BuildCount).toBeDefined();

    const { values } = await validate({ data: DUMP });
    const mentions = (text: string, name: string) => new RegExp(name.replace(/\./g, "\\\\?\\.")).test(text);
    let routed = 0;
    for (const host of HOSTS) {
      const config = host.config(values);
      expect(mentions(config, "builds.json"), host.name).toBe(mentions(config, "meshviewer.json"));
      if (mentions(config, "builds.json")) routed++;
    }
    // the servers route the outputs (Netlify serves them as files)
    expect(routed).toBeGreaterThanOrEqual(3);
  });
});
