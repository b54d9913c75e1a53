import { Command, Option } from "commander";
import { checkNeeded } from "./options.ts";
import { register as build } from "./build.ts";
import { register as check } from "./check.ts";
import { register as cycle } from "./cycle.ts";
import { register as fetchDump } from "./fetch-dump.ts";
import { register as hostConfig } from "./host-config.ts";
import { register as importCommand } from "./import.ts";
import { register as netlifyConfig } from "./netlify-config.ts";
import { register as preview } from "./preview.ts";
import { register as snapshot } from "./snapshot.ts";
import { register as validate } from "./validate.ts";

import { DEBUG_ENV, ended, EXIT } from "./exit.ts";
import { VERSION } from "./package-version.ts";

/** `--debug`, on the program and on every command (after the command's name too): the stack of an error. */
const debugOption = () => new Option("--debug", `print an error's stack and causes (as ${DEBUG_ENV}=1 does)`);

/**
 * The command line as commander sees it, every command registered, without running anything: main.ts
 * parses the process's arguments with it, and tests read its commands and options.
 */
export function createProgram(): Command {
  const program = new Command("mesh-api")
    .description("Build a static copy of the Mesh Network Topology Read API v1 from raw topology dumps")
    .version(VERSION, "-V, --version", "print the version")
    .addOption(debugOption())
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) })
    .hook("preAction", (_, command) => {
      // the debug switch as an environment variable, so that exit.ts reads one place whatever threw
      if (program.opts().debug || command.opts().debug) process.env[DEBUG_ENV] = "1";
      checkNeeded(command);
    });
  for (const register of [build, validate, snapshot, check, fetchDump, importCommand, cycle, preview, hostConfig, netlifyConfig])
    register(program);
  const everyCommand = (c: Command): Command[] => [c, ...c.commands.flatMap(everyCommand)];
  for (const c of everyCommand(program).slice(1)) if (!c.options.some((o) => o.long === "--debug")) c.addOption(debugOption().hideHelp());
  // commander's own help command reads one name, so `help import opennet` showed the import group.
  program.helpCommand(false);
  program
    .command("help")
    .argument("[command...]", "a command, or a group and its command: import opennet")
    .description("display help for a command")
    .action((names: string[]) => {
      let command = program;
      for (const name of names) {
        const sub = command.commands.find((c) => c.name() === name);
        if (!sub) return command.error(`error: unknown command '${names.join(" ")}'`, { code: "commander.unknownCommand" });
        command = sub;
      }
      command.help();
    });
  return program;
}

/**
 * Runs one command line (the arguments after the program's name) to its end and returns its exit
 * code, as exit.ts decides it: what main.ts does with the process's arguments. The process itself
 * (its signal handlers, heap setting and exit code) is main.ts's; the tests run commands through
 * this in their own process (test/support/tree.ts) and through main.ts as a child process, and
 * machine.test with a program that has one command more (one that fails as a bug does).
 */
export async function runCommandLine(args: readonly string[], program: Command = createProgram()): Promise<number> {
  try {
    await program.parseAsync([...args], { from: "user" });
    return EXIT.ok;
  } catch (err: unknown) {
    return ended(err);
  }
}
