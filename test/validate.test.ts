import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { validate } from "../src/index.ts";
import { formatProblem } from "../src/core/problems.ts";
import { command, tempDir, treeDigest } from "./support/tree.ts";
import { validated } from "./support/dump.ts";
import { synthesize, writeSynthDump } from "../src/gen/synth.ts";
import { HOSTS } from "../src/hosts/index.ts";

/** Broken dumps: every problem is reported with file, line or index, JSON path and a plain message. */

const good = (ip: string, id: number, extra: Record<string, unknown> = {}) => ({
  main_ip: ip,
  interfaces: [{ id, if_name: "wlan0", addresses: [{ id, address: ip, netmask_prefixlen: 16 }] }],
  ...extra,
});

function writeDump(files: Record<string, string>): string {
  const dir = tempDir();
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

const ndjson = (...records: unknown[]) => records.map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join("\n") + "\n";

/** Ten different faults, one per record, each producing exactly one located error. */
export const TEN_FAULTS = {
  "network.json": JSON.stringify({ format: "mesh-topology-dump/1", taken_at: "2026-11-22T12:00:00Z" }),
  "accesspoints/a.ndjson": ndjson(
    good("10.0.0.1", 1),
    '{"main_ip": "10.0.0.2", "interfaces": [}', // 2: malformed JSON
    good("10.0.0.3", 3, { device_memory_free: "lots" }), // 3: wrong type
    good("10.0.0.4", 4, { main_ip: "10.0.0.300" }), // 4: bad IPv4
    good("10.0.0.5", 5, { main_ipv6: "fd00:::1" }), // 5: bad IPv6
    { main_ip: "10.0.0.6", interfaces: [{ id: 6, addresses: [{ id: 6, address: "10.0.0.6", netmask_prefixlen: 33 }] }] }, // 6: prefix
    good("10.0.0.1", 7), // 7: duplicate main_ip
    good("10.0.0.8", 8, { ownr: "Verein" }), // 8: unknown field
    { main_ip: "10.0.0.9", interfaces: [{ id: 1, addresses: [{ id: 90, address: "10.0.0.9", netmask_prefixlen: 16 }] }] }, // 9: duplicate interface id
  ),
  "links/l.json": JSON.stringify([
    {
      id: 1,
      timestamp: "2026-11-22T11:59:00Z",
      endpoints: [
        { interface: 1, quality: 1.5 },
        { interface: 3, quality: 1 },
      ],
    }, // quality
    {
      id: 2,
      timestamp: "2026-11-22T11:59:00Z",
      endpoints: [
        { interface: 1, quality: 1 },
        { interface: 9999, quality: 1 },
      ],
    }, // nothing
  ]),
};

const EXPECTED_TEN = [
  ["accesspoints/a.ndjson:2", "$", "malformed JSON"],
  ["accesspoints/a.ndjson:3", "$.device_memory_free", "expected a number, got string"],
  ["accesspoints/a.ndjson:4", "$.main_ip", "not a valid IPv4 address"],
  ["accesspoints/a.ndjson:5", "$.main_ipv6", "not a valid IPv6 address"],
  ["accesspoints/a.ndjson:6", "$.interfaces[0].addresses[0].netmask_prefixlen", "outside 0..32"],
  ["accesspoints/a.ndjson:7", "$.main_ip", 'duplicate main_ip "10.0.0.1" (first used at accesspoints/a.ndjson:1)'],
  ["accesspoints/a.ndjson:8", "$.ownr", 'unknown field "ownr"; did you mean "owner"?'],
  ["accesspoints/a.ndjson:9", "$.interfaces[0].id", "duplicate interface id 1 (first used at accesspoints/a.ndjson:1)"],
  ["links/l.json [0]", "$.endpoints[0].quality", "between 0 and 1"],
  ["links/l.json [1]", "$.endpoints[1].interface", "no interface has the id 9999"],
];

describe("validation reports every problem, located", () => {
  it("finds the ten seeded faults in one run", async () => {
    const r = await validate({ data: writeDump(TEN_FAULTS) });
    const errors = r.problems.filter((p) => p.severity === "error").map(formatProblem);
    expect(errors).toHaveLength(EXPECTED_TEN.length);
    EXPECTED_TEN.forEach(([where, jsonPath, message], i) => {
      expect(errors[i]).toContain(`${where} ${jsonPath}: `);
      expect(errors[i]).toContain(message);
    });
  });

  it.each([
    [
      "duplicate main_ipv6",
      [good("10.0.0.1", 1, { main_ipv6: "fd00::1" }), good("10.0.0.2", 2, { main_ipv6: "FD00:0::1" })],
      [],
      "[1] $.main_ipv6: duplicate main_ipv6",
    ],
    [
      "duplicate address id",
      [
        good("10.0.0.1", 1),
        { main_ip: "10.0.0.2", interfaces: [{ id: 2, addresses: [{ id: 1, address: "10.0.0.2", netmask_prefixlen: 8 }] }] },
      ],
      [],
      "[1] $.interfaces[0].addresses[0].id: duplicate address id 1",
    ],
    [
      "duplicate link id",
      [good("10.0.0.1", 1), good("10.0.0.2", 2)],
      [
        {
          id: 5,
          endpoints: [
            { interface: 1, quality: 1 },
            { interface: 2, quality: 1 },
          ],
        },
        {
          id: 5,
          endpoints: [
            { interface: 2, quality: 1 },
            { interface: 1, quality: 1 },
          ],
        },
      ],
      "[1] $.id: duplicate link id 5",
    ],
    [
      "three endpoints",
      [good("10.0.0.1", 1)],
      [
        {
          id: 1,
          endpoints: [
            { interface: 1, quality: 1 },
            { interface: 1, quality: 1 },
            { interface: 1, quality: 1 },
          ],
        },
      ],
      "[0] $.endpoints: a link has exactly two endpoints",
    ],
    [
      "one endpoint",
      [good("10.0.0.1", 1)],
      [{ id: 1, endpoints: [{ interface: 1, quality: 1 }] }],
      "[0] $.endpoints: a link has exactly two endpoints",
    ],
    [
      "endpoint address held by nothing",
      [good("10.0.0.1", 1)],
      [
        {
          id: 1,
          endpoints: [
            { interface: 1, quality: 1 },
            { address: "10.9.9.9", quality: 1 },
          ],
        },
      ],
      "[0] $.endpoints[1].address: no interface holds the address 10.9.9.9",
    ],
    [
      "endpoint with both references",
      [good("10.0.0.1", 1)],
      [
        {
          id: 1,
          endpoints: [
            { interface: 1, address: "10.0.0.1", quality: 1 },
            { interface: 1, quality: 1 },
          ],
        },
      ],
      "[0] $.endpoints[0]: an endpoint names exactly one of",
    ],
    ["missing main_ip", [{ interfaces: [] }], [], "[0] $.main_ip: missing required field"],
    ["IPv4 prefix notation", [good("10.0.0.1/24", 1)], [], "[0] $.main_ip: not a valid IPv4 address"],
    [
      "IPv6 prefix out of range",
      [{ main_ip: "10.0.0.1", interfaces: [{ id: 1, addresses: [{ id: 1, address: "fd00::1", netmask_prefixlen: 129 }] }] }],
      [],
      "outside 0..128 for IPv6",
    ],
    ["bad timestamp", [good("10.0.0.1", 1, { lastseen_timestamp: "2026-13-01T00:00:00Z" })], [], "[0] $.lastseen_timestamp: no such date"],
    [
      "unknown interface field",
      [{ main_ip: "10.0.0.1", interfaces: [{ id: 1, if_hwadress: "x", addresses: [] }] }],
      [],
      '$.interfaces[0].if_hwadress: unknown field "if_hwadress"; did you mean "if_hwaddress"?',
    ],
    ["unknown wifi field", [{ main_ip: "10.0.0.1", interfaces: [{ id: 1, wifi: { wifi_sid: "x" } }] }], [], 'did you mean "wifi_ssid"?'],
    [
      "latitude out of range",
      [good("10.0.0.1", 1, { position: { type: "Point", coordinates: [10, 95] } })],
      [],
      "$.position.coordinates[1]: latitude must be between -90 and 90",
    ],
    ["non-integer id", [{ main_ip: "10.0.0.1", interfaces: [{ id: 1.5 }] }], [], "$.interfaces[0].id: expected an integer"],
  ])("%s", (_, aps, links, message) => {
    const v = validated(aps, links);
    const errors = v.problems.filter((p) => p.severity === "error").map(formatProblem);
    expect(v.dump).toBeUndefined();
    expect(errors.join("\n")).toContain(message);
  });

  it("reports an address on two interfaces and two links between one pair as warnings, resolved to the lowest id", () => {
    const v = validated(
      [
        good("10.0.0.1", 2),
        { main_ip: "10.0.0.2", interfaces: [{ id: 1, addresses: [{ id: 9, address: "10.0.0.1", netmask_prefixlen: 16 }] }] },
      ],
      [
        {
          id: 4,
          endpoints: [
            { interface: 2, quality: 1 },
            { interface: 1, quality: 1 },
          ],
        },
        {
          id: 3,
          endpoints: [
            { interface: 1, quality: 1 },
            { interface: 2, quality: 1 },
          ],
        },
      ],
    );
    expect(v.dump).toBeDefined();
    expect(v.problems.every((p) => p.severity === "warning")).toBe(true);
    const text = v.problems.map(formatProblem).join("\n");
    expect(text).toContain(
      "accesspoints/a.json [1] $.interfaces[0].addresses[0].address: address 10.0.0.1 is held by interfaces 1, 2; lookups by this address use interface 1",
    );
    expect(text).toContain("links 3, 4 all join 10.0.0.1 and 10.0.0.2; the link by peers is link 3");
  });

  it("reports malformed JSON files with line and column", async () => {
    const r = await validate({ data: writeDump({ "accesspoints/a.json": "[]", "links/l.json": '[\n {"id": 1,\n  "x" 2}\n]' }) });
    expect(r.problems.map(formatProblem).join("\n")).toMatch(/links\/l\.json \$: malformed JSON: .* at line 3, column \d+/);
  });
});

describe("what validate does for its caller", () => {
  const goodDump = async () => {
    const data = path.join(tempDir(), "dump");
    await writeSynthDump(data, synthesize({ aps: 12, seed: 3 }));
    return data;
  };

  it("calls `loaded` once the model is made, valid or not (the command line tightens the heap's growth there)", async () => {
    for (const data of [await goodDump(), writeDump(TEN_FAULTS)]) {
      let calls = 0;
      const r = await validate({ data, loaded: () => calls++ });
      expect(calls).toBe(1);
      expect(r.problems.some((p) => p.severity === "error")).toBe(r.model === undefined);
    }
  });

  it("reports every host by default, and none with reportHosts: false (a cycle's build), the values kept", async () => {
    const data = await goodDump();
    const all = await validate({ data });
    const none = await validate({ data, reportHosts: false });
    expect(Object.keys(all.hosts)).toEqual(HOSTS.map((h) => h.name));
    expect(none.hosts).toEqual({});
    expect(none.hostWarnings).toEqual([]);
    expect(none.values).toEqual(all.values);
  });
});

describe("validate and build on the command line", () => {
  it("validate reports the ten faults, exits 1, and build leaves the previous output untouched", async () => {
    const data = writeDump(TEN_FAULTS);
    const v = await command(["validate", "--data", data]);
    expect(v.status).toBe(1);
    expect(v.stderr.split("\n").filter((l) => l.startsWith("error: "))).toHaveLength(EXPECTED_TEN.length);

    const out = path.join(tempDir(), "dist");
    const ok = writeDump({ "accesspoints/a.json": JSON.stringify([good("10.0.0.1", 1)]), "links/l.json": "[]" });
    expect((await command(["build", "--data", ok, "--out", out, "--quiet"])).status).toBe(0);
    const before = treeDigest(out);
    expect(before.size).toBeGreaterThan(5);
    const b = await command(["build", "--data", data, "--out", out]);
    expect(b.status).toBe(1);
    expect(b.stderr).toContain("left unchanged");
    expect(treeDigest(out)).toEqual(before);
  });

  it("exits 2 on usage errors and 0 with a summary on success", async () => {
    expect((await command(["build", "--bogus"])).status).toBe(2);
    expect((await command(["frobnicate"])).status).toBe(2);
    const data = writeDump({ "accesspoints/a.json": JSON.stringify(good("10.0.0.1", 1)), "links/l.json": "[]" });
    const r = await command(["validate", "--data", data]);
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/^valid: 2 files, 1 access point, 1 interface, 0 links, 0 sites, 0 warnings/);
    expect((await command(["validate", "--data", data, "--quiet"])).stderr).toBe("");
  });
});
