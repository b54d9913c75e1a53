import { createHash } from "node:crypto";
import { readdir, rm, stat } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { extractArchive } from "./archive.ts";

/**
 * Where the nightly job's dumps come from when they are not in the repository: a .tar.gz at a URL,
 * checked against `<url>.sha256` when one sits beside it, unpacked into a folder. Returns the dump
 * directory (the archive's single top folder, or the folder itself).
 */
export async function fetchDump(url: string, out: string, log: (line: string) => void = () => {}): Promise<string> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  const archive = Buffer.from(await res.arrayBuffer());
  const sums = await fetch(`${url}.sha256`);
  if (sums.ok) {
    const want = (await sums.text()).trim().split(/\s+/)[0]?.toLowerCase();
    const got = createHash("sha256").update(archive).digest("hex");
    if (want !== got) throw new Error(`${url}: sha256 ${got} does not match ${url}.sha256 (${want})`);
    log(`verified ${url} against ${url}.sha256`);
  } else {
    log(`no ${url}.sha256 (HTTP ${sums.status}); not verified`);
  }
  await rm(out, { recursive: true, force: true });
  const files = await extractArchive(Readable.from(archive), out);
  log(`unpacked ${files} files into ${out}`);
  return dumpRoot(out);
}

async function dumpRoot(dir: string): Promise<string> {
  const isDump = async (d: string) => (await stat(path.join(d, "accesspoints")).catch(() => undefined))?.isDirectory() ?? false;
  if (await isDump(dir)) return dir;
  const entries = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory());
  if (entries.length === 1 && (await isDump(path.join(dir, entries[0].name)))) return path.join(dir, entries[0].name);
  throw new Error(`the archive holds no dump (no accesspoints/ folder at its top or in its single top folder)`);
}
