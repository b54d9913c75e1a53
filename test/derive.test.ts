import { describe, expect, it } from "vitest";
import { statusOf } from "../src/core/model/model.ts";
import { fileKey, isOwnKey } from "../src/core/values/names.ts";
import { pyFloat, pyFloatLayout } from "../src/core/values/pyfloat.ts";
import { renderLink, renderSite, sitePostAddress } from "../src/core/model/resources.ts";
import { fixedDecimal } from "../src/core/values/text.ts";
import { parseInstant, type Instant } from "../src/core/values/timestamp.ts";
import { canonicalIp, compareIp } from "../src/core/values/ip.ts";
import { peersKey } from "../src/core/model/validator.ts";
import { Address4, Address6 } from "ip-address";
import { compareVersionKeys, isAfter, isBefore, versionKey } from "../src/core/values/version.ts";
import { beforeValues } from "../src/core/filters/bounds.ts";
import { outputFiles } from "../src/core/plan.ts";
import { accesspointFeature, linkFeature, siteFeature } from "../src/core/model/geojson.ts";
import { withoutRedundantSiteLinks } from "../src/core/model/sitelinks.ts";
import { getIssues } from "@placemarkio/check-geojson";
import { ap, answers, at, model } from "./support/dump.ts";

const json = (text: string) => JSON.parse(text);

/** Two requests answered alike by `get` (answers()): each an answer, as two 404s read alike too, with the same body. */
function expectSame(get: ReturnType<typeof answers>, target: string, like: string): void {
  const [answer, reference] = [get(target), get(like)];
  expect(answer, `${target}: 404`).toBeDefined();
  expect(reference, `${like}: 404`).toBeDefined();
  expect(answer, `${target} answers as ${like}`).toBe(reference);
}
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

  it("takes the short way only where it writes what the layout from the digits writes", () => {
    // Random doubles of every exponent the data has and beyond, and the neighbours of both switches.
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const xs = [1e-4, 1e16, 1e-4 * (1 - 2 ** -52), 1e16 - 2, 0.5, 99, 2 ** 53, 12.0];
    for (let i = 0; i < 20_000; i++) xs.push((random() - 0.5) * 10 ** Math.floor(random() * 44 - 22));
    const differ = xs.flatMap((x) => [x, -x]).filter((x) => pyFloat(x) !== pyFloatLayout(x));
    expect(differ).toEqual([]);
    // and the layout takes the case the short way would write differently
    expect(String(1e-5)).toBe("0.00001");
    expect(pyFloat(1e-5)).toBe("1e-05");
  });
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

  it("gives the same instant for a text parsed again (kept), and for one no longer kept", () => {
    const first = instant("2026-11-22T11:27:49.564935Z");
    expect(instant("2026-11-22T11:27:49.564935Z")).toBe(first);
    for (let i = 0; i < 5000; i++) instant(`2026-11-22T11:27:49.${String(i).padStart(6, "0")}Z`);
    expect(instant("2026-11-22T11:27:49.564935Z")).toEqual(first);
  });

  it("rejects what is not an instant", () => {
    for (const t of ["2026-11-22", "2026-02-30T00:00:00Z", "2026-11-22T11:27:49", "yesterday", "2026-11-22T24:00:00Z"]) {
      expect(typeof parseInstant(t)).toBe("string");
    }
  });
});

describe("addresses in their canonical text", () => {
  it("a dotted quad without leading zeros is its own text; any other as ip-address writes it", () => {
    // the general way, which the short way for canonical dotted quads must agree with
    const general = (text: string) =>
      text.includes("/") || text.includes("%")
        ? undefined
        : Address4.isValid(text)
          ? { address: new Address4(text).correctForm(), family: "inet" }
          : Address6.isValid(text)
            ? { address: new Address6(text).correctForm(), family: "inet6" }
            : undefined;
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    const octet = () => {
      const n = next() % 300; // some above 255
      return next() % 5 === 0 ? String(n).padStart(3, "0") : String(n);
    };
    const texts = Array.from({ length: 20_000 }, () => [octet(), octet(), octet(), octet()].join("."));
    texts.push("1.2.3.4\n", " 1.2.3.4", "1.2.3", "1.2.3.4.5", "1.2.3.4/24", "0.0.0.0", "::1", "::ffff:1.2.3.4", "2001:DB8::1");
    texts.push(":::", "1:2", "2001:db8::g", "1.2.3.4:80", "::ffff:1.2.3.04", "fe80:0:0:0:0:0:0:1", "1::2::3", "");
    for (const text of texts) expect(canonicalIp(text)).toEqual(general(text));
  });

  it("compareIp and peersKey order dotted quads by their numbers, then IPv6 addresses", () => {
    const key = (t: string) =>
      t.includes(":")
        ? "6" + new Address6(t).canonicalForm()
        : "4" +
          t
            .split(".")
            .map((o) => o.padStart(3, "0"))
            .join(".");
    const reference = (a: string, b: string) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
    let seed = 11;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    const texts = Array.from({ length: 2_000 }, () => Array.from({ length: 4 }, () => String(next() % 256)).join("."));
    texts.push("10.0.0.1", "10.0.0.1", "9.255.255.255", "::1", "2001:db8::1", "2001:db8::", "1.2.3");
    for (let i = 0; i + 1 < texts.length; i++) {
      const [a, b] = [texts[i], texts[texts.length - 1 - i]];
      expect(Math.sign(compareIp(a, b))).toBe(reference(a, b));
      expect(peersKey(a, b)).toBe([a, b].sort(reference).join(" "));
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
    ["1", [1, 0]], // one number is a version too, as the original's pattern has it
    ["0.5.1-1036-AB12F", []], // its build hash is lower-case hex only
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

describe("firmware_version__after", () => {
  const m = model([
    ap("10.0.0.1", { mesh_version: "0.4-5" }),
    ap("10.0.0.2", { mesh_version: "0.5.1-unstable-845" }),
    ap("10.0.0.3", { mesh_version: "" }),
    ap("10.0.0.4", { mesh_version: "opennet0.10.sdk" }),
    ap("10.0.0.5", { mesh_version: "opennet0.6.sdk" }),
    ap("10.0.0.6"),
  ]);
  const get = answers(m);
  const ips = (target: string) => {
    const body = get(target);
    return body === undefined ? undefined : (json(body) as { main_ip: string }[]).map((a) => a.main_ip);
  };

  it("keeps non-null versions that are not before the bound: the bound itself, later ones and the empty version", () => {
    const after = (v: string | null, bound: string) => isAfter(v, versionKey(bound));
    expect(after("0.4-5", "0.4-5")).toBe(true);
    expect(after("0.5.1-unstable-845", "0.4-5")).toBe(true);
    expect(after("opennet0.6.sdk", "0.4-5")).toBe(false);
    expect(after("", "0.4-5")).toBe(true); // the original never counts "" as before anything
    expect(after(null, "0.4-5")).toBe(false);
    expect(after("garbage", "opennet0.10.sdk")).toBe(true); // an unparseable bound keeps every non-null version
  });

  it("is precomputed for the bounds of __before, alone and with status; an empty value is no filter", () => {
    expect(ips("/api/v1/accesspoint/?firmware_version__after=0.4-5")).toEqual(["10.0.0.1", "10.0.0.2", "10.0.0.3"]);
    expect(ips("/api/v1/accesspoint/?firmware_version__after=opennet0.6.sdk")).toEqual(["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.5"]);
    expect(ips("/api/v1/accesspoint/?firmware_version__after=opennet0.10.sdk")).toEqual([
      "10.0.0.1",
      "10.0.0.2",
      "10.0.0.3",
      "10.0.0.4",
      "10.0.0.5",
    ]);
    expect(ips("/api/v1/accesspoint/?firmware_version__after=1.0")).toEqual(["10.0.0.3"]);
    expect(ips("/api/v1/accesspoint/?firmware_version__after=0.5&status=offline")).toEqual(["10.0.0.2", "10.0.0.3"]);
    expect(ips("/api/v1/accesspoint/?firmware_version__after=0.5&status=online")).toEqual([]);
    expect(ips("/api/v1/accesspoint/?firmware_version__after=")).toHaveLength(6);
    // Every unparseable bound, present or not, has the answer of the present one.
    expect(ips("/api/v1/accesspoint/?firmware_version__after=garbage")).toEqual(
      ips("/api/v1/accesspoint/?firmware_version__after=opennet0.10.sdk"),
    );
    // A parseable bound the data does not hold answers as the first bound at or after it (0.5).
    expect(ips("/api/v1/accesspoint/?firmware_version__after=0.4.7")).toEqual(ips("/api/v1/accesspoint/?firmware_version__after=0.5"));
    expect(ips("/api/v1/accesspoint/?firmware_version__after=0.4.7")).toEqual(["10.0.0.2", "10.0.0.3"]);
    // Not precomputed: two firmware filters at once.
    expect(ips("/api/v1/accesspoint/?firmware_version__after=0.5&firmware_version__before=1.0")).toBeUndefined();
    expect(ips("/api/v1/accesspoint/?firmware_version__after=0.5&firmware_version=0.4-5")).toBeUndefined();
  });

  it("answers bounds with the same result from one file (aliases)", () => {
    expectSame(get, "/api/v1/accesspoint/?firmware_version__after=0.5.1-unstable-845", "/api/v1/accesspoint/?firmware_version__after=0.5");
    const files = [...outputFilesOf(m)].filter((p) => p.includes("firmware_version__after/") && !p.includes("/status/"));
    expect(new Set(files.map((p) => p.split("/")[6])).size).toBe(files.length);
    expect(files.some((p) => p.includes("/0.5.1-unstable-845/"))).toBe(false);
  });
});

describe("is_wireless on the interface list", () => {
  const m = model([
    ap("10.0.0.1", {}, [
      { id: 1, if_name: "wlan0", addresses: [{ id: 1, address: "10.0.0.1", netmask_prefixlen: 16 }] },
      { id: 2, if_name: "eth0", wifi: { wifi_ssid: "x" } },
      { id: 3, if_name: "eth1" },
      { id: 4, if_name: "ath0", wifi: { wifi_ssid: null } },
    ]),
  ]);
  const get = answers(m);
  const count = (target: string) => (json(get(target)!) as unknown[]).length;

  it("selects by wifi attributes, as the original does: a wlan0 without them is not wireless here", () => {
    const list = (value: string) => (json(get(`/api/v1/interface/?is_wireless=${value}`)!) as { if_name: string }[]).map((i) => i.if_name);
    expect(list("true")).toEqual(["eth0", "ath0"]);
    expect(list("false")).toEqual(["wlan0", "eth1"]);
  });

  it("accepts true/false in any letter case and 1/0; an empty value is no filter; anything else is refused", () => {
    for (const v of ["true", "TRUE", "True", "tRuE", "1"])
      expectSame(get, `/api/v1/interface/?is_wireless=${v}`, "/api/v1/interface/?is_wireless=true");
    for (const v of ["false", "FALSE", "False", "fAlSe", "0"])
      expectSame(get, `/api/v1/interface/?is_wireless=${v}`, "/api/v1/interface/?is_wireless=false");
    expect(count("/api/v1/interface/?is_wireless=")).toBe(4);
    for (const v of ["maybe", "yes", "2", "t", " true"])
      expect(get(`/api/v1/interface/?is_wireless=${encodeURIComponent(v)}`), v).toBeUndefined();
    // With another interface filter: not precomputed.
    expect(get("/api/v1/interface/?is_wireless=true&wifi_ssid=x")).toBeUndefined();
  });
});

describe("with_redundant_site_links", () => {
  const TAKEN = "2026-11-22T12:00:00Z";
  const ONLINE = "2026-11-22T11:59:00Z";
  const OFFLINE = "2026-01-01T00:00:00Z";
  const node = (ip: string, site: number | null, id: number) =>
    ap(ip, { site }, [{ id, addresses: [{ id, address: ip, netmask_prefixlen: 16 }] }]);
  const link = (id: number, a: number, b: number, timestamp: string) => ({
    id,
    timestamp,
    endpoints: [
      { interface: a, quality: 1 },
      { interface: b, quality: 1 },
    ],
  });
  const m = model(
    [
      node("10.0.1.1", 1, 11),
      node("10.0.1.2", 1, 12),
      node("10.0.2.1", 2, 21),
      node("10.0.2.2", 2, 22),
      node("10.0.3.1", 3, 31),
      node("10.0.9.1", null, 91),
    ],
    [
      link(1, 11, 21, ONLINE), // sites 1-2: two online links make the pair redundant ...
      link(2, 12, 22, ONLINE),
      link(3, 11, 22, OFFLINE), // ... and every link between them goes, an offline one too
      link(4, 11, 31, ONLINE), // sites 1-3: one online link
      link(5, 31, 21, OFFLINE), // sites 2-3: two links, but not online
      link(6, 31, 22, OFFLINE),
      link(7, 11, 12, ONLINE), // within site 1
      link(8, 91, 11, ONLINE), // an access point without a site
      link(9, 91, 12, ONLINE),
    ],
    { format: "mesh-topology-dump/1", taken_at: TAKEN },
  );
  const get = answers(m);
  const linkIds = (target: string) => (json(get(target)!) as { id: number }[]).map((l) => l.id);

  it("leaves out every link between two sites joined by more than one online link", () => {
    expect(withoutRedundantSiteLinks(m).map((l) => l.id)).toEqual([4, 5, 6, 7, 8, 9]);
    expect(linkIds("/api/v1/link/?with_redundant_site_links=0")).toEqual([4, 5, 6, 7, 8, 9]);
  });
  it("combines with status: the pairs are decided by online links, the status filters what remains", () => {
    expect(linkIds("/api/v1/link/?with_redundant_site_links=0&status=online")).toEqual([4, 7, 8, 9]);
    expect(linkIds("/api/v1/link/?with_redundant_site_links=0&status=offline")).toEqual([5, 6]);
    expect(linkIds("/api/v1/link/?with_redundant_site_links=0&status=all")).toEqual([4, 5, 6, 7, 8, 9]);
  });
  it("changes nothing with 1 (the default) or any other value", () => {
    for (const v of ["1", "", "yes", "00"]) expectSame(get, `/api/v1/link/?with_redundant_site_links=${v}`, "/api/v1/link/");
    expectSame(get, "/api/v1/link/?with_redundant_site_links=1&status=online", "/api/v1/link/?status=online");
  });
  it("also as GeoJSON", () => {
    const ids = (target: string) =>
      (json(get(target)!) as { features: { properties: { id: number } }[] }).features.map((f) => f.properties.id);
    expect(ids("/api/v1/link/?data_format=geojson&with_redundant_site_links=0")).toEqual([4, 5, 6, 7, 8, 9]);
    expect(ids("/api/v1/link/?with_redundant_site_links=0&data_format=geojson&status=online")).toEqual([4, 7, 8, 9]);
  });
});

describe("GeoJSON (data_format=geojson)", () => {
  const HOSTILE = `a,"position":null,"owner":"x","site":9}\\`;
  const m = model(
    [
      ap("10.0.0.1", {
        position: at(12, 54.5),
        site: 1,
        post_address: HOSTILE,
        antenna: '"',
        owner: ',"device_board":',
        device_model: "\\",
        mesh_version: "0.4-5",
      }),
      ap("10.0.0.2", { position: at(12.25, 54), site: 1, firmware_type: null }),
      ap("10.0.0.3", { position: at(12.25, 54), site: 2 }),
      ap("10.0.0.4", { site: 3 }),
    ],
    [
      {
        id: 1,
        timestamp: "2026-11-22T11:00:00Z",
        endpoints: [
          { address: "10.0.0.2", quality: 0.5 },
          { address: "10.0.0.1", quality: 0.3 },
        ],
      },
      {
        id: 2,
        endpoints: [
          { address: "10.0.0.2", quality: 1 },
          { address: "10.0.0.3", quality: 1 },
        ],
      },
      {
        id: 3,
        endpoints: [
          { address: "10.0.0.1", quality: 1 },
          { address: "10.0.0.4", quality: 1 },
        ],
      },
    ],
  );
  const byIp = (ip: string) => m.accesspoints.find((a) => a.main_ip === ip)!;
  const link = (id: number) =>
    json(
      linkFeature(
        m.links.find((l) => l.id === id)!,
        m,
      ).toString(),
    );

  it("an access point: its position as geometry; every other field as properties, site after lastseen_timestamp", () => {
    for (const a of m.accesspoints) {
      const plain = json(a.json.toString());
      const feature = json(accesspointFeature(a).toString());
      expect(Object.keys(feature)).toEqual(["type", "geometry", "properties"]);
      expect(feature.type).toBe("Feature");
      expect(feature.geometry).toEqual(plain.position);
      const { position: _position, ...rest } = plain;
      expect(feature.properties).toEqual(rest);
      const keys = Object.keys(rest).filter((k) => k !== "site");
      keys.splice(keys.indexOf("lastseen_timestamp") + 1, 0, "site");
      expect(Object.keys(feature.properties)).toEqual(keys);
    }
    expect(json(accesspointFeature(byIp("10.0.0.1")).toString()).properties.post_address).toBe(HOSTILE);
    expect(json(accesspointFeature(byIp("10.0.0.4")).toString()).geometry).toBeNull();
    expect(json(accesspointFeature(byIp("10.0.0.2")).toString()).properties.firmware_type).toBeNull();
  });

  it("a link: a LineString through its endpoints' positions in endpoint order, null under two; its facts as properties", () => {
    expect(link(1)).toEqual({
      type: "Feature",
      geometry: {
        type: "LineString",
        coordinates: [
          [12.25, 54],
          [12, 54.5],
        ],
      },
      properties: {
        endpoints: ["10.0.0.2", "10.0.0.1"],
        id: 1,
        timestamp: "2026-11-22T11:00:00Z",
        quality: 0.15,
        is_wireless: false,
        wifi_ssid: null,
      },
    });
    expect(Object.keys(link(1).properties)).toEqual(["endpoints", "id", "timestamp", "quality", "is_wireless", "wifi_ssid"]);
    expect(link(2).geometry).toEqual({
      type: "LineString",
      coordinates: [
        [12.25, 54],
        [12.25, 54],
      ],
    }); // equal positions stay two points
    expect(link(3).geometry).toBeNull();
    expect(linkFeature(m.links[0], m).toString()).toContain('"coordinates":[[12.25,54.0],[12.0,54.5]]');
  });

  it("a site: the Point of its position (null when no member has one), its members and id", () => {
    const site = (id: number) => json(siteFeature(m.sites.find((s) => s.id === id)!).toString());
    expect(site(1)).toEqual({
      type: "Feature",
      geometry: { type: "Point", coordinates: [12.125, 54.25] },
      properties: { accesspoints: ["10.0.0.1", "10.0.0.2"], id: 1 },
    });
    expect(site(3).geometry).toBeNull();
  });

  it("lists are FeatureCollections, valid by RFC 7946 (checked by @placemarkio/check-geojson), alone and with status", () => {
    const get = answers(m);
    for (const list of ["accesspoint", "link", "site"]) {
      for (const status of ["", "&status=all", "&status=offline", "&status=online"]) {
        if (list === "site" && status) continue;
        const body = get(`/api/v1/${list}/?data_format=geojson${status}`)!;
        expect(getIssues(body), `${list} ${status}`).toEqual([]);
        expect(Object.keys(json(body))).toEqual(["type", "features"]);
      }
    }
    expect(json(get("/api/v1/accesspoint/?data_format=geojson")!).features).toHaveLength(4);
    expect(get("/api/v1/accesspoint/?data_format=geojson&status=online")).toBe('{"type":"FeatureCollection","features":[]}');
  });

  it("only the exact lower-case value selects it; every other endpoint ignores it", () => {
    const get = answers(m);
    expectSame(get, "/api/v1/accesspoint/?data_format=GeoJSON", "/api/v1/accesspoint/");
    expectSame(get, "/api/v1/link/?data_format=json", "/api/v1/link/");
    for (const path of [
      "/api/v1/interface/",
      "/api/v1/accesspoint/10.0.0.1",
      "/api/v1/accesspoint/10.0.0.1/links/",
      "/api/v1/link/1",
      "/api/v1/site/1",
    ])
      expectSame(get, `${path}?data_format=geojson`, path);
    // Site list: status is ignored there, as every other parameter.
    expectSame(get, "/api/v1/site/?data_format=geojson&status=online", "/api/v1/site/?data_format=geojson");
    // With a firmware filter: not precomputed; an empty __before or __after is no filter.
    expect(get("/api/v1/accesspoint/?data_format=geojson&firmware_version=0.4-5")).toBeUndefined();
    expect(get("/api/v1/accesspoint/?data_format=geojson&firmware_version__before=0.5")).toBeUndefined();
    expectSame(get, "/api/v1/accesspoint/?data_format=geojson&firmware_version__after=", "/api/v1/accesspoint/?data_format=geojson");
  });
});

describe("in_bbox", () => {
  const get = answers(model([ap("10.0.0.1", { position: at(12, 54), site: 1 })]));
  it("is ignored on every list with any value, also beside other filters: the answer is that of the request without it", () => {
    for (const list of ["accesspoint", "link", "site", "interface"])
      for (const [withBox, without] of [
        ["in_bbox=12.0,54.0,12.2,54.2", ""],
        ["in_bbox=garbage", ""],
        ["in_bbox=", ""],
        ["status=all&in_bbox=1,2,3,4", "status=all"],
        ["in_bbox=1,2,3,4&data_format=geojson", "data_format=geojson"],
      ]) {
        expectSame(get, `/api/v1/${list}/?${withBox}`, `/api/v1/${list}/?${without}`);
      }
    // A box far from the one access point still gets it: a superset, never a cut.
    expect(get("/api/v1/accesspoint/?in_bbox=-10,-10,-9,-9&status=all")).toContain("10.0.0.1");
  });
});

function* outputFilesOf(m: ReturnType<typeof model>): Generator<string> {
  for (const f of outputFiles(m)) yield f.path;
}

describe("the rendered JSON the model keeps", () => {
  it("is packed into shared blocks, a long text alone", () => {
    const huge = "x".repeat(600_000);
    const m = model([ap("10.0.0.1"), ap("10.0.0.2", { post_address: huge })], []);
    expect(m.interfaces).toHaveLength(2);
    for (const e of [...m.accesspoints, ...m.interfaces]) expect(() => JSON.parse(e.json.toString("utf8"))).not.toThrow();
    const [short, long] = m.accesspoints;
    expect(short.json.toString("utf8")).toContain('"main_ip":"10.0.0.1"');
    // the short texts share one block larger than Node.js's pool (8 KiB); the long one has its own
    const blocks = new Set([short, ...m.interfaces].map((e) => e.json.buffer));
    expect(blocks.size).toBe(1);
    expect(short.json.buffer.byteLength).toBeGreaterThan(Buffer.poolSize);
    expect(long.json.buffer).not.toBe(short.json.buffer);
    expect(long.json.toString("utf8")).toContain(huge);
  });
});
