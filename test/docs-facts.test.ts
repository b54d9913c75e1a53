import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { STATUS_RULE, STATUS_RULE_TEXT } from "../src/core/model/model.ts";
import { ROOT } from "./support/tree.ts";

/**
 * Facts decided once in the code and restated in prose: the prose must say what the code decides.
 * The status thresholds (core/model/model.ts STATUS_RULE) are written in several documents.
 */
const docs = [
  path.join(ROOT, "README.md"),
  ...readdirSync(path.join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => path.join(ROOT, "docs", f)),
];
const text = (file: string) => readFileSync(file, "utf8").replace(/\s+/g, " ");

describe("the status thresholds in the docs", () => {
  it("docs/rules.md states the rule as the code words it", () => {
    expect(text(path.join(ROOT, "docs", "rules.md"))).toContain(STATUS_RULE_TEXT);
  });

  // the ways the docs refer to the thresholds: online within N minutes, flapping or offline after N days
  const minutes = [
    /less than (\d+) minutes before/g,
    /flapping after (\d+) minutes/g,
    /older than (\d+) minutes is drawn as flapping/g,
    /seen in the (\d+) minutes before/g,
    /seen in the last (\d+) minutes/g,
  ];
  const days = [/offline after (\d+) days/g, /not seen for (\d+) days/g];

  it("every document that restates them gives the code's figures", () => {
    let found = 0;
    for (const file of docs) {
      const t = text(file);
      for (const [patterns, want] of [
        [minutes, STATUS_RULE.onlineMinutes],
        [days, STATUS_RULE.offlineDays],
      ] as const)
        for (const p of patterns)
          for (const m of t.matchAll(p)) {
            found++;
            expect(`${path.relative(ROOT, file)}: ${m[0]}`).toBe(`${path.relative(ROOT, file)}: ${m[0].replace(m[1], String(want))}`);
          }
    }
    // the documents do restate them: a rewording that escapes every pattern shows here
    expect(found).toBeGreaterThanOrEqual(5);
  });
});
