import { spawnSync } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import fg from "fast-glob";
import { describe, expect, it } from "vitest";
import { build, startPreview } from "../src/index.ts";
import { LockedError, lockOutput } from "../src/io/write/lock.ts";
import { command, tempDir } from "./support/tree.ts";
import { isTwin } from "../src/core/routes.ts";

/**
 * The operator's rough edges of issue 28, each as the operator met it: the command as typed, what it
 * printed or did, and what it does now.
 */

const DATA = path.join(new URL("..", import.meta.url).pathname, "data");

describe("build's snapshot options and counts (item 4)", () => {
  it("refuses --keep or --previous without --snapshot, before any work", async () => {
    const out = path.join(tempDir(), "dist");
    for (const extra of [
      ["--keep", "3"],
      ["--previous", "https://example.org/snapshots/index.json"],
    ]) {
      const r = await command(["build", "--data", DATA, "--out", out, ...extra]);
      expect([r.status, r.stderr]).toEqual([2, `mesh-api: ${extra[0]} is for --snapshot: add --snapshot, or leave it out\n`]);
      expect(existsSync(out)).toBe(false);
    }
  });

  it("says what --snapshot wrote, as the snapshot command does, and counts the --extra files among the files", async () => {
    const work = tempDir();
    const extra = path.join(work, "extra");
    mkdirSync(path.join(extra, "about"), { recursive: true });
    writeFileSync(path.join(extra, "robots.txt"), "User-agent: *\n");
    writeFileSync(path.join(extra, "about", "index.html"), "<p>us</p>\n");
    const out = path.join(work, "dist");
    const r = await command(["build", "--data", DATA, "--out", out, "--snapshot", "--extra", extra]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`\\nsnapshot \\d{4}-\\d{2}-\\d{2} of ${DATA}: .+; 1 snapshot kept in ${out}/snapshots\\n`));
    // the site's files: the API's, the pages, the operator's; not the snapshots, nor the marker and record of the build, nor
    // the gzip twins of long answers (another encoding of a file counted)
    const files = fg
      .sync("**", {
        cwd: out,
        dot: true,
        onlyFiles: true,
        ignore: ["snapshots/**", ".mesh-api-output", ".mesh-api-build.json"],
      })
      .filter((f) => !isTwin(f)).length;
    expect(r.stderr).toContain(`built ${out}: ${files.toLocaleString("en-US")} files`);
  });
});

describe("build's hint for Netlify works where it is printed (item 1)", () => {
  const ROOT = new URL("..", import.meta.url).pathname;
  for (const [how, env, prefix] of [
    ["in a checkout, run by npm", { npm_lifecycle_event: "build" }, "npm run mesh-api --"],
    ["installed, run as mesh-api", { npm_lifecycle_event: "" }, "mesh-api"],
  ] as const)
    it(how, async () => {
      // A folder like the checkout: its netlify.toml holds the committed generic rules; a dump path with a space.
      const work = tempDir();
      copyFileSync(path.join(ROOT, "netlify.toml"), path.join(work, "netlify.toml"));
      const data = path.join(work, "my dump");
      cpSync(DATA, data, { recursive: true });
      const env2: Record<string, string> = { ...env };
      const r = await command(["build", "--data", data, "--out", path.join(work, "dist")], work, env2);
      expect(r.status, r.stderr).toBe(0);
      const hint = /deploy with the netlify\.toml of `([^`]+)`/.exec(r.stderr)![1];
      expect(hint.startsWith(`${prefix} netlify-config `)).toBe(true);
      // The command as a shell would split it, run in the same folder.
      const words = spawnSync("/bin/sh", ["-c", `for w in ${hint.slice(prefix.length)}; do printf '%s\\0' "$w"; done`], {
        encoding: "utf8",
      })
        .stdout.split("\0")
        .slice(0, -1);
      const ran = await command(words, work);
      expect([ran.status, ran.stderr]).toEqual([0, expect.any(String)]);
      expect(readFileSync(path.join(work, "netlify.toml"), "utf8")).not.toBe(readFileSync(path.join(ROOT, "netlify.toml"), "utf8"));
    });
});

describe("the snapshots link before a first snapshot (item 5)", () => {
  it("answers /snapshots/ with a page that says none is published yet; the snapshot command replaces it", async () => {
    const out = path.join(tempDir(), "dist");
    await build({ data: DATA, out });
    const preview = await startPreview({ dir: out, port: 0 });
    try {
      expect(await (await fetch(`${preview.url}/`)).text()).toContain('<a href="/snapshots/">');
      const r = await fetch(`${preview.url}/snapshots/`);
      expect([r.status, r.headers.get("content-type")]).toEqual([200, expect.stringMatching(/^text\/html/)]);
      expect(await r.text()).toContain("publishes no snapshots yet");
    } finally {
      await preview.close();
    }
    expect((await command(["snapshot", "--dist", out, "--data", DATA, "-q"])).status).toBe(0);
    expect(readFileSync(path.join(out, "snapshots", "index.html"), "utf8")).toContain("SHA256SUMS");
  });
});

describe("preview of a folder that holds no build (item 6)", () => {
  it("is refused with the folder named, exit 2", async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, "index.html"), "<p>mine</p>");
    const r = await command(["preview", "--dir", dir, "--port", "0"]);
    expect([r.status, r.stderr]).toEqual([
      2,
      `mesh-api: nothing to serve: ${dir} holds no build of mesh-api (no .mesh-api-output file in it); run build --out ${dir} first, or name the build's folder with --dir\n`,
    ]);
  });
});

describe("exit status 1 of check (item 9)", () => {
  it("is documented in the README as what check returns for a site that differs", () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8").replace(/\s+/g, " ");
    expect(readme).toMatch(/`1` invalid input \([^)]*\) or, for `check`, a site that answers differently from the build/);
    expect(readFileSync(new URL("../src/cli/check.ts", import.meta.url), "utf8")).toMatch(
      /exit 0 when every route came back identical, 1 when one did not/,
    );
  });
});

describe("one lock per folder, whatever its name (item 11)", () => {
  it("build and snapshot through a symbolic link and a relative path lock the same file", () => {
    const work = tempDir();
    const dist = path.join(work, "dist");
    mkdirSync(dist);
    symlinkSync(dist, path.join(work, "www"));
    const held = lockOutput(dist, "dist");
    try {
      expect(() => lockOutput(path.join(work, "www"), "www")).toThrow(LockedError);
      expect(() => lockOutput(path.join(work, "sub", "..", "dist"), "dist")).toThrow(LockedError);
    } finally {
      held.release();
    }
    lockOutput(path.join(work, "www"), "www").release();
  });
});

describe("the output's lock before any work, also where its parent folder is still to be made (item 11)", () => {
  it("holds the lock while the dump is read, and a failed build leaves none of the folders it made", async () => {
    const work = tempDir();
    const out = path.join(work, "new", "deeper", "dist");
    const lock = path.join(work, "new", "deeper", ".dist.lock");
    let lockedWhileReading: boolean | undefined;
    await build({
      data: DATA,
      out,
      progress: (p) => {
        if (p.stage === "reading") lockedWhileReading ??= existsSync(lock);
      },
    });
    expect(lockedWhileReading).toBe(true);
    expect(existsSync(lock)).toBe(false);

    const bad = tempDir();
    writeFileSync(path.join(bad, "network.json"), "{");
    await expect(build({ data: bad, out: path.join(work, "other", "deeper", "dist") })).rejects.toThrow();
    expect(existsSync(path.join(work, "other"))).toBe(false);
  });
});

describe("every problem located, consequences marked (item 3)", () => {
  const dump = (aps: string[], links: unknown[]) => {
    const dir = tempDir();
    mkdirSync(path.join(dir, "accesspoints"));
    mkdirSync(path.join(dir, "links"));
    writeFileSync(path.join(dir, "accesspoints", "a.ndjson"), aps.join("\n") + "\n");
    writeFileSync(path.join(dir, "links", "l.json"), JSON.stringify(links));
    return dir;
  };
  const ap = (n: number) =>
    JSON.stringify({
      main_ip: `10.0.0.${n}`,
      interfaces: [{ id: n, addresses: [{ id: n, address: `10.0.0.${n}`, netmask_prefixlen: 16 }] }],
    });
  const link = (id: number, a: number, b: number, quality = 0.5) => ({
    id,
    endpoints: [
      { interface: a, quality },
      { interface: b, quality },
    ],
  });

  it("a broken NDJSON line: its file line and the column in it; the links to it marked as its consequences", async () => {
    const r = await command([
      "validate",
      "--data",
      dump([ap(1), ap(2), ap(3), ap(4), '{"main_ip":"10.0.0.5",,}'], [link(1, 1, 2), link(2, 5, 1)]),
    ]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("accesspoints/a.ndjson:5 $: malformed JSON: Expected double-quoted property name at column 23\n");
    expect(r.stderr).toContain(
      "links/l.json [1] $.endpoints[0].interface: no interface has the id 5 (perhaps a consequence of the unreadable access point record at accesspoints/a.ndjson:5)\n",
    );
  });

  it("a refused access point record: the links naming its interfaces say so", async () => {
    const bad = JSON.stringify({ main_ip: "10.0.0.9", owner: 7, interfaces: [{ id: 9, addresses: [] }] });
    const r = await command(["validate", "--data", dump([ap(1), bad], [link(1, 9, 1)])]);
    expect(r.stderr).toContain(
      "links/l.json [0] $.endpoints[0].interface: no interface has the id 9 (a consequence of the error in the access point record at accesspoints/a.ndjson:2)\n",
    );
  });

  it("a link with an error still counts for the duplicate ids", async () => {
    const r = await command(["validate", "--data", dump([ap(1), ap(2)], [link(3, 1, 2, 1.5), link(3, 2, 1)])]);
    expect(r.stderr).toContain("links/l.json [0] $.endpoints[0].quality: quality must be between 0 and 1\n");
    expect(r.stderr).toContain("links/l.json [1] $.id: duplicate link id 3 (first used at links/l.json [0])\n");
  });
});
