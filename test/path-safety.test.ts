import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, startPreview, type Preview } from "../src/index.ts";
import { fileKey } from "../src/core/values/names.ts";
import { fileFor } from "../src/core/routes.ts";
import { rawRequest } from "./support/http.ts";
import { loadNetlify, type NetlifySite } from "./support/netlify.ts";
import { ROOT, tempDir } from "./support/tree.ts";
import type { BuildResult } from "../src/index.ts";
import { netlifyRules } from "../src/hosts/netlify.ts";

/**
 * Values from strangers' routers as SSIDs, firmware versions and MACs: each maps to a distinct file
 * inside dist/api/v1/ and stays reachable through the route table (preview and, where a _redirects
 * line can express it, Netlify), or is refused with a clear message.
 */
const HOSTILE = [
  "../../index",
  "a/b",
  "%2F",
  ".",
  "..",
  "...",
  "x".repeat(300),
  "ü".repeat(150),
  "AA:BB",
  "aa:bb",
  "Aa:Bb",
  "CON",
  "con",
  "nul.txt",
  "com1",
  "a b",
  "a=b",
  ":lead",
  "#hash",
  "?q=1",
  "a&b",
  "Ünïcödé 📡",
  "tab\there",
  "nul\u0000byte",
  "back\\slash",
  "Z10",
  "z10",
  "index.json",
  "_q",
  "_null",
  "_5A",
  "trail.",
  " lead",
  "\u202eevil",
];

let out: string;
let result: BuildResult;
let preview: Preview;
let port: number;
let netlify: NetlifySite;

beforeAll(async () => {
  const data = tempDir();
  mkdirSync(path.join(data, "accesspoints"));
  const aps = HOSTILE.map((v, i) => ({
    main_ip: `10.9.${i >> 8}.${(i & 255) + 1}`,
    mesh_version: v,
    interfaces: [
      {
        id: i + 1,
        if_name: "wlan0",
        if_hwaddress: v,
        addresses: [{ id: i + 1, address: `10.9.${i >> 8}.${(i & 255) + 1}`, netmask_prefixlen: 16 }],
        wifi: { wifi_ssid: v },
      },
    ],
  }));
  writeFileSync(path.join(data, "accesspoints/hostile.json"), JSON.stringify(aps));
  mkdirSync(path.join(data, "links"));
  writeFileSync(path.join(data, "links/l.ndjson"), "");
  out = path.join(tempDir(), "dist");
  result = await build({ data, out });
  preview = await startPreview({ dir: out, port: 0 });
  port = Number(new URL(preview.url).port);
  netlify = await loadNetlify(path.join(ROOT, "netlify.toml"), out);
});

afterAll(() => preview?.close());

const PARAMS = [
  { param: "wifi_ssid", list: "/api/v1/interface/", fold: false, file: "interfaceListBySsid", placeholder: "ssid" },
  { param: "if_hwaddress", list: "/api/v1/interface/", fold: true, file: "interfaceListByMac", placeholder: "mac" },
  { param: "firmware_version", list: "/api/v1/accesspoint/", fold: false, file: "accesspointListByVersion", placeholder: "version" },
] as const;

describe("path safety of values from routers", () => {
  for (const { param, list, fold, file: template, placeholder } of PARAMS) {
    it(`${param}: every value has a distinct file inside dist/api/v1/, reachable through the route table`, async () => {
      const root = path.join(out, "api/v1") + path.sep;
      const keys = new Map<string, string>();
      const table: string[] = [];
      for (const [i, value] of HOSTILE.entries()) {
        const v = fold ? value.toLowerCase() : value;
        const key = fileKey(v);
        const file = path.join(out, fileFor(template, { [placeholder]: value }));
        expect(path.resolve(file).startsWith(root), value).toBe(true);
        expect(existsSync(file), `${JSON.stringify(value)} -> ${key}`).toBe(true);
        // Distinct values have distinct keys, also on case-insensitive file systems.
        const other = keys.get(key.toLowerCase());
        if (other !== undefined) expect(fold ? other.toLowerCase() : other).toBe(v);
        keys.set(key.toLowerCase(), value);

        const target = `${list}?${param}=${encodeURIComponent(value)}`;
        const r = await rawRequest(port, "GET", target);
        expect(r.status, target).toBe(200);
        const body = JSON.parse(r.body.toString()) as { main_ip?: string; addresses?: { id: number }[] }[];
        const own =
          param === "firmware_version"
            ? body.some((a) => a.main_ip === `10.9.${i >> 8}.${(i & 255) + 1}`)
            : body.some((x) => x.addresses?.[0]?.id === i + 1);
        expect(own, target).toBe(true);

        const n = netlify.answer(target);
        const listed = netlifyRules(result.values!).inexpressible.some(
          (x) => x.param === param && x.value === (fold ? value.toLowerCase() : value),
        );
        const served = "body" in n && n.status === 200 && n.body!.equals(r.body);
        const mixedCase = fold && value !== value.toLowerCase() && value !== value.toUpperCase(); // README: rules for lower and upper case only
        expect(served || listed || mixedCase, `${target}: Netlify neither serves it nor lists it`).toBe(true);
        table.push(
          `${JSON.stringify(value).slice(0, 24).padEnd(26)} ${key.slice(0, 40).padEnd(42)} ${served ? "netlify" : "preview only (listed)"}`,
        );
      }
      expect(table).toHaveLength(HOSTILE.length);
    });
  }

  it("never writes a name that is ., .., hidden, too long, or holds characters a host rejects", () => {
    const names = readdirRecursive(path.join(out, "api/v1"));
    for (const n of names) {
      expect(n === "." || n === ".." || n.startsWith(".")).toBe(false);
      expect(Buffer.byteLength(n)).toBeLessThanOrEqual(255);
      expect(n).not.toMatch(/[#?%\\\u0000-\u001f\u007f/]/);
    }
  });

  it("refuses a lone surrogate with a located message instead of colliding with U+FFFD", async () => {
    const data = tempDir();
    mkdirSync(path.join(data, "accesspoints"));
    writeFileSync(
      path.join(data, "accesspoints/a.ndjson"),
      '{"main_ip":"10.0.0.1","interfaces":[{"id":1,"wifi":{"wifi_ssid":"\\ud800"}}]}\n',
    );
    mkdirSync(path.join(data, "links"));
    writeFileSync(path.join(data, "links/l.ndjson"), "");
    await expect(build({ data, out: path.join(tempDir(), "dist") })).rejects.toMatchObject({
      problems: [expect.objectContaining({ path: "$.interfaces[0].wifi.wifi_ssid", message: expect.stringContaining("lone surrogate") })],
    });
  });
});

function readdirRecursive(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      out.push(e.name);
      if (e.isDirectory()) walk(path.join(d, e.name));
    }
  };
  walk(dir);
  return out;
}
