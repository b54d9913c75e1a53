import type { PlaceholderValues } from "../core/plan.ts";
import { QUERY_PLACEHOLDERS } from "../core/routes.ts";
import { literals, literalValues } from "./literals.ts";

/**
 * Regular expressions over raw query values, for the server hosts that match a query as it was sent
 * (nginx, Caddy): neither can percent-decode a value it captured, so a value of the data that is not
 * its own file-name key is matched by a pattern accepting every encoding of each of its bytes.
 */

/** A raw value that is its own file-name key (names.ts: fileKey keeps it, as long as it is not hashed). */
export const OWN_KEY = "[a-z0-9~-](?:[a-z0-9.~-]{0,198}[a-z0-9~-])?";
/** RFC 3986's unreserved characters: a client has no reason to percent-encode them, and these servers cannot decode them. */
const UNRESERVED = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~";
export const ESCAPED_UNRESERVED = `%(?:${[...UNRESERVED].map((c) => hexPattern(c.charCodeAt(0))).join("|")})`;

/**
 * For one data placeholder, every literal rule's value as a pattern over its raw spellings, with the
 * key of its file (the part of the literal rule's target that stands where its generic rule has `:name`).
 */
export function literalPatterns(
  values: PlaceholderValues,
  name: string,
  /** the key a host computes itself for a value, if any: such values need no pattern when it is the literal's key */
  computed?: (value: string) => string | undefined,
  /** whether the host's syntax and limits carry a pattern: one that does not is left out (overlong() names it) */
  fits: (pattern: string) => boolean = () => true,
): Map<string, string> {
  const spec = QUERY_PLACEHOLDERS[name];
  const byPattern = new Map<string, string>();
  // A folding value's pattern matches every case of each letter: the literal rules' other spellings of
  // it (for hosts that cannot fold, as Netlify) need no pattern of their own, unless a letter folds to several.
  const folded = new Set<string>();
  for (const l of literals(values)) {
    const generic = values.rules[l.at];
    if (generic.query[l.param] !== `:${name}` || l.rule.query[l.param] === undefined) continue;
    const [before, after] = generic.to!.split(`:${name}`);
    const key = l.rule.to!.slice(before.length, l.rule.to!.length - after.length);
    if (computed?.(l.value) === key) continue;
    if (spec.fold === "lower" && ![...l.value].some(foldsToSeveral)) {
      const spelling = `${l.at}\u0000${l.value.toLowerCase()}`;
      if (folded.has(spelling)) continue;
      folded.add(spelling);
    }
    const pattern = valuePattern(l.value, spec.fold === "lower");
    if (fits(pattern)) byPattern.set(pattern, key);
  }
  return byPattern;
}

/**
 * The values whose pattern a host cannot carry (a router's 5,000-character SSID against nginx's
 * 4,096-byte parameters), by parameter: their rules are left out, so their requests are not found,
 * and the host says so (overlongWarnings) instead of writing a configuration its server refuses to load.
 */
export function overlong(values: PlaceholderValues, fits: (pattern: string) => boolean): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  // A value has a literal rule per status and filter it combines with: one pattern each.
  const fitting = new Map<string, boolean>();
  for (const l of literalValues(values)) {
    const fold = QUERY_PLACEHOLDERS[l.name].fold === "lower";
    const seen = `${fold ? "i" : "s"}${l.value}`;
    let fit = fitting.get(seen);
    if (fit === undefined) fitting.set(seen, (fit = fits(valuePattern(l.value, fold))));
    if (fit) continue;
    let set = out.get(l.param);
    if (!set) out.set(l.param, (set = new Set()));
    // a folding value's two spellings are one value to the operator
    set.add(fold ? l.value.toLowerCase() : l.value);
  }
  return out;
}

/** overlong() as a host's warnings: `param="value"`, shortened, with its length and the host's limit. */
export function overlongWarnings(kind: string, values: PlaceholderValues, fits: (pattern: string) => boolean, limit: string) {
  const warnings: { kind: string; message: string }[] = [];
  for (const [param, set] of overlong(values, fits))
    for (const value of set) {
      const chars = [...value];
      const shown = chars.length > 40 ? `${chars.slice(0, 40).join("")}…` : value;
      warnings.push({ kind, message: `${param}=${JSON.stringify(shown)} (${chars.length} characters): ${limit}` });
    }
  return warnings;
}

/**
 * The key of a hardware address written as six pairs of hex digits joined by ":", in any case: the
 * lower-case address with ":" as `_3A` (names.ts fileKey, as routes.ts keyFor folds it); undefined
 * for any other value. A host that can compute it needs no pattern per interface.
 */
export function hardwareAddressKeyOf(value: string): string | undefined {
  return /^[0-9a-f]{2}(?::[0-9a-f]{2}){5}$/i.test(value) ? value.toLowerCase().replaceAll(":", "_3A") : undefined;
}

/**
 * Every raw spelling of a value in a query: each byte as itself where a query may hold it raw, or
 * `%XX` in either hex case; a space as `+` or `%20`. Folding values match each character in its
 * lower- and upper-case form too.
 */
export function valuePattern(value: string, fold: boolean): string {
  const ascii = fold ? FOLDED_ASCII : PLAIN_ASCII;
  let out = "";
  for (const c of value) {
    const code = c.charCodeAt(0);
    out += code < 0x80 ? ascii[code] : formsPattern(c, fold);
  }
  return out;
}

/** A character's pattern in each of its forms (its lower- and upper-case ones when folding). */
function formsPattern(c: string, fold: boolean): string {
  const forms = fold ? [...new Set([c, c.toLowerCase(), c.toUpperCase()])] : [c];
  const patterns = forms.map(charPattern);
  return patterns.length === 1 ? patterns[0] : `(?:${patterns.join("|")})`;
}

/**
 * A character's pattern from a table of the 256 bytes' (built once): routers' values reach megabytes,
 * and validate measures every one against each server's limits (a 2 MB version took a minute).
 */
function charPattern(c: string): string {
  const code = c.codePointAt(0)!;
  if (code < 0x80) return BYTE_PATTERNS[code];
  let out = "";
  for (const b of Buffer.from(c, "utf8")) out += BYTE_PATTERNS[b];
  return out;
}

function bytePattern(b: number): string {
  const escaped = hexPattern(b);
  if (b === 0x20) return `(?:\\+|${escaped})`;
  const raw = b > 0x20 && b < 0x7f && !"&#%+".includes(String.fromCharCode(b));
  return raw ? `(?:${regexEscape(String.fromCharCode(b))}|${escaped})` : escaped;
}

const BYTE_PATTERNS: readonly string[] = Array.from({ length: 256 }, (_, b) => bytePattern(b));

/**
 * Each ASCII character's pattern, folded or not, made once: validate measures every value of the
 * network against each server's limits (at 40,000 access points 0.7 s went to making these again).
 */
const PLAIN_ASCII: readonly string[] = Array.from({ length: 0x80 }, (_, code) => formsPattern(String.fromCharCode(code), false));
const FOLDED_ASCII: readonly string[] = Array.from({ length: 0x80 }, (_, code) => formsPattern(String.fromCharCode(code), true));

/** `%XX` with each hex letter in either case. */
export function hexPattern(b: number): string {
  const hex = b.toString(16).toUpperCase().padStart(2, "0");
  return `%${[...hex].map((h) => (/[A-F]/.test(h) ? `[${h}${h.toLowerCase()}]` : h)).join("")}`;
}

/** Escapes a literal for a PCRE or RE2 pattern. */
export function regexEscape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** A letter whose lower or upper case is several letters (ß to SS): matching each letter in its two cases misses its other spellings. */
const foldsToSeveral = (c: string) => [...c.toLowerCase()].length > 1 || [...c.toUpperCase()].length > 1;

/**
 * The folding values (MACs) with a letter whose case maps to several letters, as `param="variant"`:
 * a server matching each letter in its two cases cannot match them. Read off the values themselves,
 * not off the literal rules: those are hundreds of thousands at the memory case's size.
 */
export function severalFolds(values: PlaceholderValues): string[] {
  const out = new Set<string>();
  for (const rule of values.rules)
    for (const [param, v] of Object.entries(rule.query)) {
      const name = v.startsWith(":") ? v.slice(1) : "";
      if (!QUERY_PLACEHOLDERS[name]?.fold) continue;
      for (const value of values.values[name] ?? [])
        for (const variant of new Set([value.toLowerCase(), value.toUpperCase()]))
          if ([...variant].some(foldsToSeveral)) out.add(`${param}=${JSON.stringify(variant)}`);
    }
  return [...out];
}

const X = "[0-9A-Fa-f]";
const C = `%[89ABab]${X}`;
/**
 * Percent-escapes that decode to UTF-8: an ASCII byte, or a whole, shortest, non-surrogate sequence.
 * A request with another escape is malformed (the preview's 400): Apache and Caddy test for it alike.
 */
export const PERCENT_UTF8 = [
  `%[0-7]${X}`,
  `%[Cc][2-9A-Fa-f]${C}`,
  `%[Dd]${X}${C}`,
  `%[Ee]0%[ABab]${X}${C}`,
  `%[Ee][1-9A-Ca-c]${C}${C}`,
  `%[Ee][Dd]%[89]${X}${C}`,
  `%[Ee][EeFf]${C}${C}`,
  `%[Ff]0%[9ABab]${X}${C}${C}`,
  `%[Ff][1-3]${C}${C}${C}`,
  `%[Ff]4%8${X}${C}${C}`,
].join("|");
