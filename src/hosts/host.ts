import { UsageError } from "../core/problems.ts";
import type { OutputFile, PlaceholderValues } from "../core/plan.ts";
import { FLAT, RULES } from "../core/routes.ts";
import { overlongWarnings, severalFolds } from "./patterns.ts";

/** Something a host cannot reproduce for this network: the build works, one host answers differently. */
export interface HostWarning {
  readonly kind: string;
  readonly message: string;
}

/** How `host-config` asks for a configuration. */
export interface ConfigOptions {
  /**
   * A complete configuration that runs the server alone in the foreground on 127.0.0.1 (to try a build,
   * and for the tests), instead of a block to include in the operator's own configuration.
   */
  readonly standalone?: boolean;
  /** the build's folder, as the server will read it */
  readonly root?: string;
  readonly port?: number;
  /**
   * `user` or `user:group` the server's workers run as when it is started as root (a standalone
   * configuration only; without a group, the group of the user's name). A server that does not change
   * its user throws UsageError.
   */
  readonly user?: string;
}

/** A platform that serves a deploy itself (Netlify) takes none of a server's options: a UsageError names those given. */
export function refuseServerOptions(options: ConfigOptions): void {
  const given = (["standalone", "root", "port", "user"] as const).filter((o) => options[o] !== undefined && options[o] !== false);
  if (given.length > 0)
    throw new UsageError(
      `Netlify serves a deploy itself: ${given.map((o) => `--${o}`).join(", ")} ${given.length === 1 ? "is" : "are"} for a host that runs as a server of yours`,
    );
}

/** The standalone options of a server host, checked alike for every server. */
export interface Standalone {
  readonly root: string;
  readonly port: number;
  readonly user?: { readonly name: string; readonly group: string };
}

/**
 * A server host's standalone options, or undefined for the block to include in the operator's own
 * configuration (`block` names it). Options that do not go together are a UsageError, before any work.
 */
export function standaloneOf(options: ConfigOptions, block: string, changesUser: boolean): Standalone | undefined {
  const { standalone, root, port, user } = options;
  if (!standalone) {
    if (root !== undefined || port !== undefined || user !== undefined)
      throw new UsageError(`--root, --port and --user are for --standalone; the ${block} takes its root from there`);
    return undefined;
  }
  if (root === undefined || port === undefined) throw new UsageError("--standalone needs --root <the build's folder> and --port <n>");
  if (user === undefined) return { root, port };
  if (!changesUser)
    throw new UsageError("this server does not change its user: start it as a user that can read the build, without --user");
  const [name, group = name, ...rest] = user.split(":");
  if (!name || !group || rest.length > 0) throw new UsageError(`--user takes <user> or <user>:<group>, not ${JSON.stringify(user)}`);
  return { root, port, user: { name, group } };
}

/**
 * A place a build is served from. Everything it knows comes from the typed plan data (the present
 * filter values, their aliases and the route table of the build: PlaceholderValues), and the
 * literal rules every host needs come from hosts/literals.ts; how it writes them is its own.
 * Adding a host is one file implementing this, one line in hosts/index.ts and its test (docs/development.md).
 */
export interface Host {
  /** as `mesh-api host-config <name>` names it */
  readonly name: string;
  /**
   * A web server the operator runs, whose configuration a `cycle` can test and reload; false for a
   * platform a build is deployed to (its rules go with each deploy).
   */
  readonly server: boolean;
  /** how mesh-api's own tests try it (not used when mesh-api runs) */
  readonly test: HostTest;
  /** the files it adds to a build beside the API (Netlify: `_redirects` and the 404 page) */
  files(input: PlaceholderValues): Iterable<OutputFile>;
  /**
   * The configuration `host-config` prints: for a build of these values, or without them the generic
   * one (the route table's rules alone). Throws UsageError (core/problems.ts) for options the host has no use for.
   */
  config(input: PlaceholderValues | undefined, options?: ConfigOptions): string;
  /** what it cannot express for these values: `validate`, `build` and `host-config` warn of each */
  limits(input: PlaceholderValues): HostWarning[];
  /**
   * What `build` says of this host, when it has something to say: what the build holds for it (`out`
   * the build's folder) and how to configure it (`configure`: the arguments that select this dump
   * for `host-config`, such as `--data <dump>`).
   */
  built?(input: PlaceholderValues, out: string, configure: string, run: RunHint): string;
  /** What `host-config --data` says of the configuration it printed, when it has something to say. */
  configured?(input: PlaceholderValues): string;
  /**
   * Files `host-config --write` puts beside the configuration (paths relative to its folder), the
   * same for every network: Netlify's edge function. Each starts with a line of its own by which
   * a later --write knows it may replace it.
   */
  companions?(): readonly { readonly path: string; readonly text: string }[];
}

/**
 * How mesh-api's own tests try a host: its test file and the tier of vitest.config.ts that lists it
 * (test/architecture.test.ts checks TIERS against them), and the real server it starts, which
 * scripts/test-deps.mjs installs before `npm test`.
 */
export interface HostTest {
  /** the test file, test/<file>.test.ts */
  readonly file: string;
  /** the tier of vitest.config.ts it runs in: servers, the tier of the real web servers and Netlify's engines */
  readonly tier: "servers";
  /** the program the test starts, from Debian (none for a platform whose engine comes from npm) */
  readonly program?: {
    /** where Debian's package puts it */
    readonly path: string;
    /** the environment variable naming another one to test instead (MESH_API_NGINX=/opt/nginx/sbin/nginx) */
    readonly env: string;
    /** the Debian package that brings it */
    readonly debian: string;
  };
}

/** How the command line that printed a hint is run where it printed it: a hint must work there. */
export interface RunHint {
  /** the program as the user runs it: `mesh-api`, `npx mesh-api`, `npm run mesh-api --` in a checkout */
  readonly mesh: string;
  /** whether writing the host's file there needs --force (a checkout's committed generic rules) */
  readonly force: boolean;
}

/** What a pipeline run found for one host. */
export interface HostReport {
  readonly warnings: readonly HostWarning[];
  /** Host.built for this network */
  readonly built?: (out: string, configure: string, run: RunHint) => string;
  /** Host.configured for this network */
  readonly configured?: string;
}

/** A host's report for one network. */
export function hostReport(host: Host, input: PlaceholderValues): HostReport {
  return {
    warnings: host.limits(input),
    built: host.built && ((out, configure, run) => host.built!(input, out, configure, run)),
    configured: host.configured?.(input),
  };
}

/** What a web server's host says of itself; the rest of its Host follows (serverHost) with its printer. */
export interface ServerSpec {
  readonly name: string;
  /** what the configuration is without --standalone, as a usage error names it ("block for your server {}") */
  readonly block: string;
  /** whether a standalone server started as root changes its workers' user (`--user`) */
  readonly changesUser: boolean;
  /** the wording of what it cannot express: a MAC whose case folds to several letters, and a value too long for it (with `fits`) */
  readonly limits: { readonly caseFolding: string; readonly longValue?: string };
  /** whether its syntax and limits carry a value's pattern (hosts/patterns.ts overlong); without it, every pattern */
  readonly fits?: (pattern: string) => boolean;
  /** how the tests run it (Host.test) */
  readonly test: HostTest;
}

/** A web server as a Host: nothing in the build, the configuration `host-config` prints, and its limits. */
export function serverHost(
  spec: ServerSpec,
  /** its configuration for a build of these values (without them, the route table's rules alone) */
  print: (values: PlaceholderValues | undefined, standalone: Standalone | undefined) => string,
): Host {
  const { name, limits, fits, test } = spec;
  return {
    name,
    server: true,
    test,
    files: () => [],
    config: (input, options = {}) => print(input, standaloneOf(options, spec.block, spec.changesUser)),
    limits: (values) => [
      ...severalFolds(values).map((value) => ({ kind: name, message: `${value}: ${limits.caseFolding}` })),
      ...(fits && limits.longValue ? overlongWarnings(name, values, fits, limits.longValue) : []),
    ],
  };
}

/** Folders over the limit even after the split (a shard of keys sharing their last two characters): Netlify refuses the deploy. */
export function folderWarnings(input: PlaceholderValues): HostWarning[] {
  return input.over.map(({ folder, entries }) => ({
    kind: "folder",
    message: `${folder} holds ${entries.toLocaleString("en-US")} entries, more than the folder limit: Netlify refuses a deploy with more than 54,000 files in one folder`,
  }));
}

/** A network without values: the configuration for a dump, with no literal rule in it. */
export const NO_VALUES: PlaceholderValues = {
  values: {},
  aliases: new Map(),
  others: new Map(),
  bounds: new Map(),
  rules: RULES,
  layout: FLAT,
  over: [],
};

const firstLine = (text: string) => text.slice(0, text.indexOf("\n"));

/**
 * Which configuration of this host a file holds, by its first line: one for a dump, the generic rules
 * (what a repository commits), or none of this tool's (undefined: the operator's own file).
 */
export function configKind(host: Host, text: string, options: ConfigOptions = {}): "dump" | "generic" | undefined {
  const first = firstLine(text);
  if (first === firstLine(host.config(NO_VALUES, options))) return "dump";
  if (first === firstLine(host.config(undefined, options))) return "generic";
  return undefined;
}
