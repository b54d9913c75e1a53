/**
 * Sort key of firmware versions for `firmware_version__before` and `__after`, as the original server compares them:
 *   opennet0.<d>.sdk (exactly one digit d)             -> (-1, d)
 *   <a>.<b>[.<c>...][-unstable]-<build>[-<hex>]         -> (a, b, c..., -1 if unstable else 0, build)
 *   <a>[.<b>...]                                       -> (a, b..., 0)
 * (<hex>: lower-case hex digits only, as the original's pattern has it.)
 *   anything else                                      -> ()
 * Tuples compare element-wise; a proper prefix sorts first.
 */
export type VersionKey = readonly number[];

/** AirOS builds: one digit only, as the original's pattern has it; `opennet0.10.sdk` is unparseable. */
const SDK = /^opennet0\.(\d)\.sdk$/;
const BUILD = /^(\d+(?:\.\d+)+)(-unstable)?-(\d+)(?:-[0-9a-f]+)?$/;
const PLAIN = /^(\d+(?:\.\d+)*)$/;

export function versionKey(version: string): VersionKey {
  let m = SDK.exec(version);
  if (m) return [-1, Number(m[1])];
  m = BUILD.exec(version);
  if (m) return [...numbers(m[1]), m[2] ? -1 : 0, Number(m[3])];
  m = PLAIN.exec(version);
  if (m) return [...numbers(m[1]), 0];
  return [];
}

/**
 * Whether a `__before`/`__after` bound has a sort key. Every unparseable bound gets the same answer
 * (`__after`: every non-null version), so a host that can test a value with this pattern serves one
 * file for all of them.
 */
export const PARSEABLE_VERSION = new RegExp(`${SDK.source}|${BUILD.source}|${PLAIN.source}`);

/** PARSEABLE_VERSION as one unanchored group, to be put inside another pattern. */
export const PARSEABLE_VERSION_GROUP = `(?:${[SDK, BUILD, PLAIN].map((r) => r.source.slice(1, -1)).join("|")})`;

export function isParseableVersion(value: string): boolean {
  return versionKey(value).length > 0;
}

function numbers(dotted: string): number[] {
  return dotted.split(".").map(Number);
}

export function compareVersionKeys(a: VersionKey, b: VersionKey): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

/**
 * `mesh_version` passes `firmware_version__before=<bound>` when it is non-empty and sorts before the
 * bound. `keyOf` lets a caller testing many bounds parse each distinct version once.
 */
export function isBefore(version: string | null, bound: VersionKey, keyOf: (version: string) => VersionKey = versionKey): boolean {
  return version !== null && version !== "" && compareVersionKeys(keyOf(version), bound) < 0;
}

/**
 * `mesh_version` passes `firmware_version__after=<bound>` when it is not null and does not pass
 * `__before` the same bound: the bound itself counts as after, and so does `""`, which the original
 * never counts as before anything. An unparseable bound (key `()`) keeps every non-null version.
 */
export function isAfter(version: string | null, bound: VersionKey, keyOf: (version: string) => VersionKey = versionKey): boolean {
  return version !== null && !isBefore(version, bound, keyOf);
}

/** versionKey, remembering the key of each version it was given. */
export function versionKeys(): (version: string) => VersionKey {
  const keys = new Map<string, VersionKey>();
  return (version) => {
    let key = keys.get(version);
    if (key === undefined) keys.set(version, (key = versionKey(version)));
    return key;
  };
}

/**
 * The `__before` values a static build answers besides the versions present: the release-line
 * boundaries a person asks about ("before 0.5", "before 0.5.2", "before 1.0"), derived from the
 * numeric part of every present version: each prefix of two or more parts, and the next value of
 * each part (next patch, next minor, next major as `<a+1>.0`).
 */
export function boundaryVersions(version: string): string[] {
  const m = SDK.exec(version) ? null : (BUILD.exec(version) ?? PLAIN.exec(version));
  if (!m) return [];
  const parts = numbers(m[1]);
  const out: string[] = [`${parts[0] + 1}.0`];
  for (let i = 2; i <= parts.length; i++) out.push(parts.slice(0, i).join("."));
  for (let i = 1; i < parts.length; i++) {
    out.push([...parts.slice(0, i), parts[i] + 1].join("."));
  }
  return out;
}

/**
 * A regular expression (source, anchored) matching exactly the parseable versions that sort at or
 * before `bound` (versionKey, compareVersionKeys), for a host that can only test a value against a
 * pattern: `firmware_version__before=<v>` answers as the first present bound at or after `<v>`, so a
 * host tests these patterns in the bounds' order (filters/records.ts sortKey). Numbers may carry
 * leading zeros, as Number() reads them; a number beyond 2^53, which Number() rounds, is read exactly.
 */
export function versionsAtMost(bound: string): string {
  const key = versionKey(bound);
  if (key.length === 0) throw new Error(`${JSON.stringify(bound)} is no parseable version`);
  const sdk = "opennet0\\.\\d\\.sdk";
  if (key[0] === -1) return `^opennet0\\.[0-${key[1]}]\\.sdk$`;
  const first = [...lessNumber(key[0]).map((n) => n + rest(1)), ...then(eqNumber(key[0]), after(key, 1))];
  return `^(?:${sdk}|${alternatives(first)})$`;
}

const BUILD_TAIL = "-\\d+(?:-[0-9a-f]+)?";

/** Any continuation of a version after `numbers` dotted numbers, whatever its values. */
function rest(numbers: number): string {
  const build = `(?:-unstable)?${BUILD_TAIL}`;
  return numbers >= 2 ? `(?:\\.\\d+)*(?:${build})?` : `(?:(?:\\.\\d+)+(?:${build})?)?`;
}

/**
 * The continuations after `i` dotted numbers equal to the key's first `i` elements that keep the
 * version at or before the key: a smaller or equal next number, the end (a plain version's 0), or a
 * build's marker (-1 unstable, 0 stable) and number.
 */
function after(key: readonly number[], i: number): string | undefined {
  // The key ends here: any more of the version sorts after it (no pattern, for RE2 has no "(?!)").
  if (i >= key.length) return undefined;
  const c = key[i];
  const out: string[] = [];
  if (c >= 0) {
    out.push(...lessNumber(c).map((n) => `\\.${n}${rest(i + 1)}`));
    out.push(...then(`\\.${eqNumber(c)}`, after(key, i + 1)));
    out.push(""); // the end: a plain version's 0 sorts at or before c
  }
  if (i >= 2)
    for (const [marker, text] of [
      [-1, "-unstable"],
      [0, ""],
    ] as const) {
      if (marker < c) out.push(`${text}${BUILD_TAIL}`);
      else if (marker === c && i + 1 < key.length)
        out.push(`${text}-${alternatives([...lessNumber(key[i + 1]), eqNumber(key[i + 1])])}(?:-[0-9a-f]+)?`);
    }
  return out.length > 0 ? alternatives(out) : undefined;
}

/** A pattern followed by the continuations after it, none when there are none. */
function then(head: string, tail: string | undefined): string[] {
  return tail === undefined ? [] : [head + tail];
}

function alternatives(parts: readonly string[]): string {
  return parts.length === 1 ? parts[0] : `(?:${parts.join("|")})`;
}

/** Decimal numbers (leading zeros allowed) equal to n. */
function eqNumber(n: number): string {
  return n === 0 ? "0+" : `0*${n}`;
}

/** Patterns of the decimal numbers (leading zeros allowed) below n, none for 0. */
function lessNumber(n: number): string[] {
  if (n <= 0) return [];
  const d = String(n);
  const out = ["0+"]; // zero
  if (d.length > 1) out.push(`0*[1-9]\\d{0,${d.length - 2}}`);
  // as many significant digits as n: equal up to position i, smaller there
  for (let i = 0; i < d.length; i++) {
    const digit = Number(d[i]);
    const low = i === 0 ? 1 : 0;
    if (digit <= low) continue;
    const range = digit - 1 === low ? `${low}` : `[${low}-${digit - 1}]`;
    out.push(`0*${d.slice(0, i)}${range}${d.length - i - 1 > 0 ? `\\d{${d.length - i - 1}}` : ""}`);
  }
  return out;
}
