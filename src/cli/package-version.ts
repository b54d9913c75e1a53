import { readFileSync } from "node:fs";

// Two levels below the package root both as source (src/cli/) and compiled (lib/cli/).
/** This package's version, for --version and a bug's report. */
export const VERSION = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;
