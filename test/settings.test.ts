import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BRAND_RULE } from "../src/core/settings.ts";
import { PUBLIC_SAMPLE } from "./support/expected.ts";
import { command, tempDir } from "./support/tree.ts";

/**
 * The site settings over the CLI: `--brand` and `--default-status`, what network.json names, and which
 * wins. The answers are read from the files the route table serves (the HTTP side is clients.test.ts).
 */

function dump(network: Record<string, unknown>): string {
  const dir = path.join(tempDir(), "dump");
  cpSync(`${PUBLIC_SAMPLE}dump`, dir, { recursive: true });
  const file = path.join(dir, "network.json");
  writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, "utf8")), ...network }));
  return dir;
}

const read = (out: string, file: string) => JSON.parse(readFileSync(path.join(out, file), "utf8")) as Record<string, unknown>[];
const AP_LIST = "api/v1/accesspoint/index.json";
const ONLINE = "api/v1/accesspoint/_q/status/online/index.json";

describe("build --brand and --default-status", () => {
  it("refuse a brand that is not letters and digits, and an unknown default, as usage errors before any work", async () => {
    for (const [args, says] of [
      [["--brand", "open-net"], BRAND_RULE],
      [["--brand", ""], BRAND_RULE],
      [["--brand", "open_net"], BRAND_RULE],
      [["--default-status", "flapping"], "all, online"],
    ] as const) {
      const out = path.join(tempDir(), "dist");
      const r = await command(["build", "--data", `${PUBLIC_SAMPLE}dump`, "--out", out, ...args, "-q"]);
      expect(r.status, args.join(" ")).toBe(2);
      expect(r.stderr).toContain(says);
      expect(existsSync(out)).toBe(false);
    }
  });

  it("take the brand and the list default from network.json, and the options over it", async () => {
    const data = dump({ brand: "opennet", default_status: "online" });
    const named = path.join(tempDir(), "dist");
    expect((await command(["build", "--data", data, "--out", named, "-q"])).status).toBe(0);
    expect(Object.keys(read(named, AP_LIST)[0])).toContain("opennet_version");
    expect(Object.keys(read(named, AP_LIST)[0])).not.toContain("mesh_version");
    expect(readFileSync(path.join(named, ".mesh-api-aliases.json"), "utf8")).toContain('"default_status":"online"');
    expect(read(named, ONLINE)).toHaveLength(280);

    const overridden = path.join(tempDir(), "dist");
    expect((await command(["build", "--data", data, "--out", overridden, "--brand", "mesh", "--default-status", "all", "-q"])).status).toBe(
      0,
    );
    expect(Object.keys(read(overridden, AP_LIST)[0])).toContain("mesh_version");
    expect(readFileSync(path.join(overridden, ".mesh-api-aliases.json"), "utf8")).not.toContain("default_status");
  });

  it("with the defaults writes the sample byte for byte as without the options", async () => {
    const plain = path.join(tempDir(), "dist");
    const given = path.join(tempDir(), "dist");
    expect((await command(["build", "--data", `${PUBLIC_SAMPLE}dump`, "--out", plain, "-q"])).status).toBe(0);
    expect(
      (await command(["build", "--data", `${PUBLIC_SAMPLE}dump`, "--out", given, "--brand", "mesh", "--default-status", "all", "-q"]))
        .status,
    ).toBe(0);
    for (const file of [AP_LIST, "api/v1/openapi.json", "map/index.html", ".mesh-api-aliases.json", "api/v1/netjson/networkgraph.json"])
      expect(readFileSync(path.join(given, file)).equals(readFileSync(path.join(plain, file))), file).toBe(true);
  });

  it("names a network.json brand that is not letters and digits as invalid input, located", async () => {
    const r = await command(["validate", "--data", dump({ brand: "on-i" })]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/network\.json.*\$\.brand/);
  });

  it("the brand reaches the OpenAPI schemas, the NetJSON graph and the map's settings", async () => {
    const out = path.join(tempDir(), "dist");
    expect((await command(["build", "--data", `${PUBLIC_SAMPLE}dump`, "--out", out, "--brand", "opennet", "-q"])).status).toBe(0);
    const openapi = readFileSync(path.join(out, "api/v1/openapi.json"), "utf8");
    expect(openapi).toContain('"opennet_version"');
    expect(openapi).not.toContain('"mesh_version"');
    expect(readFileSync(path.join(out, "api/v1/netjson/networkgraph.json"), "utf8")).toContain('"opennet_version":');
    expect(readFileSync(path.join(out, "map/index.html"), "utf8")).toContain('"versionField":"opennet_version"');
  });
});
