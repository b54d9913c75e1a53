import type { PlaceholderValues } from "../core/plan.ts";
import { keyFor, QUERY_PLACEHOLDERS, type Rule } from "../core/routes.ts";

/**
 * The data-dependent rules every host needs beside the route table's own: a host's query placeholder
 * reaches a value's file only when the value is its own file-name key (fileKey leaves it unchanged),
 * so every other present value (an SSID with a space, an upper-case MAC, a firmware bound answered by
 * another bound's file) gets a literal rule of its own, right before the generic rule it specialises.
 * A placeholder that folds case (MACs) gets one per spelling a host can match literally: the lower- and
 * upper-case one. How a host writes them, and which values it cannot hold, is the host's own.
 */
export interface Literal {
  /** index in the route table of the generic rule */
  readonly at: number;
  /** the generic rule with the value in place of its placeholder and the value's file as target */
  readonly rule: Rule;
  readonly param: string;
  readonly value: string;
}

/** The query placeholder of a rule with a file whose values come from the data (a rule has at most one), with its parameter. */
export function dataPlaceholder(rule: Rule): { param: string; name: string } | undefined {
  if (rule.to === null) return undefined;
  const found = Object.entries(rule.query).find(([, v]) => v.startsWith(":") && QUERY_PLACEHOLDERS[v.slice(1)]?.data);
  return found && { param: found[0], name: found[1].slice(1) };
}

/**
 * The literal rules for every present value whose key differs from the value, in route-table order.
 * Made one at a time as they are read: at the memory case's size they are about 280,000, which held
 * at once took some 200 MiB of a build that only writes and counts them.
 */
export function* literals(input: PlaceholderValues): Generator<Literal> {
  for (const { at, param, name, value, key } of literalValues(input)) {
    const rule = input.rules[at];
    const filled = { ...rule, query: { ...rule.query, [param]: value }, to: rule.to!.replaceAll(`:${name}`, key) };
    yield { at, rule: filled, param, value };
  }
}

/** A literal rule's value in its place, without the rule filled in (what a host's limits look at). */
export interface LiteralValue {
  readonly at: number;
  readonly param: string;
  /** the query placeholder's name */
  readonly name: string;
  /** the spelling the rule matches */
  readonly value: string;
  /** the file-name key of the value's file */
  readonly key: string;
}

/** The values of literals(), in its order: which values get a rule of their own is decided here. */
export function* literalValues({ values, aliases, rules }: PlaceholderValues): Generator<LiteralValue> {
  for (const [at, rule] of rules.entries()) {
    const data = dataPlaceholder(rule);
    if (!data || rule.to === null) continue;
    const { param, name } = data;
    const spec = QUERY_PLACEHOLDERS[name];
    for (const value of values[name] ?? []) {
      const variants = spec.fold === "lower" ? [...new Set([value.toLowerCase(), value.toUpperCase()])] : [value];
      const key = aliases.get(name)?.get(value) ?? keyFor(name, value);
      // a spelling that is its own key: the generic placeholder rule reaches it
      for (const variant of variants) if (variant !== key) yield { at, param, name, value: variant, key };
    }
  }
}
