import { readFile } from "node:fs/promises";
import path from "node:path";
import { FILES, parseRouting, type Aliases, type Routing } from "../../core/routes.ts";

/** The routing of a build folder: its filter aliases and route table (none and the default without its file). */
export async function loadRouting(dir: string): Promise<Routing> {
  return parseRouting(await readFile(path.join(dir, FILES.aliases), "utf8").catch(() => undefined));
}

/** The filter aliases of a build folder (none when it has no aliases file). */
export async function loadAliases(dir: string): Promise<Aliases> {
  return (await loadRouting(dir)).aliases;
}
