import { describe, expect, it } from "vitest";
import { placeholderValues, type PlaceholderValues } from "../src/core/plan.ts";
import { rulesFor } from "../src/core/routes.ts";
import { compileRules, keyLookup, pathPattern, printTarget, queryPattern, type Dialect } from "../src/hosts/compiled.ts";
import { literals } from "../src/hosts/literals.ts";
import { literalPatterns } from "../src/hosts/patterns.ts";
import { ap, model } from "./support/dump.ts";

/** The compiled form the web servers print (src/hosts/compiled.ts), checked on its own. */

const PCRE: Dialect = { group: (name, body) => `(?<${name}>${body})`, slash: "/", literal: (v) => v };

/** A network whose one interface carries this hardware address. */
function withMac(mac: string): PlaceholderValues {
  const iface = { id: 1, if_hwaddress: mac, addresses: [{ id: 1, address: "10.1.0.1", netmask_prefixlen: 16 }] };
  return placeholderValues(model([ap("10.1.0.1", {}, [iface])]));
}

describe("the compiled route table", () => {
  const table = compileRules(rulesFor({ defaultStatus: "all" }));

  it("compiles a table once, and reads each rule's tests, data placeholder and file parts", () => {
    expect(compileRules(rulesFor({ defaultStatus: "all" }))).toBe(table);
    const bySsid = table.rules.find((r) => r.rule.query.wifi_ssid === ":ssid")!;
    expect(bySsid.data).toEqual({ param: "wifi_ssid", name: "ssid" });
    expect(bySsid.to).toEqual([{ text: "/api/v1/interface/_q/wifi_ssid/" }]);
    expect(bySsid.rest).toEqual([{ text: "/index.json" }]);
    const versionStatus = table.rules.find((r) => r.rule.query.firmware_version === ":version" && r.rule.query.status === ":status")!;
    expect(new Map(versionStatus.query).get("status")).toEqual({ is: "own", name: "status" });
    expect(versionStatus.rest).toEqual([{ text: "/status/" }, { query: "status" }, { text: "/index.json" }]);
    const links = table.rules.find((r) => r.rule.from.endsWith(":ip/links/") && r.rule.to !== null)!;
    expect(links.list).toBe(true);
    expect(printTarget(links.to, (p) => `<${"path" in p ? `${p.path}#${p.index}` : p.query}>`)).toBe(
      "/api/v1/accesspoint/<ip#0>/links/index.json",
    );
    const refused = table.rules.find((r) => r.rule.to === null && r.rule.query.status === ":status")!;
    expect(refused.closed).toBe(true);
    expect(new Map(refused.query).get("status")).toEqual({ is: "present" });
    expect(table.params).toEqual([...table.params].sort());
    expect(table.data).toEqual(["after", "bound", "mac", "ssid", "version"]);
  });

  it("writes a rule's query and path in a dialect", () => {
    const rule = table.rules.find((r) => r.rule.query.wifi_ssid === ":ssid")!;
    const query = new RegExp(`^${queryPattern(table, rule, true, { ...PCRE, valueGroup: "v" })}$`);
    const states = table.params.map((p) => (p === "wifi_ssid" ? "=Mesh%20One" : "-")).join("&");
    expect(query.exec(states)?.groups?.v).toBe("=Mesh%20One");
    const path = (slash: "" | "/" | "any" | "captured", dialect: Dialect) => new RegExp(`^${pathPattern(rule.rule.from, slash, dialect)}$`);
    expect(path("/", PCRE).test("/api/v1/interface/")).toBe(true);
    expect(path("/", PCRE).test("/api/v1//interface/")).toBe(false);
    expect(path("/", { ...PCRE, slash: "/+" }).test("/api/v1//interface//")).toBe(true);
    expect(path("captured", PCRE).exec("/api/v1/interface")?.groups?.mesh_slash).toBe("");
    const detail = table.rules.find((r) => r.rule.from === "/api/v1/interface/:ip")!;
    expect(new RegExp(`^${pathPattern(detail.rule.from, "", PCRE)}$`).exec("/api/v1/interface/10.1.0.1")?.groups?.mesh_p_ip).toBe(
      "10.1.0.1",
    );
  });
});

describe("folding values (MACs) on the web servers", () => {
  it("get one pattern per value, which matches it in any letter case, not one per spelling of the literal rules", () => {
    const values = withMac("AA:BB");
    // the literal rules (what Netlify, which cannot fold, writes) hold both spellings
    expect(new Set([...literals(values)].filter((l) => l.param === "if_hwaddress").map((l) => l.value))).toEqual(
      new Set(["aa:bb", "AA:BB"]),
    );
    const patterns = literalPatterns(values, "mac");
    expect(patterns.size).toBe(1);
    const [[pattern, key]] = [...patterns];
    expect(key).toBe("aa_3Abb");
    for (const spelling of ["aa:bb", "AA:BB", "aA%3aBb", "Aa%3AbB"]) expect(new RegExp(`^${pattern}$`).test(spelling)).toBe(true);
    expect(keyLookup("mac", values, { lowers: false }).literals).toEqual(patterns);
  });

  it("keep a pattern per spelling when a letter folds to several (ß and SS match different spellings)", () => {
    expect(literalPatterns(withMac("straße"), "mac").size).toBe(2);
  });

  it("need no pattern for a MAC of six hex pairs on a server that lowers values, one on a server that cannot", () => {
    const values = withMac("AA:BB:CC:DD:EE:0F");
    expect(keyLookup("mac", values, { lowers: true }).literals.size).toBe(0);
    expect([...keyLookup("mac", values, { lowers: false }).literals.values()]).toEqual(["aa_3Abb_3Acc_3Add_3Aee_3A0f"]);
  });
});
