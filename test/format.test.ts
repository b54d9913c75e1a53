import { describe, expect, it } from "vitest";
import { interruptLine, megabytes, plural, progressLine, warningLines } from "../src/cli/format.ts";
import type { Problem } from "../src/core/problems.ts";

/** The command line's words for people: counts, sizes, grouped warnings, the progress line. */
describe("text for people", () => {
  it("says 1 file and 2 files, with thousands separated", () => {
    expect(plural(1, "file")).toBe("1 file");
    expect(plural(0, "file")).toBe("0 files");
    expect(plural(43543, "file")).toBe("43,543 files");
    expect(plural(2, "access point")).toBe("2 access points");
  });

  it("gives sizes in MB", () => {
    expect(megabytes(1_191_870)).toBe("1.19 MB");
    expect(megabytes(89_300_000)).toBe("89.3 MB");
    expect(megabytes(1_186_500_000)).toBe("1,187 MB");
  });

  it("shows five warnings of a kind, then counts the rest, kind by kind", () => {
    const w = (kind: string, n: number): Problem => ({
      severity: "warning",
      kind,
      source: { file: "a.ndjson", line: n },
      path: "$",
      message: `${kind} ${n}`,
    });
    const problems = [
      ...Array.from({ length: 12 }, (_, i) => w("shared address", i + 1)),
      w("shared link peers", 1),
      { ...w("x", 1), severity: "error" as const },
    ];
    const lines = warningLines(problems, [
      { kind: "Netlify rule", message: "a" },
      { kind: "Netlify rule", message: "b" },
    ]);
    expect(lines.filter((l) => /\$: shared address \d/.test(l))).toHaveLength(5);
    expect(lines).toContain("warning: ... and 7 more shared address warnings (--all-warnings shows every one)");
    expect(lines.filter((l) => l.includes("more"))).toHaveLength(1);
    expect(lines.some((l) => l.includes("x 1"))).toBe(false); // errors are not warnings
    expect(lines).toHaveLength(5 + 1 + 2 + 1);
  });

  it("draws progress only on a terminal, after the delay, and clears it", () => {
    const writes: string[] = [];
    const tty = { isTTY: true, write: (s: string) => writes.push(s) } as unknown as NodeJS.WriteStream;
    const pipe = { isTTY: false, write: (s: string) => writes.push(s) } as unknown as NodeJS.WriteStream;
    expect(progressLine(pipe, undefined, 0)).toBeUndefined();
    const late = progressLine(tty, undefined, 60_000)!;
    late.update({ stage: "writing", done: 10 });
    late.done();
    expect(writes).toEqual([]);
    const now = progressLine(tty, ["reading", "writing", "snapshots"], 0)!;
    now.update({ stage: "writing", done: 12345 });
    now.done();
    // the phase, as one of how many (issue 28, item 10)
    expect(writes[0]).toBe("\r\x1b[2Kstep 2 of 3, writing the site: 12,345 files");
    expect(writes.at(-1)).toBe("\r\x1b[2K");
  });

  it("puts an interrupt on a line of its own on a terminal, over the progress line (issue 28, item 10)", () => {
    expect(interruptLine("interrupted, nothing written", true)).toBe("\r\x1b[2Kmesh-api: interrupted, nothing written\n");
    expect(interruptLine("interrupted", false)).toBe("mesh-api: interrupted\n");
  });
});
