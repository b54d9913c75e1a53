import { readFile } from "node:fs/promises";
import { UsageError } from "../core/problems.ts";

/**
 * A JSON object the operator keeps in a file (the Freifunk API template): read before any work, with
 * the line and column of a syntax error.
 */
export async function readJsonObject(file: string, option: string): Promise<Record<string, unknown>> {
  const text = await readFile(file, "utf8").catch((err: NodeJS.ErrnoException) => {
    throw new UsageError(`${option} ${file}: cannot read it (${err.code ?? err.message})`);
  });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const message = (err as Error).message;
    const at = /position (\d+)/.exec(message);
    let where = "";
    if (at) {
      const before = text.slice(0, Number(at[1])).split("\n");
      where = ` at line ${before.length}, column ${before.at(-1)!.length + 1}`;
    }
    throw new UsageError(`${option} ${file}: not JSON${where}: ${message.replace(/ in JSON at position \d+.*$/, "")}`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new UsageError(`${option} ${file}: not a JSON object (the community's Freifunk API file, e.g. {"name": …, "location": …})`);
  return value as Record<string, unknown>;
}
