import type { PlaceholderValues } from "../core/plan.ts";
import { QUERY_PLACEHOLDERS } from "../core/routes.ts";

/**
 * Regular expressions (PCRE, as nginx and Apache read them) over raw query values: the servers do not
 * decode a query as the preview does (names.ts, routes.ts parseRequest), so a value of the data is
 * matched in every spelling a client may send it in.
 */

/** A raw value that is its own file-name key (names.ts: fileKey keeps it, as long as it is not hashed). */
export const OWN_KEY = "[a-z0-9~-](?:[a-z0-9.~-]{0,198}[a-z0-9~-])?";

/**
 * Every raw spelling of a value in a query: each byte as itself where a query may hold it raw, or
 * `%XX` in either hex case; a space as `+` or `%20`. Folding values match each character in its
 * lower- and upper-case form too.
 */
export function valuePattern(value: string, fold: boolean): string {
  let out = "";
  for (const c of value) {
    const forms = fold ? [...new Set([c, c.toLowerCase(), c.toUpperCase()])] : [c];
    const patterns = forms.map((f) => [...Buffer.from(f, "utf8")].map(bytePattern).join(""));
    out += patterns.length === 1 ? patterns[0] : `(?:${patterns.join("|")})`;
  }
  return out;
}

function bytePattern(b: number): string {
  const escaped = hexPattern(b);
  if (b === 0x20) return `(?:\\+|${escaped})`;
  const raw = b > 0x20 && b < 0x7f && !"&#%+".includes(String.fromCharCode(b));
  return raw ? `(?:${regexEscape(String.fromCharCode(b))}|${escaped})` : escaped;
}

/** `%XX` with each hex letter in either case. */
export function hexPattern(b: number): string {
  const hex = b.toString(16).toUpperCase().padStart(2, "0");
  return `%${[...hex].map((h) => (/[A-F]/.test(h) ? `[${h}${h.toLowerCase()}]` : h)).join("")}`;
}

/** Escapes a literal for a PCRE pattern. */
export function regexEscape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The key a literal rule's target holds where its generic rule's target holds `:name`. */
export function keyIn(generic: string, filled: string, name: string): string {
  const [before, after] = generic.split(`:${name}`);
  return filled.slice(before.length, filled.length - after.length);
}

/**
 * The folding values (MACs) a letter-by-letter pattern cannot match in every spelling: a letter whose
 * case maps to several letters (ß to SS). Read off the values themselves, not off the literal rules:
 * those are hundreds of thousands at the memory case's size. One message per parameter and spelling.
 */
export function foldingLimits(values: PlaceholderValues, kind: string, why: string): { kind: string; message: string }[] {
  const out = new Map<string, { kind: string; message: string }>();
  const several = (c: string) => [...c.toLowerCase()].length > 1 || [...c.toUpperCase()].length > 1;
  for (const rule of values.rules)
    for (const [param, v] of Object.entries(rule.query)) {
      const name = v.startsWith(":") ? v.slice(1) : "";
      if (!QUERY_PLACEHOLDERS[name]?.fold) continue;
      for (const value of values.values[name] ?? [])
        for (const variant of new Set([value.toLowerCase(), value.toUpperCase()]))
          if ([...variant].some(several)) {
            const message = `${param}=${JSON.stringify(variant)}: ${why}`;
            out.set(message, { kind, message });
          }
    }
  return [...out.values()];
}
