import { DEFAULT_SETTINGS, DEFAULT_STATUSES, type DefaultStatus } from "../settings.ts";
import { KEYED_FOLDERS, type Layout } from "./layout.ts";
import { NO_ROUTING, type Aliases, type Bounds, type Others, type Routing } from "./resolve.ts";
import { rulesFor } from "./table.ts";

export type { Routing };

/**
 * The routing file as the build writes it (FILES.aliases): sorted, so the file is deterministic; the
 * list default only when it is not the API description's, so such builds keep their bytes.
 */
export function aliasesBody(
  routing: { readonly aliases: Aliases; readonly others: Others; readonly bounds: Bounds; readonly layout: Layout },
  defaultStatus: DefaultStatus = DEFAULT_SETTINGS.defaultStatus,
): string {
  const sorted = (map: ReadonlyMap<string, string>) => Object.fromEntries([...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const entries = [...routing.aliases].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const body = Object.fromEntries(entries.map(([placeholder, map]) => [placeholder, sorted(map)]));
  const others = routing.others.size > 0 ? { others: sorted(routing.others) } : {};
  // In their order (not sorted by name): the order is the meaning.
  const ordered = [...routing.bounds].filter(([, list]) => list.length > 0).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const bounds = ordered.length > 0 ? { bounds: Object.fromEntries(ordered) } : {};
  const settings = defaultStatus === DEFAULT_SETTINGS.defaultStatus ? {} : { default_status: defaultStatus };
  // Only a build that splits names its split folders, so other builds keep their bytes.
  const split = routing.layout.split.length > 0 ? { split: routing.layout.split } : {};
  return JSON.stringify({ format: "mesh-api-aliases/1", aliases: body, ...others, ...bounds, ...settings, ...split }) + "\n";
}

/** Reads FILES.aliases back; an absent or foreign file means no aliases and the default table. */
export function parseRouting(text: string | undefined): Routing {
  const none = NO_ROUTING;
  if (!text) return none;
  try {
    const parsed = JSON.parse(text) as {
      format?: string;
      aliases?: Record<string, Record<string, string>>;
      others?: Record<string, unknown>;
      bounds?: Record<string, unknown>;
      default_status?: unknown;
      split?: unknown;
    };
    if (parsed.format !== "mesh-api-aliases/1" || typeof parsed.aliases !== "object" || parsed.aliases === null) return none;
    const defaultStatus = DEFAULT_STATUSES.find((s) => s === parsed.default_status) ?? DEFAULT_SETTINGS.defaultStatus;
    const strings = (map: Record<string, unknown>) =>
      new Map(Object.entries(map).filter((e): e is [string, string] => typeof e[1] === "string"));
    return {
      aliases: new Map(Object.entries(parsed.aliases).map(([placeholder, map]) => [placeholder, strings(map)])),
      others: strings(typeof parsed.others === "object" && parsed.others !== null ? parsed.others : {}),
      bounds: pairLists(parsed.bounds),
      rules: rulesFor({ defaultStatus }),
      // Only folders the route table keys can split: a name from elsewhere is no folder of ours.
      layout: {
        split: Array.isArray(parsed.split)
          ? parsed.split.filter((f): f is string => typeof f === "string" && KEYED_FOLDERS.has(f)).sort()
          : [],
      },
    };
  } catch {
    return none;
  }
}

/** The `bounds` of FILES.aliases: lists of [value, key] pairs by placeholder; anything else is left out. */
function pairLists(value: unknown): Bounds {
  if (typeof value !== "object" || value === null) return new Map();
  const isPair = (p: unknown): p is [string, string] => Array.isArray(p) && p.length === 2 && p.every((x) => typeof x === "string");
  return new Map(
    Object.entries(value).flatMap(([placeholder, list]) => (Array.isArray(list) && list.every(isPair) ? [[placeholder, list]] : [])),
  );
}

/** The aliases of FILES.aliases alone. */
export function parseAliases(text: string | undefined): Aliases {
  return parseRouting(text).aliases;
}
