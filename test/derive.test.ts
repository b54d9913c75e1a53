import { describe, expect, it } from "vitest";
import { statusOf } from "../src/core/model.ts";
import { fileKey, isOwnKey } from "../src/core/names.ts";
import { pyFloat } from "../src/core/pyfloat.ts";
import { renderLink, renderSite, sitePostAddress } from "../src/core/resources.ts";
import { fixedDecimal } from "../src/core/text.ts";
import { parseInstant, type Instant } from "../src/core/timestamp.ts";
import { compareVersionKeys, isBefore, versionKey } from "../src/core/version.ts";
import { beforeValues } from "../src/core/plan.ts";
import { ap, at, model } from "./support/dump.ts";

const json = (text: string) => JSON.parse(text);
const instant = (t: string) => parseInstant(t) as Instant;

describe("floats are written the way Python writes them", () => {
  it.each([
    [1, "1.0"],
    [12, "12.0"],
    [0.148, "0.148"],
    [1e-5, "1e-05"],
    [0.0001, "0.0001"],
    [1e16, "1e+16"],
    [1e15, "1000000000000000.0"],
    [-2.5, "-2.5"],
    [22.360679774997898, "22.360679774997898"],
    [0.1 + 0.2, "0.30000000000000004"],
    [-0, "-0.0"],
    [1.5e-7, "1.5e-07"],
    [1.7976931348623157e308, "1.7976931348623157e+308"],
  ])("%s -> %s", (x, text) => expect(pyFloat(x)).toBe(text));
});

describe("timestamps keep microseconds and render like isoformat()", () => {
  it.each([
    ["2026-11-22T11:27:49.564935Z", "2026-11-22T11:27:49.564935Z"],
    ["2026-11-22T12:27:49.564935+01:00", "2026-11-22T11:27:49.564935Z"],
    ["2026-11-22T11:27:49.5Z", "2026-11-22T11:27:49.500000Z"],
    ["2026-11-22T11:27:49.1234569Z", "2026-11-22T11:27:49.123456Z"],
    ["2026-11-22T11:27:49Z", "2026-11-22T11:27:49Z"],
    ["2026-11-22T11:27:49.000000Z", "2026-11-22T11:27:49Z"],
    ["2026-11-22T01:00:00-0230", "2026-11-22T03:30:00Z"],
  ])("%s -> %s", (input, text) => expect(instant(input).text).toBe(text));

  it("rejects what is not an instant", () => {
    for (const t of ["2026-11-22", "2026-02-30T00:00:00Z", "2026-11-22T11:27:49", "yesterday", "2026-11-22T24:00:00Z"]) {
      expect(typeof parseInstant(t)).toBe("string");
    }
  });
});

describe("decimal text fields", () => {
  it("wifi_freq has three and wifi_bitrate one fraction digit, from numbers or text", () => {
    expect(fixedDecimal(2412, 3)).toBe("2412.000");
    expect(fixedDecimal("5.54", 3)).toBe("5.540");
    expect(fixedDecimal(54, 1)).toBe("54.0");
    expect(fixedDecimal("130.0", 1)).toBe("130.0");
    expect(fixedDecimal("2.0005", 3)).toBe("2.000"); // half to even, like Decimal.quantize
    expect(fixedDecimal("2.0015", 3)).toBe("2.002");
    expect(fixedDecimal("9.9996", 3)).toBe("10.000");
    expect(fixedDecimal("abc", 3)).toBeUndefined();
  });
});

describe("status relative to taken_at", () => {
  const taken = instant("2026-11-22T12:00:00Z");
  it.each([
    ["2026-11-22T11:30:00.000001Z", "online"],
    ["2026-11-22T11:30:00Z", "flapping"],
    ["2026-10-23T12:00:00Z", "flapping"],
    ["2026-10-23T11:59:59.999999Z", "offline"],
    ["2026-11-22T13:00:00Z", "online"],
  ])("seen %s -> %s", (seen, status) => expect(statusOf(instant(seen), taken)).toBe(status));
  it("never seen is offline", () => expect(statusOf(null, taken)).toBe("offline"));
});

describe("firmware version keys", () => {
  it.each([
    ["opennet0.6.sdk", [-1, 6]],
    ["opennet0.0.sdk", [-1, 0]],
    ["opennet0.10.sdk", []],
    ["opennet0.sdk", []],
    ["0.5.1-unstable-845", [0, 5, 1, -1, 845]],
    ["0.5.1-1036-ab12f", [0, 5, 1, 0, 1036]],
    ["0.4-5", [0, 4, 0, 5]],
    ["0.5", [0, 5, 0]],
    ["1.0.2", [1, 0, 2, 0]],
    ["garbage", []],
    ["", []],
  ])("%s -> %j", (v, key) => expect(versionKey(v)).toEqual(key));

  it("compares element-wise with a proper prefix first", () => {
    expect(compareVersionKeys([0, 5], [0, 5, 0])).toBeLessThan(0);
    expect(compareVersionKeys([-1, 6], [0, 3, 0, 10])).toBeLessThan(0);
    expect(compareVersionKeys([0, 5, 1, -1, 845], [0, 5, 1, 0, 1])).toBeLessThan(0);
    expect(compareVersionKeys([], [])).toBe(0);
  });

  it("__before keeps non-empty versions that sort before the bound", () => {
    const bound = versionKey("0.5");
    expect(isBefore("0.4-5", bound)).toBe(true);
    expect(isBefore("opennet0.6.sdk", bound)).toBe(true);
    expect(isBefore("garbage", bound)).toBe(true); // () sorts before everything non-empty
    expect(isBefore("0.5.1-unstable-845", bound)).toBe(false);
    expect(isBefore("", bound)).toBe(false);
    expect(isBefore(null, bound)).toBe(false);
    expect(isBefore("0.4-5", versionKey("garbage"))).toBe(false);
  });

  it("opennet0.<two digits>.sdk is unparseable: it sorts before every parseable version, and no boundaries come from it", () => {
    const m = model([
      ap("10.0.0.1", { mesh_version: "opennet0.10.sdk" }),
      ap("10.0.0.2", { mesh_version: "opennet0.1.sdk" }),
      ap("10.0.0.3", { mesh_version: "0.4-5" }),
    ]);
    const before = (bound: string) => m.accesspoints.filter((a) => isBefore(a.mesh_version, versionKey(bound))).map((a) => a.main_ip);
    expect(before("opennet0.1.sdk")).toEqual(["10.0.0.1"]);
    expect(before("0.4-5")).toEqual(["10.0.0.1", "10.0.0.2"]);
    expect(before("opennet0.10.sdk")).toEqual([]); // () is below nothing
    expect(beforeValues(m.accesspoints.map((a) => a.mesh_version))).toEqual([
      "opennet0.10.sdk",
      "opennet0.1.sdk",
      "0.4",
      "0.4-5",
      "0.5",
      "1.0",
    ]);
  });

  it("precomputes present versions and release-line boundaries", () => {
    expect(beforeValues(["0.5.1-unstable-845", "0.4-5", null, ""])).toEqual([
      "0.4",
      "0.4-5",
      "0.5",
      "0.5.1-unstable-845",
      "0.5.1",
      "0.5.2",
      "0.6",
      "1.0",
    ]);
  });
});

describe("firmware_type", () => {
  it('is "OpenWrt" when the record does not carry it, null when it says null, and kept otherwise', () => {
    const m = model([
      ap("10.0.0.1"),
      ap("10.0.0.2", { firmware_type: null }),
      ap("10.0.0.3", { firmware_type: "AirOS" }),
      ap("10.0.0.4", { firmware_type: "" }),
    ]);
    expect(m.accesspoints.map((a) => json(a.json.toString()).firmware_type)).toEqual(["OpenWrt", null, "AirOS", ""]);
    expect(m.accesspoints[1].json.toString()).toContain('"firmware_type":null,');
  });
});

describe("interfaces", () => {
  const m = model([
    ap("10.0.0.1", {}, [
      { id: 1, if_name: "WLAN0", addresses: [{ id: 1, address: "10.0.0.1", netmask_prefixlen: 16 }] },
      {
        id: 2,
        if_name: "eth0",
        addresses: [{ id: 2, address: "2001:DB8:0::1", netmask_prefixlen: 64 }],
        wifi: { wifi_ssid: "x", wifi_freq: 2412 },
      },
      { id: 3, if_name: "eth1", if_hwaddress: "AA:bb:cc:dd:ee:ff" },
      { id: 4, if_name: "ath0" },
    ]),
  ]);
  const iface = (id: number) => json(m.interfaceById.get(id)!.json.toString());

  it("is wireless with wifi attributes or a wlan/ath name (any case)", () => {
    expect([1, 2, 3, 4].map((id) => iface(id).is_wireless)).toEqual([true, true, false, true]);
  });
  it("carries wifi attributes as a one-element list with the interface id, decimals as text", () => {
    expect(iface(1).wifi_attributes).toEqual([]);
    const w = iface(2).wifi_attributes;
    expect(w).toHaveLength(1);
    expect(w[0].interface).toBe(2);
    expect(w[0].wifi_freq).toBe("2412.000");
    expect(w[0].wifi_bssid).toBeNull();
  });
  it("derives family and canonical address text, and names the owner by main_ip", () => {
    expect(iface(2).addresses).toEqual([{ id: 2, address: "2001:db8::1", family: "inet6", netmask_prefixlen: 64, interface: 2 }]);
    expect(iface(1).accesspoint).toBe("10.0.0.1");
    expect(Object.keys(iface(1))).toEqual(["addresses", "if_name", "if_hwaddress", "is_wireless", "wifi_attributes", "accesspoint"]);
  });
});

describe("links", () => {
  const m = model(
    [
      ap("10.0.0.1", { position: at(12, 54.5) }, [
        { id: 1, addresses: [{ id: 1, address: "10.0.0.1", netmask_prefixlen: 16 }], wifi: { wifi_ssid: "" } },
      ]),
      ap("10.0.0.2", { position: at(12.25, 54) }, [
        { id: 2, addresses: [{ id: 2, address: "10.0.0.2", netmask_prefixlen: 16 }], wifi: { wifi_ssid: "meshy" } },
      ]),
      ap("10.0.0.3", { position: at(12, 53) }),
      ap("10.0.0.4"),
    ],
    [
      {
        id: 7,
        timestamp: "2026-11-22T11:00:00Z",
        endpoints: [
          { interface: 1, quality: 0.1 },
          { address: "10.0.0.2", quality: 0.7 },
        ],
      },
      {
        id: 8,
        timestamp: null,
        endpoints: [
          { address: "10.0.0.3", quality: 1 },
          { interface: 1, quality: 0.5 },
        ],
      },
      {
        id: 9,
        endpoints: [
          { address: "10.0.0.3", quality: 1 },
          { address: "10.0.0.4", quality: 1 },
        ],
      },
      {
        id: 10,
        endpoints: [
          { address: "10.0.0.2", quality: 1 },
          { address: "10.0.0.1", quality: 1 },
        ],
      },
    ],
  );
  const link = (id: number) =>
    renderLink(
      m.links.find((l) => l.id === id)!,
      m,
    ).toString();

  it("multiplies endpoint qualities in dump order without rounding", () => {
    expect(json(link(7)).quality).toBe(0.1 * 0.7);
    expect(link(7)).toContain(`"quality":${pyFloat(0.1 * 0.7)}`);
    expect(link(8)).toContain('"quality":0.5,');
  });
  it("takes the first non-empty SSID, else null, and is wireless when an endpoint is", () => {
    expect(json(link(7))).toMatchObject({ wifi_ssid: "meshy", is_wireless: true });
    expect(json(link(9))).toMatchObject({ wifi_ssid: null, is_wireless: false });
  });
  it("maps longitude text to latitude in endpoint order; one key for equal longitudes; null under two positions", () => {
    expect(link(7)).toContain('"position":{"12.0":54.5,"12.25":54.0}');
    expect(link(8)).toContain('"position":{"12.0":54.5}');
    expect(json(link(9)).position).toBeNull();
  });
  it("keeps endpoint order and embeds full interfaces", () => {
    const l = json(link(8));
    expect(l.endpoints.map((e: { interface: { accesspoint: string } }) => e.interface.accesspoint)).toEqual(["10.0.0.3", "10.0.0.1"]);
    expect(Object.keys(l)).toEqual(["endpoints", "id", "is_wireless", "position", "quality", "timestamp", "wifi_ssid"]);
  });
  it("indexes links by access point once each, and by peers in both orders with the lowest id", () => {
    expect(m.linksByAccesspoint.get("10.0.0.1")!.map((l) => l.id)).toEqual([7, 8, 10]);
    expect(m.linkByPeers.get("10.0.0.1-10.0.0.2")!.id).toBe(7);
    expect(m.linkByPeers.get("10.0.0.2-10.0.0.1")!.id).toBe(7);
  });
});

describe("sites", () => {
  const members = (n: number, site: number, extra: (i: number) => Record<string, unknown> = () => ({})) =>
    Array.from({ length: n }, (_, i) => ap(`10.${site}.0.${i + 1}`, { site, ...extra(i) }));
  const m = model([
    ...members(4, 1, (i) => ({ position: i < 2 ? at(10 + i, 50) : null, post_address: ["b", "a", "", "a"][i] })),
    ...members(9, 2, (i) => ({ post_address: i % 2 ? "x" : "y" })),
    ...members(5, 3, (i) => ({ post_address: ["Zoo", "Ärger", "", "Zoo", "Ärger"][i] })),
  ]);
  const site = (id: number) => json(renderSite(m.sites.find((s) => s.id === id)!));

  it("radius is the integer 20 up to four members, else 20*sqrt(n/4) as a float", () => {
    expect(renderSite(m.sites[0])).toContain('"radius":20}');
    expect(renderSite(m.sites[1])).toContain('"radius":30.0}');
    expect(site(3).radius).toBe(20 * Math.sqrt(5 / 4));
  });
  it("position is the mean of the members with a position, or null", () => {
    expect(site(1).position).toEqual({ type: "Point", coordinates: [10.5, 50] });
    expect(site(2).position).toBeNull();
  });
  it("post_address is the most frequent non-empty one, ties to the greatest string (by code point)", () => {
    expect(site(1).post_address).toBe("a");
    expect(site(2).post_address).toBe("y");
    expect(site(3).post_address).toBe("Ärger");
    expect(sitePostAddress({ id: 0, members: [] })).toBe("");
  });
  it("lists member main_ips", () => {
    expect(site(1).accesspoints).toEqual(["10.1.0.1", "10.1.0.2", "10.1.0.3", "10.1.0.4"]);
  });
});

describe("file-name keys for values from routers", () => {
  it("keeps plain lower-case values and escapes everything else injectively", () => {
    expect(fileKey("0.5.1-unstable-845")).toBe("0.5.1-unstable-845");
    expect(fileKey("Z10")).toBe("_5A10");
    expect(fileKey("a b")).toBe("a_20b");
    expect(fileKey("../../index")).toBe("_2E._2F.._2Findex");
    expect(fileKey(".")).toBe("_2E");
    expect(fileKey("_5A")).toBe("_5F5_41");
    expect(fileKey("x".repeat(300))).toMatch(/^_H[0-9a-f]{64}$/);
    expect(isOwnKey("abc")).toBe(true);
    expect(isOwnKey("ABC")).toBe(false);
  });
  it("never produces keys that differ only in case", () => {
    const values = ["AA:BB", "aa:bb", "Aa:bB", "Z", "z", "_5A", "_5a", "ü", "Ü"];
    const keys = values.map(fileKey);
    expect(new Set(keys.map((k) => k.toLowerCase())).size).toBe(values.length);
  });
});
