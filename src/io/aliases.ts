import { readFile } from "node:fs/promises";
import path from "node:path";
import { FILES, parseAliases, type Aliases } from "../core/routes.ts";

/** The filter aliases of a build folder (none when it has no aliases file). */
export async function loadAliases(dir: string): Promise<Aliases> {
  return parseAliases(await readFile(path.join(dir, FILES.aliases), "utf8").catch(() => undefined));
}
