import { type Command, InvalidArgumentError, Option } from "commander";
import { DEFAULTS } from "../core/defaults.ts";
import { hostNamed, SERVER_NAMES } from "../hosts/index.ts";
import { IMPORT_OPENNET_DEFAULTS } from "../importers/opennet/index.ts";
import { ConfigRefusedError, cycle, type Rate } from "../live/run.ts";
import { stopped } from "./exit.ts";
import { limitHeapGrowth, loaded } from "./memory.ts";
import {
  count,
  mapOf,
  siteSettingsOf,
  withSiteOptions,
  retentionOf,
  instant,
  neededOption,
  quietOption,
  warn,
  type SettingsFlags,
} from "./options.ts";

/** `every` of a source: a number of runs from 1 on, or `changed` (a file whose content changed). */
function rate(value: string): Rate {
  if (value === "changed") return value;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('a number of runs from 1 on, or "changed"');
  return n;
}

interface CycleFlags extends SettingsFlags {
  state: string;
  serve: string;
  olsr?: string;
  olsrEvery: Rate;
  wiki?: string;
  wikiEvery: Rate;
  ondataservice?: string;
  ondataserviceEvery: Rate;
  sitesEvery: number;
  at?: string;
  timeout: number;
  extra?: string;
  keep: number;
  tiles: string;
  tilesAttribution?: string;
  host?: string;
  hostConfig?: string;
  hostTest?: string;
  hostReload?: string;
  force?: boolean;
  reconfigure?: boolean;
  historyDays?: number;
  quiet?: boolean;
}

export function register(program: Command): void {
  const command = program
    .command("cycle")
    .description(
      "one run of the periodic job that replaces the original server (for a systemd timer or cron every few minutes): import the due sources " +
        "into the state's dump with memory, build it, point --serve at the new build, snapshot once a day, and keep the web server's configuration current",
    )
    .addOption(neededOption("--state <dir>", "the cycle's own folder: the dump it keeps, its builds and its record of runs"))
    .addOption(neededOption("--serve <link>", "the path the web server serves: a symbolic link the cycle points at each new build"))
    .option("--olsr <file-or-url>", "OLSR txtinfo: a file, or olsrd's txtinfo address (its /all is read)")
    .option(
      "--olsr-every <n|changed>",
      "import OLSR every nth run, or when its file changed (each import stamps what it shows as seen)",
      rate,
      1,
    )
    .option("--wiki <file-or-url>", "the wiki's node page: a file or its address")
    .option("--wiki-every <n|changed>", "import the wiki every nth run, or when its file changed", rate, 10)
    .option("--ondataservice <file>", "the ondataservice SQLite database")
    .option("--ondataservice-every <n|changed>", "import ondataservice every nth run, or when its file changed", rate, "changed")
    .option("--sites-every <n>", "update the sites every nth run (and on the first)", count, 10)
    .option("--at <instant>", "the import's instant (default: now); for replaying recorded sources", instant)
    .option("--timeout <ms>", "time limit for a source read over HTTP, in milliseconds", count, IMPORT_OPENNET_DEFAULTS.timeoutMs)
    .option("--keep <n>", "how many daily snapshots to keep", count, DEFAULTS.keep);
  withSiteOptions(command)
    .addOption(new Option("--host <server>", "the web server whose configuration follows the data").choices(SERVER_NAMES))
    .option("--host-config <file>", "with --host: the file the server includes, rewritten when a build needs other rules")
    .option("--host-test <command>", "with --host: a shell command that exits 0 when the server accepts the new file (nginx -t)")
    .option("--host-reload <command>", "with --host: a shell command that reloads the server (systemctl reload nginx)")
    .option("--force", "with --host-config: take over a file that mesh-api did not write")
    .option(
      "--reconfigure",
      "this run's settings (brand, default status, folder limit, community, Freifunk API, tiles, --extra, --host…) replace the ones the state was set up with; without it, other settings are refused",
    )
    .addOption(quietOption())
    .action(async (opts: CycleFlags) => {
      if ((opts.host === undefined) !== (opts.hostConfig === undefined))
        program.error("error: --host and --host-config go together: the server and the file it includes", { code: "commander.usage" });
      const spec = (source: string | undefined, every: Rate) => (source === undefined ? undefined : { source, every });
      limitHeapGrowth("importing");
      try {
        const r = await cycle({
          loaded,
          state: opts.state,
          serve: opts.serve,
          olsr: spec(opts.olsr, opts.olsrEvery),
          wiki: spec(opts.wiki, opts.wikiEvery),
          ondataservice: spec(opts.ondataservice, opts.ondataserviceEvery),
          sitesEvery: opts.sitesEvery,
          at: opts.at,
          timeoutMs: opts.timeout,
          extra: opts.extra,
          keep: opts.keep,
          settings: await siteSettingsOf(opts),
          map: mapOf(opts),
          host:
            opts.host === undefined
              ? undefined
              : {
                  host: hostNamed(opts.host),
                  options: {},
                  file: opts.hostConfig!,
                  test: opts.hostTest,
                  reload: opts.hostReload,
                  force: opts.force,
                },
          reconfigure: opts.reconfigure,
          retention: retentionOf(opts.historyDays),
          warn,
        });
        // The run's one line goes to stdout, for the journal or cron's mail.
        if (!opts.quiet || r.configRefused) process.stdout.write(`${r.line}\n`);
        if (r.configRefused) throw new ConfigRefusedError(`the new build is served, but ${r.configRefused}`);
      } catch (err) {
        if (err instanceof ConfigRefusedError) throw err;
        stopped(err, opts, `the state in ${opts.state} and the served build were left as they were`, opts.state);
      }
    });
}
