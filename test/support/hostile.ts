import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { tempDir } from "./tree.ts";

/** Filter values a `_redirects` line cannot hold, or that look like query syntax, as SSIDs, firmware versions and MACs. */
export const HOSTILE = [
  "Café Meshtest",
  "on-i.de Nord",
  "a=b",
  "=lead",
  "x y=z",
  "a+b",
  "a+b c",
  " lead",
  "trail ",
  "two  spaces",
  "tab\there",
  "new\nline",
  "nul\u0000byte",
  "100%",
  "a&b",
  "#hash",
  "?q=1",
  "Ünïcödé 📡",
  "back\\slash",
  '"quoted"',
  "Z10",
  "AA:BB",
  "Aa:Bb",
  ":lead",
  ": lead",
  "x\u007fy",
];

/** The lists each hostile value is a filter of: [parameter, list path]. */
export const HOSTILE_LISTS = [
  ["wifi_ssid", "/api/v1/interface/"],
  ["if_hwaddress", "/api/v1/interface/"],
  ["firmware_version", "/api/v1/accesspoint/"],
] as const;

/** A dump of one access point per hostile value, which is its firmware version, SSID and hardware address. */
export function hostileDump(values: readonly string[] = HOSTILE): string {
  const data = tempDir();
  mkdirSync(path.join(data, "accesspoints"));
  const aps = values.map((v, i) => ({
    main_ip: `10.9.${i >> 8}.${(i & 255) + 1}`,
    mesh_version: v,
    interfaces: [
      {
        id: i + 1,
        if_name: "wlan0",
        if_hwaddress: v,
        addresses: [{ id: i + 1, address: `10.9.0.${i + 1}`, netmask_prefixlen: 16 }],
        wifi: { wifi_ssid: v },
      },
    ],
  }));
  writeFileSync(path.join(data, "accesspoints/hostile.json"), JSON.stringify(aps));
  mkdirSync(path.join(data, "links"));
  writeFileSync(path.join(data, "links/l.ndjson"), "");
  return data;
}

/** Each value of each list in its own, lower- and upper-case spelling, a space as %20 and as +, and with parameters no rule names. */
export function hostileTargets(values: readonly string[] = HOSTILE): string[] {
  const targets: string[] = [];
  for (const [param, list] of HOSTILE_LISTS)
    for (const v of values)
      for (const spelled of new Set([v, v.toLowerCase(), v.toUpperCase()])) {
        const enc = encodeURIComponent(spelled);
        targets.push(
          `${list}?${param}=${enc}`,
          `${list}?${param}=${enc.replace(/%20/g, "+")}`,
          `${list}?${param}=${enc}&status=all&format=api`,
        );
      }
  return targets;
}

/**
 * Seeded values of 0 to 10,000 characters a router might report, for the server configurations: every
 * Unicode plane, control characters, quotes, braces, backslashes, `$`, `%`, `;`, `#` and the servers'
 * own words, at lengths around each server's limits. The same seed gives the same values. No letter
 * whose case folds to several (ß): that is a limit of its own (caseFolding), tested apart.
 */
export function longHostileValues(seed: number, count = 14): string[] {
  let state = seed >>> 0 || 1;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
  const pools = [
    " \"'{}$%;#\\&=?+/:",
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~",
    "\u0001\u0009\u000a\u000d\u001b\u007f\u0085\u00a0",
    "éÄçøñ€‰\u2028\u2029\ufeff",
    "😀📡𝄞𠀀\u{1f9ff}\u{10fffd}",
  ];
  const words = ["location", "RewriteRule", "} server {", "if (", "$host", "${x}", "{path}", "%{QUERY_STRING}", "\\", "*/", "#"];
  const lengths = [0, 1, 60, 180, 260, 450, 520, 700, 1_000, 1_900, 2_100, 4_000, 7_000, 10_000];
  // by code point, counted as the value grows (spreading the value at each step made this quadratic)
  const points = pools.map((p) => [...p]);
  const wordPoints = words.map((w) => [...w].length);
  const out = new Set<string>();
  for (let i = 0; out.size < count && i < count * 4; i++) {
    const length = lengths[i % lengths.length];
    let v = "";
    for (let n = 0; n < length;) {
      if (next() < 0.05) {
        const w = Math.floor(next() * words.length);
        v += words[w];
        n += wordPoints[w];
      } else {
        const pool = points[Math.floor(next() * points.length)];
        v += pool[Math.floor(next() * pool.length)];
        n += 1;
      }
    }
    v = [...v].slice(0, length).join("");
    // the dump's texts are trimmed of nothing, but a value must be a filter value: not empty
    if (v !== "") out.add(v);
  }
  return [...out];
}
