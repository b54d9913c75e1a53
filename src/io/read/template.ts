import { readFile } from "node:fs/promises";
import { UsageError } from "../../core/problems.ts";
import { lineAndColumn } from "./load.ts";

/**
 * A JSON object the operator keeps in a file (the Freifunk API template): read before any work, with
 * the line and column of a syntax error.
 */
export async function readJsonObject(file: string, option: string): Promise<Record<string, unknown>> {
  const text = await readFile(file, "utf8").catch((err: NodeJS.ErrnoException) => {
    throw new UsageError(`${option} ${file}: cannot read it (${err.code ?? err.message})`, { cause: err });
  });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const message = (err as Error).message;
    const at = /position (\d+)/.exec(message);
    let where = "";
    if (at) {
      const { line, column } = lineAndColumn(text, Number(at[1]));
      where = ` at line ${line}, column ${column}`;
    }
    throw new UsageError(`${option} ${file}: not JSON${where}: ${message.replace(/ in JSON at position \d+.*$/, "")}`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new UsageError(`${option} ${file}: not a JSON object (the community's Freifunk API file, e.g. {"name": …, "location": …})`);
  return value as Record<string, unknown>;
}
