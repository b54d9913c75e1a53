import path from "node:path";
import { describe, expect, inject, it } from "vitest";
import { placeholderValues } from "../src/core/plan.ts";
import { synthesize, writeSynthDump } from "../src/gen/synth.ts";
import { dataRules, NETLIFY_RULE_LIMIT, netlifyRules, ruleCountWarnings } from "../src/hosts/netlify.ts";
import { validate } from "../src/index.ts";
import { ap, model } from "./support/dump.ts";
import { command, tempDir } from "./support/tree.ts";

/**
 * Netlify recommends staying under 10,000 redirect rules; a network whose deploy needs more gets a
 * warning from build and validate that says what the rules are for and what to do.
 */

/** A synthetic network with `extra` hardware addresses per access point on interfaces without an address. */
async function network(aps: number, extra: number): Promise<string> {
  const dump = synthesize({ aps, seed: 5 });
  const mac = (n: number) => `ac:de:${n.toString(16).padStart(8, "0").match(/../g)!.join(":")}`;
  let id = 80_000_000;
  for (const a of dump.accesspoints as { interfaces: unknown[] }[])
    for (let i = 0; i < extra; i++, id++) a.interfaces.push({ id, if_hwaddress: mac(id) });
  const data = path.join(tempDir(), "dump");
  await writeSynthDump(data, dump);
  return data;
}

const warningsOf = (stderr: string) => stderr.split("\n").filter((l) => l.includes("redirect rules"));

describe("the Netlify rule count", () => {
  it("build and validate warn when the deploy needs more than 10,000 rules, naming the count, what the rules are for and what to do", async () => {
    // 300 access points with 15 more hardware addresses each: about 10,300 rules, 7,000 files.
    const data = await network(300, 15);
    const out = path.join(tempDir(), "dist");
    // build and validate run while this process validates
    const runs = Promise.all([command(["build", "--data", data, "--out", out]), command(["validate", "--data", data])]);
    const r = await validate({ data });
    expect(netlifyRules(r.values!).deployRules).toBeGreaterThan(NETLIFY_RULE_LIMIT);
    const mac = netlifyRules(r.values!).literalsByParam.get("if_hwaddress")!;
    expect(mac).toBeGreaterThan(9000);

    const [b, v] = await runs;
    expect(b.status, b.stderr).toBe(0);
    expect(v.status, v.stderr).toBe(0);
    const lines = warningsOf(b.stderr);
    expect(lines).toEqual(warningsOf(v.stderr));
    expect(lines).toHaveLength(1);
    const n = (x: number) => x.toLocaleString("en-US");
    expect(lines[0]).toContain(`warning: the Netlify deploy needs ${n(netlifyRules(r.values!).deployRules)} redirect rules`);
    expect(lines[0]).toContain(`${n(mac)} for if_hwaddress=`);
    expect(lines[0]).toContain("more than the 10,000 Netlify recommends");
    expect(lines[0]).toContain("nginx or Apache");
    expect(b.stderr).toMatch(/^built .*, 1 warning, in /m);
  }, 120_000);

  it("says nothing for a network under the limit", async () => {
    // the shared synthetic network of 300 access points (support/shared.ts): its dump, read only
    const data = inject("builds")["synth-300"].data;
    const v = await command(["validate", "--data", data]);
    expect(v.status, v.stderr).toBe(0);
    expect(warningsOf(v.stderr)).toEqual([]);
    expect(v.stderr).toMatch(/, 0 warnings \(/);
  }, 60_000);

  it("warns from the first rule past the limit", () => {
    const rules = dataRules(placeholderValues(model([ap("10.0.0.1")])));
    expect(ruleCountWarnings({ ...rules, deployRules: NETLIFY_RULE_LIMIT })).toEqual([]);
    expect(ruleCountWarnings({ ...rules, deployRules: NETLIFY_RULE_LIMIT + 1 })).toHaveLength(1);
  });
});
