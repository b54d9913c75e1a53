import { describe, expect, it } from "vitest";
import { bodyPieces } from "../src/core/body.ts";
import { outputFiles } from "../src/core/plan.ts";
import { synthesize } from "../src/gen/synth.ts";
import { ap, model } from "./support/dump.ts";

/** Every file of the plan, its bytes, and what it says it repeats. */
function planned(m: ReturnType<typeof model>) {
  return [...outputFiles(m)].map((f) => ({ path: f.path, sameAs: f.sameAs, bytes: Buffer.concat([...bodyPieces(f.body)]) }));
}

describe("files the plan says repeat another (sameAs, one inode for both names on disk)", () => {
  it.each([
    ["online by default, offline and flapping access points and links, IPv6", "online"],
    ["every status by default", "all"],
  ] as const)("hold the very bytes of an earlier file of the plan, a few files before: %s", (_, defaultStatus) => {
    const dump = synthesize({ aps: 300, seed: 11 });
    const files = planned(model(dump.accesspoints, dump.links, { ...dump.network, default_status: defaultStatus }));
    const index = new Map(files.map((f, i) => [f.path, i]));
    const repeats = files.filter((f) => f.sameAs !== undefined);
    // link pairs, interfaces' access points, IPv6 names, filters that keep every link
    expect(repeats.length).toBeGreaterThan(files.length / 4);
    for (const [i, f] of files.entries()) {
      if (f.sameAs === undefined) continue;
      const target = index.get(f.sameAs);
      expect(target, f.path).toBeLessThan(i);
      expect(i - target!, f.path).toBeLessThan(64);
      expect(f.bytes.equals(files[target!].bytes), `${f.path} repeats ${f.sameAs}`).toBe(true);
    }
    const kinds = new Set(repeats.map((f) => f.path.replace(/[0-9a-f.:]+-[0-9a-f.:]+|[0-9]+(\.[0-9]+){3}|[0-9a-f]*:[0-9a-f:]+/g, "K")));
    expect([...kinds].sort()).toEqual(
      expect.arrayContaining([
        "/api/v1/interface/K/accesspoint/index.json",
        "/api/v1/link/K/index.json",
        "/api/v1/accesspoint/K/index.json",
      ]),
    );
  });

  it("names the list file a filter repeats when it keeps every item, in the same order, and only then", () => {
    const dump = synthesize({ aps: 300, seed: 11 });
    const settings = { ...dump.network, default_status: "online" as const };
    const list = (status: string) => `/api/v1/accesspoint/_q/status/${status}/index.json`;
    const some = planned(model(dump.accesspoints, dump.links, settings));
    const at = (files: typeof some, p: string) => files.find((f) => f.path === p)!;
    // some access points are offline: the online ones are a file of their own
    expect(at(some, list("online")).sameAs).toBeUndefined();
    expect(at(some, list("online")).bytes.equals(at(some, "/api/v1/accesspoint/index.json").bytes)).toBe(false);
    // every one seen at the dump's instant: the online file is the whole list, the offline and flapping ones the same empty list
    const seen = dump.accesspoints.map((a) => ({ ...a, lastseen_timestamp: dump.network.taken_at }));
    const all = planned(model(seen, dump.links, settings));
    expect(at(all, list("online")).sameAs).toBe("/api/v1/accesspoint/index.json");
    const empty = [list("online"), list("flapping"), list("offline")].map((p) => at(all, p)).filter((f) => f.bytes.toString() === "[]");
    expect(empty).toHaveLength(2);
    // (the empty list written last before it, of whichever filter: the writer links to a recent file)
    expect(at(all, empty[1].sameAs!).bytes.toString()).toBe("[]");
  });

  it("never claims a repeat where the bytes differ: an access point's links with the default status are a file of their own when one link lacks it", () => {
    const at = "2026-11-20T10:00:00Z";
    const iface = (id: number, address: string) => ({ id, addresses: [{ id, address, netmask_prefixlen: 16 }] });
    const m = model(
      [ap("10.0.0.1", {}, [iface(1, "10.0.0.1")]), ap("10.0.0.2", {}, [iface(2, "10.0.0.2")]), ap("10.0.0.3", {}, [iface(3, "10.0.0.3")])],
      [
        {
          id: 1,
          endpoints: [
            { interface: 1, quality: 1 },
            { interface: 2, quality: 1 },
          ],
          timestamp: at,
        },
        {
          id: 2,
          endpoints: [
            { interface: 1, quality: 1 },
            { interface: 3, quality: 1 },
          ],
          timestamp: "2026-10-01T10:00:00Z",
        },
      ],
      { format: "mesh-topology-dump/1", taken_at: at, default_status: "online" },
    );
    const files = planned(m);
    const of = (p: string) => files.find((f) => f.path === p)!;
    const byStatus = (ip: string) => of(`/api/v1/accesspoint/${ip}/links/_q/status/online/index.json`);
    expect(byStatus("10.0.0.1").sameAs).toBeUndefined();
    expect(byStatus("10.0.0.2").sameAs).toBe("/api/v1/accesspoint/10.0.0.2/links/index.json");
    expect(byStatus("10.0.0.3").sameAs).toBeUndefined();
    expect(byStatus("10.0.0.3").bytes.toString()).toBe("[]");
  });
});
