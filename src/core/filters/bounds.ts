import { createHash } from "node:crypto";
import type { AccesspointEntry, Model } from "../model/model.ts";
import { fileKey } from "../values/names.ts";
import { compareCodePoints } from "../values/text.ts";
import {
  boundaryVersions,
  compareVersionKeys,
  isAfter,
  isBefore,
  isParseableVersion,
  versionKeys,
  type VersionKey,
} from "../values/version.ts";

const ANY_PARSEABLE_BOUND = "1.0";

/**
 * `firmware_version__before` and `__after` bounds and their members. Many bounds select the same
 * access points ("before 0.5" and "before 0.5.1-unstable-845" often do); only the first bound of each
 * result is written, the others become aliases of its file (FILES.aliases), which hosts turn into rules.
 */
export interface BoundResults {
  readonly written: readonly { readonly bound: string; readonly members: readonly AccesspointEntry[] }[];
  readonly aliases: ReadonlyMap<string, string>;
  /** the key of the file that answers every unparseable bound, when one is written (a filter record with that class reads it) */
  readonly other?: string;
  /** every bound in its order with the key of its file: any parseable bound answers as the first at or after it (records.ts sortKey) */
  readonly ordered: readonly (readonly [string, string])[];
}

const boundCache = new WeakMap<Model, { readonly before: BoundResults; readonly after: BoundResults }>();

/** Once per model: both the files and the hosts' rules need them. */
export function boundResults(model: Model): { readonly before: BoundResults; readonly after: BoundResults } {
  let results = boundCache.get(model);
  if (!results) {
    const keyOf = versionKeys();
    results = {
      before: computeBoundResults(model, isBefore, keyOf),
      after: computeBoundResults(model, isAfter, keyOf),
    };
    boundCache.set(model, results);
  }
  return results;
}

/** Bounds are compared as they are (no letter case folds), so a bound's key is its file key. */
function computeBoundResults(
  model: Model,
  passes: (version: string | null, bound: VersionKey, keyOf: (version: string) => VersionKey) => boolean,
  keyOf: (version: string) => VersionKey,
): BoundResults {
  const written: { bound: string; members: AccesspointEntry[] }[] = [];
  const aliases = new Map<string, string>();
  const ordered: [string, string][] = [];
  const bySignature = new Map<string, string>();
  const index = new Map(model.accesspoints.map((a, i) => [a, i]));
  const membersOf = (key: VersionKey) => model.accesspoints.filter((a) => passes(a.mesh_version, key, keyOf));
  const signatureOf = (members: readonly AccesspointEntry[]) =>
    createHash("sha256")
      .update(members.map((a) => index.get(a)).join(","))
      .digest("hex");
  for (const bound of beforeValues(model.accesspoints.map((a) => a.mesh_version))) {
    const members = membersOf(keyOf(bound));
    const signature = signatureOf(members);
    const first = bySignature.get(signature);
    ordered.push([bound, fileKey(first ?? bound)]);
    if (first !== undefined) {
      aliases.set(bound, fileKey(first));
      continue;
    }
    bySignature.set(signature, bound);
    written.push({ bound, members });
  }
  // Every unparseable bound has the empty key. Its answer is always one of the files written (that of
  // the lowest bound, or of a present unparseable version) when any version is present.
  const other = bySignature.get(signatureOf(membersOf([])));
  return { written, aliases, ordered, ...(other !== undefined && { other: fileKey(other) }) };
}

/**
 * Every present non-empty version, and the release-line boundaries derived from them, once each.
 * With no parseable version among them, also 1.0: every parseable bound then selects the same access
 * points (all with a version before it, those with "" after it), so that one file answers them all.
 */
export function beforeValues(versions: readonly (string | null)[]): string[] {
  const values = new Set<string>();
  for (const v of versions) {
    if (!v) continue;
    values.add(v);
    for (const b of boundaryVersions(v)) values.add(b);
  }
  if (![...values].some(isParseableVersion)) values.add(ANY_PARSEABLE_BOUND);
  const keyOf = versionKeys();
  return [...values].sort((a, b) => compareVersionKeys(keyOf(a), keyOf(b)) || compareCodePoints(a, b));
}
