import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Command, Option } from "commander";
import { describe, expect, it } from "vitest";
import { createProgram } from "../src/cli/program.ts";
import { HOST_NAMES } from "../src/hosts/index.ts";
import { ROOT } from "./support/tree.ts";

/**
 * Every command line the README and docs/ show, in code blocks and in code spans, resolves:
 * `mesh-api` commands and subcommands exist, each option named exists for its command (with an allowed value
 * where the option has choices), and every `npm run` script exists in package.json (with the
 * options named, for the scripts that take some). The commander program is read, never run.
 */

const program = createProgram();
const scripts = (JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
/** npm's own commands the pages show. */
const NPM_BUILTINS = new Set(["ci", "install", "pack", "test"]);

/** A command line as shown: the text, for messages, and its words. */
interface Shown {
  readonly text: string;
  /** the words after `mesh-api`, or after `npm` */
  readonly words: readonly string[];
  readonly tool: "mesh-api" | "npm";
}

/**
 * The command lines of a Markdown text: lines of fenced code blocks (shell or unnamed: a server's
 * configuration has words of its own, as Caddy's `import`) that start with `mesh-api`,
 * `npx mesh-api` or `npm`, and code spans that do, or that start with a command of the program or
 * one of its own options (the README's table and prose leave the program out: `build --data <dir>`,
 * `--version`). A synopsis's brackets are dropped, so its options are checked as any others.
 */
function shownCommands(markdown: string, program: Command): Shown[] {
  const commands = program.commands.map((c) => c.name());
  const rootOptions = program.options.flatMap((o) => [o.long, o.short]);
  const lines: string[] = [];
  let fenced: "shell" | "other" | undefined;
  // a shell line that ends in a backslash goes on in the next: one command
  for (const line of markdown.replace(/\\\n\s*/g, " ").split("\n")) {
    if (line.trimStart().startsWith("```")) {
      const lang = line.trim().slice(3);
      fenced = fenced ? undefined : ["", "sh", "bash", "console"].includes(lang) ? "shell" : "other";
      continue;
    }
    if (fenced === "shell") lines.push(line.replace(/\s+#.*$/, "").trim());
    else if (fenced) continue;
    else for (const m of line.matchAll(/`([^`]+)`/g)) lines.push(m[1].trim());
  }
  const shown: Shown[] = [];
  for (const text of lines) {
    // Shell words: a quoted value with spaces is one word.
    const words = [...text.replace(/\\\|/g, "|").matchAll(/'[^']*'|"[^"]*"|\S+/g)]
      .map((m) => m[0].replace(/^\[+|\]+$/g, "").replace(/^(["'])(.*)\1$/s, "$2"))
      .filter((w) => w !== "" && w !== "…");
    if (words[0] === "npx" && words[1] === "mesh-api") shown.push({ text, words: words.slice(2), tool: "mesh-api" });
    else if (words[0] === "mesh-api") shown.push({ text, words: words.slice(1), tool: "mesh-api" });
    else if (words[0] === "npm" && words.length > 1) shown.push({ text, words: words.slice(1), tool: "npm" });
    else if (commands.includes(words[0]) || rootOptions.includes(words[0])) shown.push({ text, words, tool: "mesh-api" });
  }
  return shown;
}

const isPlaceholder = (word: string) => /^<.*>$/.test(word);

/** What is wrong with `mesh-api <words>`: an unknown command, option or choice; nothing when it resolves. */
function meshApiProblems(words: readonly string[]): string[] {
  let command = program;
  let i = 0;
  for (; i < words.length && command.commands.length > 0 && !words[i].startsWith("-"); i++) {
    if (isPlaceholder(words[i])) return []; // `mesh-api <command>`: any command
    const sub = command.commands.find((c) => c.name() === words[i]);
    if (!sub) return [`no command ${JSON.stringify(words.slice(0, i + 1).join(" "))}`];
    command = sub;
  }
  const name = words.slice(0, i).join(" ") || "mesh-api";
  const problems: string[] = [];
  let positional = 0;
  for (; i < words.length; i++) {
    const word = words[i];
    if (!word.startsWith("-") || word === "-") {
      positional++;
      continue;
    }
    const [flag, inline] = word.includes("=") ? [word.slice(0, word.indexOf("=")), word.slice(word.indexOf("=") + 1)] : [word];
    const option: Option | undefined = command.options.find((o) => o.long === flag || o.short === flag);
    if (!option) {
      if (flag !== "-h" && flag !== "--help") problems.push(`${name} has no option ${flag}`);
      // what follows it may be its value: not counted as an argument
      if (inline === undefined && i + 1 < words.length && !words[i + 1].startsWith("-")) i++;
      continue;
    }
    if (!option.required && !option.optional) continue;
    const values: string[] = [];
    if (inline !== undefined) values.push(inline);
    else if (option.variadic) while (i + 1 < words.length && !words[i + 1].startsWith("-")) values.push(words[++i]);
    else if (i + 1 < words.length && (option.required || !words[i + 1].startsWith("-"))) values.push(words[++i]);
    if (option.argChoices)
      for (const value of values.filter((v) => !isPlaceholder(v)).flatMap((v) => v.split("|")))
        if (!option.argChoices.includes(value)) problems.push(`${name} ${flag} takes ${option.argChoices.join(", ")}, not ${value}`);
  }
  const args = command.registeredArguments;
  if (positional > args.length && !args.at(-1)?.variadic)
    problems.push(`${name} takes at most ${args.length} argument${args.length === 1 ? "" : "s"}, not ${positional}`);
  return problems;
}

/**
 * The options a script under scripts/ declares with commander (`.option("--aps <n>", ...)`), itself
 * or in a module beside it that it imports (scripts/synth.ts runs scripts/synth-command.ts).
 */
function scriptOptions(file: string, seen = new Set<string>()): string[] {
  if (seen.has(file)) return [];
  seen.add(file);
  const text = readFileSync(path.join(ROOT, file), "utf8");
  const beside = [...text.matchAll(/from "\.\/([\w-]+\.ts)"/g)].map((m) => path.posix.join(path.posix.dirname(file), m[1]));
  return [
    ...[...text.matchAll(/\.(?:requiredOption|option)\(\s*"([^"]+)"/g)].flatMap((m) =>
      m[1].split(/[\s,]+/).filter((w) => w.startsWith("-")),
    ),
    ...beside.flatMap((f) => scriptOptions(f, seen)),
  ];
}

/** What is wrong with `npm <words>`: a script that does not exist, or what its command line names. */
function npmProblems(words: readonly string[]): string[] {
  if (words[0] !== "run") return NPM_BUILTINS.has(words[0]) ? [] : [`npm ${words[0]} is not shown to be an npm command here`];
  const at = words[1] === "--silent" ? 2 : 1;
  const script = words[at];
  if (!(script in scripts)) return [`package.json has no script ${script}`];
  const dash = words.indexOf("--");
  const rest = dash >= 0 ? words.slice(dash + 1) : [];
  const run = scripts[script];
  const cli = /src\/cli\/main\.ts(.*)$/.exec(run);
  if (cli) return meshApiProblems([...cli[1].trim().split(/\s+/).filter(Boolean), ...rest]);
  const file = /\bscripts\/[\w-]+\.ts\b/.exec(run)?.[0];
  if (!file) return [];
  const declared = scriptOptions(file);
  return rest.filter((w) => w.startsWith("--") && !declared.includes(w.split("=")[0])).map((w) => `npm run ${script} has no option ${w}`);
}

const commandNames = program.commands.map((c) => c.name());
const pages = [
  "README.md",
  ...readdirSync(path.join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];
const shown = pages.flatMap((page) => shownCommands(readFileSync(path.join(ROOT, page), "utf8"), program).map((s) => ({ ...s, page })));
const problemsOf = (s: Shown) => (s.tool === "npm" ? npmProblems(s.words) : meshApiProblems(s.words));

describe("the commands the README and docs/ show", () => {
  it("are found: the quick start's, the commands table's and the prose's", () => {
    const texts = shown.map((s) => s.text);
    for (const text of [
      "npm run build",
      "npm run preview",
      "npm run synth -- --aps 3000 --seed 1 --out scratch/net",
      "import api https://api.example.org/ --out dump",
      "check <https://host> [--dist dist] [--sample 200]",
      "--version",
    ])
      expect(texts).toContain(text);
    // every command of the program is shown at least once
    expect(new Set(shown.filter((s) => s.tool === "mesh-api" && /^[a-z]/.test(s.words[0] ?? "")).map((s) => s.words[0]))).toEqual(
      new Set(commandNames),
    );
  });

  it("resolve: every command, subcommand, option, choice and npm script exists", () => {
    expect(shown.flatMap((s) => problemsOf(s).map((p) => `${s.page}: ${s.text}: ${p}`))).toEqual([]);
  });

  it("would not resolve with a name that does not exist", () => {
    const wrong = [
      "```sh",
      "npm run previwe",
      "npm run synth -- --aps 3 --colour red",
      "mesh-api build --data data --outt dist",
      "```",
      "`fetch-dump <url> --output <dir>`, `import rss <url>`, `build --default-status some`, `npm run mesh-api -- check --bogus`",
      "`check a b`",
    ].join("\n");
    expect(shownCommands(wrong, program).map((s) => problemsOf(s))).toEqual([
      ["package.json has no script previwe"],
      ["npm run synth has no option --colour"],
      ["build has no option --outt"],
      ["fetch-dump has no option --output"],
      ['no command "import rss"'],
      ["build --default-status takes all, online, not some"],
      ["check has no option --bogus"],
      ["check takes at most 1 argument, not 2"],
    ]);
  });
});

/**
 * The hosts the README names: the choices of the commands table's `host-config a|b|…` line, the list
 * after its "today", and those whose configuration the "## Hosting" table's code spans ask for
 * (`host-config <host> …`, or a command `<host>-config`: netlify-config is `host-config netlify`).
 */
function readmeHosts(markdown: string): { synopsis: string[]; today: string[]; table: string[] } {
  const synopsis = /^\| `host-config ((?:[\w-]+\\\|)*[\w-]+)/m.exec(markdown)?.[1].split("\\|") ?? [];
  const todayList = /\(today ((?:`[\w-]+`(?:, | and )?)+)/.exec(markdown)?.[1] ?? "";
  const today = [...todayList.matchAll(/`([\w-]+)`/g)].map((m) => m[1]);
  const section = markdown.split(/^## Hosting$/m)[1] ?? "";
  const rows = section.split(/\n\s*\n/).find((block) => block.trimStart().startsWith("|")) ?? "";
  const table = new Set<string>();
  for (const [, span] of rows.matchAll(/`([^`]+)`/g)) {
    const [command, host] = span.split(/\s+/);
    if (command === "host-config" && host) table.add(host);
    const own = /^([\w-]+)-config$/.exec(command)?.[1];
    if (own && commandNames.includes(command) && HOST_NAMES.includes(own)) table.add(own);
  }
  return { synopsis, today, table: [...table] };
}

describe("the README's hosts", () => {
  const sorted = (names: readonly string[]) => [...names].sort();

  it("are every host of the registry (HOSTS): in host-config's line of the commands table, and in the hosting table, which says how to configure each", () => {
    const shownHosts = readmeHosts(readFileSync(path.join(ROOT, "README.md"), "utf8"));
    expect(sorted(shownHosts.synopsis)).toEqual(sorted(HOST_NAMES));
    expect(sorted(shownHosts.today)).toEqual(sorted(HOST_NAMES));
    expect(sorted(shownHosts.table)).toEqual(sorted(HOST_NAMES));
  });

  it("would miss a host the README leaves out", () => {
    const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
    const without = readme.replace("\\|caddy [", " [").replace(" and `caddy`", "").replace("`host-config caddy --data`", "the route");
    expect(without).not.toBe(readme);
    const all = readmeHosts(readme);
    const shownHosts = readmeHosts(without);
    for (const list of ["synopsis", "today", "table"] as const) {
      expect(all[list]).toContain("caddy");
      expect(shownHosts[list]).toEqual(all[list].filter((h) => h !== "caddy"));
    }
  });
});
