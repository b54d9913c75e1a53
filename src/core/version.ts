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
