import { execFileSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { requestsFromTree } from "../src/publish/deployment.ts";
import { build } from "../src/index.ts";
import { netlifyRules } from "../src/hosts/netlify.ts";
import { limitHeapGrowth, loaded } from "../src/cli/memory.ts";
import { cpuSeconds } from "./bench-cpu.ts";
import type { SiteSettings } from "../src/core/settings.ts";

/**
 * One measured build, in a process of its own so that its peak RSS is its own: prints a JSON line.
 * With `rebuild` after the folders, a build over the previous output as the command line makes it
 * (the replaced output handed to a detached remover), and with `timed` alone, without the layout count. A fourth argument
 * gives the site settings as JSON (the cycle's row builds with the cycle's settings).
 */
limitHeapGrowth("loading"); // as the command line does
const [data, out, mode, settings] = process.argv.slice(2);
const started = performance.now();
const r = await build({
  data,
  out,
  removeOld: mode === "rebuild" ? "background" : "wait",
  loaded,
  settings: settings ? (JSON.parse(settings) as Partial<SiteSettings>) : undefined,
});
execFileSync("sync"); // the files are written when they are on disk
const seconds = (performance.now() - started) / 1000;
const peakRssMiB = process.resourceUsage().maxRSS / 1024; // before the layout count below
const cpu = cpuSeconds(); // the process's so far: the build, its threads and its `sync` (and loading its modules, a fraction of a second)

// What each kind of response costs the host: files and bytes (not timed).
const layout: Record<string, { files: number; bytes: number }> = {};
for (const q of mode === undefined || mode === "fresh" ? await requestsFromTree(out) : []) {
  const kind =
    q.kind === "link-detail"
      ? q.target.includes("-")
        ? "link-by-peers"
        : "link-by-id"
      : q.kind === "accesspoint-list" && q.target.includes("firmware")
        ? "accesspoint-list (firmware filters)"
        : q.kind.startsWith("accesspoint-") && q.kind !== "accesspoint-list" && q.target.includes(":")
          ? `${q.kind} (main_ipv6)`
          : q.kind;
  const row = (layout[kind] ??= { files: 0, bytes: 0 });
  row.files++;
  row.bytes += statSync(path.join(out, q.file)).size;
}
/** The folder of the build with the most entries (files and sub-folders alike): Netlify refuses more than 54,000 in one. */
function largestFolder(root: string): { folder: string; entries: number } {
  let best = { folder: "/", entries: 0 };
  const walk = (dir: string) => {
    const entries = readdirSync(dir, { withFileTypes: true });
    if (entries.length > best.entries) best = { folder: `/${path.relative(root, dir)}`, entries: entries.length };
    for (const e of entries) if (e.isDirectory()) walk(path.join(dir, e.name));
  };
  walk(root);
  return best;
}

process.stdout.write(
  JSON.stringify({
    ...(mode === undefined || mode === "fresh" ? { largestFolder: largestFolder(out) } : {}),
    seconds,
    files: r.output.files,
    bytes: r.output.bytes,
    accesspoints: r.summary.accesspoints,
    interfaces: r.summary.interfaces,
    links: r.summary.links,
    netlifyRules: netlifyRules(r.values).deployRules,
    literalRules: netlifyRules(r.values).configRules,
    peakRssMiB,
    userSeconds: cpu.user,
    systemSeconds: cpu.system,
    layout,
  }) + "\n",
);
