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
export function hostileDump(): string {
  const data = tempDir();
  mkdirSync(path.join(data, "accesspoints"));
  const aps = HOSTILE.map((v, i) => ({
    main_ip: `10.9.0.${i + 1}`,
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
export function hostileTargets(): string[] {
  const targets: string[] = [];
  for (const [param, list] of HOSTILE_LISTS)
    for (const v of HOSTILE)
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
