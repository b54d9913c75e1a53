import fc from "fast-check";
import type { Model } from "../../src/core/model/model.ts";
import { isAfter, isBefore, isParseableVersion, versionKey } from "../../src/core/values/version.ts";

/**
 * Firmware bounds drawn around a network's versions: each present version, the versions next to it
 * (one more or less in a part, a part added, unstable and stable builds of it) and versions of the
 * grammar with small numbers and leading zeros, so that bounds fall before, between, after and on
 * the data's versions. Seeded: a run draws the same bounds.
 */
export function drawnBounds(model: Model, count: number, seed: number): string[] {
  const present = [
    ...new Set(model.accesspoints.flatMap((a) => (a.mesh_version && isParseableVersion(a.mesh_version) ? [a.mesh_version] : []))),
  ];
  const number = fc.oneof(
    fc.integer({ min: 0, max: 12 }).map(String),
    fc.integer({ min: 0, max: 9 }).map((n) => `0${n}`),
  );
  const dotted = fc.array(number, { minLength: 1, maxLength: 4 }).map((parts) => parts.join("."));
  const grammar = fc.oneof(
    dotted,
    fc
      .tuple(
        fc.array(number, { minLength: 2, maxLength: 4 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 3000 }),
        fc.option(fc.constantFrom("f3a9c1", "0")),
      )
      .map(([parts, unstable, build, hex]) => `${parts.join(".")}${unstable ? "-unstable" : ""}-${build}${hex ? `-${hex}` : ""}`),
    fc.integer({ min: 0, max: 9 }).map((d) => `opennet0.${d}.sdk`),
  );
  const near = present.length
    ? fc
        .tuple(fc.constantFrom(...present), fc.integer({ min: -1, max: 1 }), fc.constantFrom("", ".0", ".1", "-unstable-1", "-0"))
        .map(([v, step, tail]) => {
          const m = /^(.*?)(\d+)(\D*)$/.exec(v.replace(/^opennet0\.(\d)\.sdk$/, "$1"));
          const stepped = m ? `${m[1]}${Math.max(0, Number(m[2]) + step)}${m[3]}` : v;
          return v.startsWith("opennet") ? `opennet0.${stepped}.sdk` : `${stepped}${tail}`;
        })
    : grammar;
  const drawn = fc.sample(fc.oneof(grammar, near), { seed, numRuns: count });
  return [...new Set([...present, ...drawn])].filter(isParseableVersion);
}

/** The main addresses of the access points a bound selects, as the original filters them (version.ts). */
export function boundMembers(model: Model, param: "firmware_version__before" | "firmware_version__after", bound: string): string[] {
  const key = versionKey(bound);
  const passes = param === "firmware_version__before" ? isBefore : isAfter;
  return model.accesspoints
    .filter((a) => passes(a.mesh_version, key))
    .map((a) => a.main_ip)
    .sort();
}
