import { fileKey, NULL_KEY } from "../values/names.ts";
import { FILTERS, REFUSAL_PLACEHOLDERS, STATUS } from "../filters/records.ts";

/** How a query placeholder's value becomes part of a file name. */
export interface QueryPlaceholder {
  /** values are compared case-insensitively (the preview folds them; hosts need a rule per case) */
  readonly fold?: "lower";
  /** whether the values come from the data (and so may need explicit per-value rules on a host) */
  readonly data: boolean;
  /**
   * Values that all get one answer, whatever they say (an unparseable `__after` bound keeps every
   * non-null version): the build names that answer's key (Routing.others), and a host that can test
   * a value against the class serves it for any such value; one that cannot answers 404.
   */
  readonly other?: (value: string) => boolean;
  /** values ordered by a sort key (filters/records.ts DataValues.sortKey): any value it orders has an answer */
  readonly sortKey?: (value: string) => readonly number[] | undefined;
}

export const QUERY_PLACEHOLDERS: Readonly<Record<string, QueryPlaceholder>> = {
  [STATUS.placeholder]: { data: false },
  // each data filter's (filters/records.ts)
  ...Object.fromEntries(
    FILTERS.flatMap(({ values: v }) =>
      v.kind === "data"
        ? [
            [
              v.placeholder,
              { data: true, ...(v.fold && { fold: v.fold }), ...(v.other && { other: v.other }), ...(v.sortKey && { sortKey: v.sortKey }) },
            ],
          ]
        : [],
    ),
  ),
  // the refusing rules' (routes/table.ts)
  ...Object.fromEntries(REFUSAL_PLACEHOLDERS.map((p) => [p, { data: false }])),
};

/**
 * The one place a placeholder's value becomes part of a file name. Path placeholders (`key`, `id`,
 * `ip`) hold validated values (the plan) or safe segments (matchPath) and are used as they are;
 * every query value becomes a key (names.ts), a MAC in lower case, the null version
 * (`firmware_version=`) NULL_KEY.
 */
export function keyFor(placeholder: string, value: string | null): string {
  if (value === null) return NULL_KEY;
  const spec = QUERY_PLACEHOLDERS[placeholder];
  if (!spec) return value;
  return fileKey(spec.fold === "lower" ? value.toLowerCase() : value);
}

/** A file template filled with raw values (each through keyFor); placeholders not given stay (a rule's target). */
export function fill(template: string, values: Readonly<Record<string, string | null>>): string {
  const parts = templateParts(template);
  let filled = parts[0];
  for (let i = 1; i < parts.length; i += 2) {
    const name = parts[i];
    filled += (name in values ? keyFor(name, values[name]) : `:${name}`) + parts[i + 1];
  }
  return filled;
}

/**
 * A template cut once into its text and its placeholders' names, alternately: a build fills about
 * two million paths at 40,000 access points (the layout's pass and the writing), and a regular
 * expression's replace with a callback for each was 0.9 s of a recycled cycle (a CPU profile). The
 * templates are the route table's, a few hundred.
 */
function templateParts(template: string): readonly string[] {
  let parts = TEMPLATE_PARTS.get(template);
  if (parts === undefined) {
    if (TEMPLATE_PARTS.size >= 4096) TEMPLATE_PARTS.clear();
    parts = template.split(/:([a-z]+)/);
    TEMPLATE_PARTS.set(template, parts);
  }
  return parts;
}
const TEMPLATE_PARTS = new Map<string, readonly string[]>();
