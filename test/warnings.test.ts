import path from "node:path";
import { describe, expect, it } from "vitest";
import { synthesize, writeSynthDump } from "../src/gen/synth.ts";
import { formatProblem, validate } from "../src/index.ts";
import { command, tempDir } from "./support/tree.ts";

/**
 * A large network with many warnings of several kinds: the command line shows the first five of
 * each kind and one count line per kind, with totals that match what validation found, and
 * `validate` and `build` print the same warning lines; with `--all-warnings`, every warning.
 */
describe("grouped warnings", () => {
  // The grouping is a rule of counts, not of size: 300 access points with 120 shared addresses and 45
  // shared link peers (nothing else) give every kind more than the five shown (the shared addresses a count of three digits).
  it("a 300-access-point build prints at most ~20 warning lines with correct totals, the same as validate; --all-warnings prints every one", async () => {
    const dump = synthesize({ aps: 300, seed: 11 });
    const aps = dump.accesspoints as {
      main_ip: string;
      interfaces: { id: number; addresses: { id: number; address: string; netmask_prefixlen: number }[] }[];
    }[];
    const links = dump.links as { id: number; endpoints: unknown[]; timestamp?: unknown }[];
    // 120 shared addresses: an extra interface on access point i holds the main_ip of access point i + 1.
    for (let i = 0; i < 120; i++) {
      const id = 90_000_000 + i;
      aps[i].interfaces.push({ id, addresses: [{ id, address: aps[i + 1].main_ip, netmask_prefixlen: 32 }] });
    }
    // 150 repeated links: the same endpoints under a new id.
    const maxId = Math.max(...links.map((l) => l.id));
    for (let i = 0; i < 150; i++) links.push({ ...links[i * 3], id: maxId + 1 + i });
    const data = path.join(tempDir(), "dump");
    await writeSynthDump(data, dump);

    const found = await validate({ data });
    const byKind = new Map<string, number>();
    for (const p of found.problems) if (p.severity === "warning") byKind.set(p.kind ?? "dump", (byKind.get(p.kind ?? "dump") ?? 0) + 1);
    for (const w of found.hostWarnings) byKind.set(w.kind, (byKind.get(w.kind) ?? 0) + 1);
    const total = [...byKind.values()].reduce((a, b) => a + b, 0);
    expect(byKind.get("shared address")).toBeGreaterThanOrEqual(120);
    expect(byKind.get("shared link peers")).toBeGreaterThanOrEqual(30);

    const out = path.join(tempDir(), "dist");
    const b = await command(["build", "--data", data, "--out", out]);
    const v = await command(["validate", "--data", data]);
    expect(b.status, b.stderr).toBe(0);
    expect(v.status, v.stderr).toBe(0);
    const warningLines = (stderr: string) => stderr.split("\n").filter((l) => l.startsWith("warning:"));
    const lines = warningLines(b.stderr);
    expect(lines).toEqual(warningLines(v.stderr));
    expect(lines.length).toBeLessThanOrEqual(20);
    expect(lines.filter((l) => !l.startsWith("warning: ... and"))).toHaveLength(
      [...byKind.values()].reduce((a, n) => a + Math.min(n, 5), 0),
    );
    for (const [kind, n] of byKind) {
      if (n > 5)
        expect(lines).toContain(
          `warning: ... and ${(n - 5).toLocaleString("en-US")} more ${kind} warnings (--all-warnings shows every one)`,
        );
      else expect(lines.some((l) => l.includes(`more ${kind} warning`))).toBe(false);
    }
    const summary = `${total.toLocaleString("en-US")} warning${total === 1 ? "" : "s"}`;
    expect(b.stderr).toMatch(new RegExp(`^built .*, ${summary}, in `, "m"));
    expect(v.stderr).toMatch(new RegExp(`^valid: .*, ${summary} \\(`, "m"));

    // --all-warnings: every one, in the order found, and no count lines; build and validate alike.
    const every = [
      ...found.problems.filter((p) => p.severity === "warning").map(formatProblem),
      ...found.hostWarnings.map((w) => `warning: ${w.message}`),
    ];
    const all = await command(["validate", "--data", data, "--all-warnings"]);
    expect(all.status, all.stderr).toBe(0);
    expect(warningLines(all.stderr)).toEqual(every);
    const allBuilt = await command(["build", "--data", data, "--out", out, "--all-warnings"]);
    expect(allBuilt.status, allBuilt.stderr).toBe(0);
    expect(warningLines(allBuilt.stderr)).toEqual(every);
  }, 180_000);
});
