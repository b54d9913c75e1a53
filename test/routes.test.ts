import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import fg from "fast-glob";
import { beforeAll, describe, expect, it } from "vitest";
import {
  FILES,
  fileFor,
  hasTwin,
  isTwin,
  parseRequest,
  requestsForFile,
  resolve,
  RULES,
  rulesFor,
  SNAPSHOT_DIR,
  SNAPSHOT_FILES,
  templateOf,
  twinnedFile,
  twinOf,
  type FileName,
} from "../src/core/routes.ts";
import { loadRouting } from "../src/io/read/aliases.ts";
import { build } from "../src/index.ts";
import { PUBLIC_SAMPLE } from "./support/expected.ts";
import { FREIFUNK_API_SETTINGS } from "./support/site.ts";
import { ROOT, tempDir } from "./support/tree.ts";

/**
 * The route table is the one source of output paths: every file a build writes is an instance of one
 * of its templates (no orphan), every template and every rule with a target is met by some file of
 * the public sample (none unreachable), and every file with a request is answered by that request.
 */
let out: string;
let files: string[];
/** a build whose lists answer the online items without `status`: the files and rules only it has */
let online: { out: string; files: string[] };

beforeAll(async () => {
  out = path.join(tempDir(), "dist");
  // recyclable (the digests file, as cycle's builds are) and with the operator's Freifunk API file: every file there is
  await build({ data: `${PUBLIC_SAMPLE}dump`, out, snapshot: {}, settings: FREIFUNK_API_SETTINGS, recycle: {} });
  files = (await fg("**", { cwd: out, dot: true, onlyFiles: true })).sort().map((f) => `/${f}`);
  const onlineOut = path.join(tempDir(), "dist");
  await build({ data: `${PUBLIC_SAMPLE}dump`, out: onlineOut, settings: { defaultStatus: "online", ...FREIFUNK_API_SETTINGS } });
  online = { out: onlineOut, files: (await fg("**", { cwd: onlineOut, dot: true, onlyFiles: true })).sort().map((f) => `/${f}`) };
}, 120_000);

describe("the route table and the files of a build", () => {
  it("knows every file the build wrote (no orphans)", () => {
    const orphans = files.filter((f) => {
      if (f.startsWith(`/${SNAPSHOT_DIR}/`)) {
        const name = f.slice(SNAPSHOT_DIR.length + 2);
        return !(
          name === SNAPSHOT_FILES.index ||
          name === SNAPSHOT_FILES.listing ||
          name === SNAPSHOT_FILES.sums ||
          SNAPSHOT_FILES.archive.test(name)
        );
      }
      // a gzip twin stands beside a file the table names, long enough to have one, and holds its bytes
      if (isTwin(f)) {
        const answer = twinnedFile(f);
        const plain = readFileSync(path.join(out, answer));
        return (
          templateOf(answer) === undefined || !hasTwin(answer, plain.length) || !gunzipSync(readFileSync(path.join(out, f))).equals(plain)
        );
      }
      return templateOf(f) === undefined;
    });
    expect(files.length).toBeGreaterThan(4000);
    expect(orphans).toEqual([]);
    // every file long enough has its twin
    const twinless = files.filter((f) => !isTwin(f) && hasTwin(f, statSync(path.join(out, f)).size) && !files.includes(twinOf(f)));
    expect(twinless).toEqual([]);
    expect(files.filter(isTwin).length).toBeGreaterThan(10);
  });

  it("meets every template and every rule with a target (none unreachable), with either list default", () => {
    const met = new Set([...files, ...online.files].filter((f) => !isTwin(f)).map(templateOf));
    expect((Object.keys(FILES) as FileName[]).filter((name) => !met.has(name))).toEqual([]);
    for (const [written, rules] of [
      [files, RULES],
      [online.files, rulesFor({ defaultStatus: "online" })],
    ] as const) {
      const hit = new Set(written.flatMap((f) => requestsForFile(f, rules).map((r) => r.rule)));
      expect(rules.filter((r) => r.to !== null && !hit.has(r)).map((r) => `${r.from} ${JSON.stringify(r.query)}`)).toEqual([]);
    }
    // The online default writes an access point's online links beside its links, and nothing else more.
    const extra = online.files.filter((f) => !files.includes(f) && !f.startsWith(`/${SNAPSHOT_DIR}/`) && !isTwin(f));
    expect(new Set(extra.map(templateOf))).toEqual(new Set(["accesspointLinksByStatus"]));
  });

  it("answers each file's requests with that very file, by the build's own routing (either list default)", async () => {
    for (const build of [{ out, files }, online]) {
      const routing = await loadRouting(build.out);
      const wrong: string[] = [];
      let requests = 0;
      for (const file of build.files) {
        for (const { target } of requestsForFile(file, routing.rules)) {
          requests++;
          const r = resolve(parseRequest(target)!, routing);
          if (r.type !== "file" || r.file !== file) wrong.push(`${target} -> ${r.type === "file" ? r.file : r.type} (want ${file})`);
        }
      }
      expect(requests).toBeGreaterThan(build.files.length);
      expect(wrong).toEqual([]);
    }
    expect((await loadRouting(online.out)).rules).toBe(rulesFor({ defaultStatus: "online" }));
    expect((await loadRouting(out)).rules).toBe(RULES);
  });

  it("fills templates through keys: router values never become paths as they are", () => {
    expect(fileFor("interfaceListBySsid", { ssid: "../../x" })).toBe("/api/v1/interface/_q/wifi_ssid/_2E._2F.._2Fx/index.json");
    expect(fileFor("interfaceListByMac", { mac: "AA:BB" })).toBe(fileFor("interfaceListByMac", { mac: "aa:bb" }));
    expect(fileFor("accesspointListByVersion", { version: null })).toBe("/api/v1/accesspoint/_q/firmware_version/_null/index.json");
    expect(templateOf("/api/v1/nothing.json")).toBeUndefined();
  });
});

describe("no output path is spelled outside the route table", () => {
  // What spelling an output path looks like: a file name of the build inside a string.
  const TEMPLATES = [
    /["'`][^"'`\s]*\/index\.(json|html)["'`]/,
    /["'`][^"'`\s]*_q\/[^"'`\s]*["'`]/,
    /["'`](\/_redirects|\/?404\.json|\/?404\.html|\/?\.mesh-api-[a-z]+(\.json)?|\/?SHA256SUMS|\/?snapshots\/)["'`]/,
    /["'`][^"'`\s]*\.tar\.gz["'`]/,
    /["'`]\/api\/v1\/[a-z]+\/[^"'`\s]*["'`]/,
    // a URL built from the API's prefix: `${API}/link/`, `${API_DIR}/…`
    /\$\{API(_DIR)?\}\//,
  ];
  /** The lines of a source that spell an output path (comments may name files). */
  const spelled = (text: string) =>
    text
      .split("\n")
      .map((line, i) => ({ line, at: i + 1 }))
      .filter(({ line }) => !/^\s*(\*|\/\/|\/\*)/.test(line) && TEMPLATES.some((t) => t.test(line)));

  it("finds no path template of the build's files in src/ but in core/routes.ts and its modules, the output and filter records", () => {
    const found: string[] = [];
    for (const file of fg.sync("**/*.ts", { cwd: path.join(ROOT, "src") })) {
      // the table, and the output records that bring their files to it
      if (file === "core/routes.ts" || ["core/routes/", "core/outputs/", "core/filters/"].some((d) => file.startsWith(d))) continue;
      for (const { line, at } of spelled(readFileSync(path.join(ROOT, "src", file), "utf8")))
        found.push(`src/${file}:${at}: ${line.trim()}`);
    }
    expect(found).toEqual([]);
  });

  it("would find one of each kind (the search itself works), and not in a comment", () => {
    const planted = [
      "yield out(`/api/v1/link/${id}/index.json`, body);",
      'const f = "/api/v1/interface/_q/wifi_ssid/x";',
      'const r = "/_redirects";',
      "const a = `mesh-api-v1-${date}.tar.gz`;",
      'const u = "/api/v1/site/3";',
      "const list = `${API}/link/`;",
    ];
    // each planted line is found, and each pattern finds one of them
    expect(spelled(planted.join("\n")).map((f) => f.at)).toEqual([1, 2, 3, 4, 5, 6]);
    for (const t of TEMPLATES) expect(planted.some((l) => t.test(l))).toBe(true);
    expect(spelled(planted.map((l) => `// ${l}`).join("\n"))).toEqual([]);
  });
});
