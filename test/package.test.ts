import { execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, tempDir, TSC } from "./support/tree.ts";

/**
 * The package as a user gets it: compiled to JavaScript, packed, installed into an empty folder with
 * production dependencies only (no tsx, no TypeScript), and run. Everything happens in temporary
 * folders: the compile goes to a staging copy, never into the repository.
 */
const npm = (args: string[], cwd: string) =>
  execFileSync("npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });

describe("the installable package", () => {
  it("packs, installs without dev dependencies, and runs --version, validate, build and preview", async () => {
    const work = tempDir();
    const stage = path.join(work, "stage");
    mkdirSync(stage);
    const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string; files: string[] };
    // Everything the package lists but the compiled lib/, which is made below.
    for (const f of ["package.json", ...pkg.files.filter((f) => f !== "lib")])
      cpSync(path.join(ROOT, f), path.join(stage, f), { recursive: true });
    execFileSync(process.execPath, [TSC, "-p", path.join(ROOT, "tsconfig.build.json"), "--outDir", path.join(stage, "lib")], { cwd: ROOT });
    const packed = JSON.parse(npm(["pack", "--ignore-scripts", "--json", "--pack-destination", work], stage)) as {
      filename: string;
      files: { path: string }[];
    }[];
    const names = packed[0].files.map((f) => f.path);
    expect(names).toContain("lib/cli/main.js");
    expect(names).toContain("lib/index.d.ts");
    expect(names).toContain("assets/map/map.js");
    expect(names.some((n) => n.startsWith("src/") || n.startsWith("test/") || (n.endsWith(".ts") && !n.endsWith(".d.ts")))).toBe(false);

    const app = path.join(work, "app");
    mkdirSync(app);
    writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "app", version: "1.0.0", private: true }));
    npm(["install", "--omit=dev", "--prefer-offline", path.join(work, packed[0].filename)], app);
    expect(existsSync(path.join(app, "node_modules", "tsx"))).toBe(false);
    expect(existsSync(path.join(app, "node_modules", "typescript"))).toBe(false);

    const bin = path.join(app, "node_modules", ".bin", "mesh-api");
    const run = (args: string[]) => execFileSync(bin, args, { cwd: app, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    expect(run(["--version"]).trim()).toBe(pkg.version);
    cpSync(path.join(ROOT, "data"), path.join(app, "data"), { recursive: true });
    run(["validate", "--data", "data", "-q"]);
    run(["build", "--data", "data", "--out", "dist", "-q"]);
    expect(existsSync(path.join(app, "dist", "api", "v1", "link", "index.json"))).toBe(true);
    // The map's files come from the package (its script) and its leaflet dependency.
    expect(readFileSync(path.join(app, "dist", "map", "map.js")).equals(readFileSync(path.join(ROOT, "assets", "map", "map.js")))).toBe(
      true,
    );
    expect(existsSync(path.join(app, "dist", "map", "leaflet", "leaflet.js"))).toBe(true);

    // The library entry point, as an importer sees it.
    const lib = execFileSync(
      process.execPath,
      ["--input-type=module", "-e", "const m = await import('mesh-static-api'); console.log(typeof m.build, typeof m.startPreview)"],
      { cwd: app, encoding: "utf8" },
    );
    expect(lib.trim()).toBe("function function");

    const preview = spawn(bin, ["preview", "--dir", "dist", "--port", "0", "-q"], { cwd: app });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = "";
        preview.stdout.on("data", (c) => {
          out += c;
          const m = /(http:\/\/[^\s/]+)/.exec(out);
          if (m) resolve(m[1]);
        });
        preview.once("exit", (code) => reject(new Error(`preview exited with ${code}`)));
      });
      const res = await fetch(`${url}/api/v1/link/`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/json");
      expect(Buffer.from(await res.arrayBuffer()).equals(readFileSync(path.join(app, "dist", "api", "v1", "link", "index.json")))).toBe(
        true,
      );
    } finally {
      preview.kill();
    }
  }, 180_000);

  it("the tarball npm pack writes in the repository is ignored by git (.gitignore)", () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { name: string; version: string };
    // .gitignore's patterns without a slash match a file name anywhere; * stands for any characters but "/".
    const patterns = readFileSync(path.join(ROOT, ".gitignore"), "utf8")
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l !== "" && !l.startsWith("#") && !l.startsWith("!") && !l.replace(/\/$/, "").includes("/"));
    const matches = (pattern: string, name: string) =>
      new RegExp(
        `^${pattern
          .replace(/[.+^${}()|[\]\\]/g, "\\$&")
          .replace(/\*/g, "[^/]*")
          .replace(/\?/g, "[^/]")}$`,
      ).test(name);
    const tarball = `${pkg.name}-${pkg.version}.tgz`;
    expect(patterns.filter((p) => matches(p, tarball))).not.toEqual([]);
  });
});
