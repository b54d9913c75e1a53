import { existsSync, readFileSync } from "node:fs";
import type { ChangeEvent } from "../src/core/history/events.ts";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPreview, type Preview } from "../src/index.ts";
import { cycle } from "../src/live/run.ts";
import { answerFromBuild, canonical, mismatch, readExpected, type Answer, type Expected } from "./support/expected.ts";
import { rawRequest, rawRequests, type RawResponse } from "./support/http.ts";
import { tempDir } from "./support/tree.ts";

/**
 * Issue 26, import with memory: the original recorded across a sequence of periodic imports
 * (test/fixtures/live-sample/, its README). Each step is one run of `cycle` (issue 41) into one state,
 * importing the step's sources into the dump of the step before at the step's instant; the build it
 * serves (`--brand opennet --default-status online`) must give every expected answer of that step: the
 * last step's over HTTP on the preview, the others' from the served build's files through the route
 * table (the layer that differs from step to step; issue 44). Sites are compared by their members
 * (the original numbers them in an order of Python's hashing), and a site must keep its id from step
 * to step.
 */

const LIVE = new URL("./fixtures/live-sample/", import.meta.url).pathname;
const OPTIONS = { brand: "opennet", defaultStatus: "online" } as const;

interface Step {
  readonly step: number;
  readonly at: string;
  readonly imports: readonly string[];
  readonly sources: Readonly<Record<string, string>>;
}

const STEPS: Step[] = listSteps();

function listSteps(): Step[] {
  const steps: Step[] = [];
  for (let n = 0; ; n++) {
    const file = `${LIVE}steps/${String(n).padStart(2, "0")}/step.json`;
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      break;
    }
    steps.push(JSON.parse(text) as Step);
  }
  return steps;
}

/** The source a step's import read: only the imports that ran in that step (`sources` names the files). */
function sourceOf(step: Step, kind: "olsr" | "wiki" | "ondataservice"): string | undefined {
  return step.imports.includes(kind) ? path.join(LIVE, step.sources[kind]) : undefined;
}

/** Members of each site id, from a site list body. */
function membersOf(sites: unknown): Map<number, string> {
  const out = new Map<number, string>();
  for (const s of sites as { id: number; accesspoints: string[] }[]) out.set(s.id, [...s.accesspoints].sort().join(" "));
  return out;
}

/** The body with every site id replaced by the members of the site it names. */
function bySiteMembers(body: unknown, members: ReadonlyMap<number, string>): unknown {
  const name = (id: unknown) => (typeof id === "number" ? `site of ${members.get(id) ?? `unknown ${id}`}` : id);
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== "object") return v;
    const o = v as Record<string, unknown>;
    const isSite = "accesspoints" in o && "radius" in o && "id" in o;
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, k === "site" || (isSite && k === "id") ? name(x) : walk(x)]));
  };
  return walk(body);
}

/** An answer as mismatch reads it. */
const asText = (r: RawResponse) => ({ status: r.status, body: r.body.toString("utf8"), location: r.headers.location });

const get = async (port: number, target: string) => asText(await rawRequest(port, "GET", target));

interface StepResult {
  readonly step: number;
  readonly failures: string[];
  readonly checked: number;
  readonly ourSites: Map<number, string>;
  readonly theirSites: Map<number, string>;
}

const results: StepResult[] = [];
const dumps = new Map<number, Record<string, unknown>>();
const link42 = new Map<number, { timestamp: string }>();
const events = new Map<number, ChangeEvent[]>();
let dir: string;
let state: string;
let serve: string;

describe("cycle, importing with memory: the recorded sequence of the original's periodic imports", () => {
  beforeAll(async () => {
    dir = tempDir();
    state = path.join(dir, "state");
    serve = path.join(dir, "www");
    const last: Partial<Record<"olsr" | "wiki" | "ondataservice", string>> = {};
    for (const step of STEPS) {
      const n = String(step.step).padStart(2, "0");
      // One run of the live job per step, importing what the original imported in that step: a source
      // it did not import is given as unchanged (the last file read, `changed`), so it is not due.
      const spec = (kind: "olsr" | "wiki" | "ondataservice") => {
        const now = sourceOf(step, kind);
        if (now !== undefined) last[kind] = now;
        return last[kind] === undefined ? undefined : { source: last[kind]!, every: now === undefined ? ("changed" as const) : 1 };
      };
      await cycle({
        state,
        serve,
        olsr: spec("olsr"),
        wiki: spec("wiki"),
        ondataservice: spec("ondataservice"),
        sitesEvery: step.imports.includes("sites") ? 1 : 1000,
        at: step.at,
        keep: 30,
        settings: OPTIONS,
      });
      dumps.set(step.step, JSON.parse(readFileSync(path.join(state, "dump", "network.json"), "utf8")) as Record<string, unknown>);
      const history = path.join(state, "dump", "history", "events.ndjson");
      const kept = existsSync(history) ? readFileSync(history, "utf8").trim().split("\n").filter(Boolean) : [];
      events.set(
        step.step,
        kept.map((l) => JSON.parse(l) as ChangeEvent).filter((e) => e.at === step.at),
      );
      const expected: Expected[] = readExpected(`${LIVE}steps/${n}/expected-opennet.ndjson.gz`);
      const overHttp = step === STEPS.at(-1);
      const preview: Preview | undefined = overHttp ? await startPreview({ dir: serve, port: 0 }) : undefined;
      try {
        // The last step over HTTP (the preview on the served link, eight requests at a time), the others
        // from the served build's files through the route table, as conformance.test.ts answers: the
        // HTTP layer is the same for every step (preview.test.ts, the hosts' replays), the files are not.
        let answers: Answer[];
        let ask: (target: string) => Promise<Answer>;
        if (preview) {
          const port = Number(new URL(preview.url).port);
          ask = (target) => get(port, target);
          answers = (
            await rawRequests(
              port,
              expected.map((e) => ({ method: "GET", target: e.path })),
            )
          ).map(asText);
        } else {
          const answer = answerFromBuild(serve);
          ask = async (target) => answer(target);
          answers = expected.map((e) => answer(e.path));
        }
        link42.set(step.step, JSON.parse((await ask("/api/v1/link/42")).body!) as { timestamp: string });
        const ourSites = membersOf(JSON.parse((await ask("/api/v1/site/")).body!));
        const theirSites = membersOf(expected.find((e) => e.path === "/api/v1/site/")!.body);
        const found = expected.map((e, i) => {
          const a = answers[i];
          const text = a.body ?? "";
          // Only an answer that names a site is rewritten (most name none): one without the key cannot
          // match an expected one with it, rewritten or not.
          if (!/"(site|radius)"/.test(text)) return mismatch(e, a);
          let ours = text;
          try {
            ours = JSON.stringify(bySiteMembers(JSON.parse(text), ourSites));
          } catch {
            // not JSON: mismatch says so
          }
          return mismatch({ ...e, body: bySiteMembers(e.body, theirSites) }, { ...a, body: ours });
        });
        const failures = found.filter((f): f is string => f !== undefined);
        results.push({ step: step.step, failures, checked: expected.length, ourSites, theirSites });
      } finally {
        await preview?.close();
      }
    }
  }, 600_000);

  afterAll(() => {
    for (const r of results) console.log(`live-sample step ${r.step}: ${r.checked - r.failures.length} of ${r.checked} expected answers`);
  });

  it("has the nine recorded steps", () => {
    expect(STEPS.map((s) => s.step)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(results).toHaveLength(STEPS.length);
  });

  for (const n of [0, 1, 2, 3, 4, 5, 6, 7, 8]) {
    it(`step ${n}: every expected answer${n === STEPS.length - 1 ? " over HTTP" : " from the served build"}`, () => {
      const r = results.find((x) => x.step === n)!;
      expect(r.checked).toBeGreaterThan(1400);
      expect(r.failures.slice(0, 10)).toEqual([]);
    });
  }

  it("sites keep their ids from step to step, with the recorded members", () => {
    const first = results[0];
    expect(canonical([...first.ourSites.values()])).toBe(canonical([...first.theirSites.values()]));
    for (const r of results.slice(1)) expect([...r.ourSites]).toEqual([...first.ourSites]);
  });

  it("records the changes of each step as the sequence's README describes them", () => {
    // links by their ends, as the README names them; an access point's links go and come with it
    const of178 = ["192.168.1.6", "192.168.1.13", "192.168.2.19", "192.168.1.46"].map((p) => `${p}-192.168.1.178`);
    const of36 = ["192.168.1.27-192.168.1.36", "192.168.1.36-192.168.1.160", "192.168.1.36-192.168.1.188", "192.168.1.36-192.168.1.191"];
    const of64 = ["192.168.2.61-192.168.2.64", "192.168.2.64-192.168.2.65"];
    const of190 = ["192.168.1.43-192.168.1.190", "192.168.2.46-192.168.1.190"];
    const dropped02 = ["192.168.10.2-192.168.1.79", "192.168.2.7-192.168.2.41", "192.168.1.66-192.168.1.157"];
    const silent = [...of36, ...of64];
    const ap = (kind: string, ips: string[]) => ips.map((ip) => `accesspoint.${kind} ${ip}`);
    const link = (kind: string, ends: string[]) => ends.map((e) => `link.${kind} ${e}`);
    const expected: Record<number, string[]> = {
      0: [],
      1: [...ap("silent", ["192.168.1.178", "192.168.1.36", "192.168.2.64"]), ...link("lost", [...of178, ...silent])],
      2: ["accesspoint.appeared 192.168.2.250", "link.appeared 192.168.2.19-192.168.2.250", ...link("lost", dropped02)],
      3: ["accesspoint.firmware 192.168.1.48"],
      4: ["accesspoint.back 192.168.1.178", ...link("back", of178)],
      5: ["accesspoint.silent 192.168.1.190", ...link("lost", of190), "link.back 192.168.2.7-192.168.2.41"],
      6: [...ap("flapping", ["192.168.1.36", "192.168.2.64"]), ...link("flapping", [...silent, dropped02[0], dropped02[2]])],
      7: [...ap("flapping", ["192.168.1.190"]), ...link("flapping", of190)],
      8: [
        ...ap("offline", ["192.168.1.36", "192.168.2.64", "192.168.1.190"]),
        ...link("offline", [...silent, ...of190, dropped02[0], dropped02[2]]),
      ],
    };
    const said = (e: ChangeEvent) => (e.subject.type === "link" ? `${e.kind} ${e.subject.ends!.join("-")}` : `${e.kind} ${e.subject.id}`);
    for (const n of [0, 1, 2, 3, 4, 5, 6, 7, 8]) expect(events.get(n)!.map(said).sort(), `step ${n}`).toEqual([...expected[n]].sort());
    // ids are stable: the same change has the same id in every later state's history
    expect(events.get(1)![0].id).toBe("2026-11-20T10:06:00Z/accesspoint.silent/192.168.1.36");
    expect(events.get(3)![0]).toMatchObject({ before: expect.any(String), after: expect.any(String) });
  });

  it("stamps what an import saw with the step's instant and keeps the rest", () => {
    // link 42 (192.168.10.2–192.168.1.79) left OLSR at step 02: it keeps the instant of step 01 to the end
    expect(link42.get(1)!.timestamp).toBe("2026-11-20T10:06:00Z");
    expect(link42.get(8)!.timestamp).toBe("2026-11-20T10:06:00Z");
    expect(dumps.get(8)).toMatchObject({ taken_at: "2026-12-21T10:00:00Z" });
    // the new access point of step 02 got the next interface, address and link ids
    expect(dumps.get(2)!.last_ids).toEqual({ interface: 493, address: 496, link: 626, site: 21 });
  });
});
