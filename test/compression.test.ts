import { describe, expect, it } from "vitest";
import { acceptsGzip, hasTwin, isTwin, TWIN, twinOf, varyWithTwin } from "../src/core/routes.ts";

/** The precompressed answers' rule (core/routes/compression.ts, issue 45): which files get a gzip twin, and who is sent it. */
describe("gzip twins", () => {
  it("are made for served text from TWIN.minBytes on, never for images, archives or the build's own records", () => {
    const at = TWIN.minBytes;
    expect(hasTwin("/api/v1/link/index.json", at)).toBe(true);
    expect(hasTwin("/api/v1/link/index.json", at - 1)).toBe(false);
    expect(hasTwin("/api/v1/accesspoint/_q/status/online/index.json", at)).toBe(true);
    for (const f of ["/index.html", "/map/leaflet/leaflet.js", "/map/leaflet/leaflet.css", "/feeds/changes.atom", "/metrics"])
      expect(hasTwin(f, at), f).toBe(true);
    for (const f of [
      "/map/leaflet/images/layers.png",
      "/snapshots/mesh-api-v1-2026-11-21.tar.gz",
      "/.mesh-api-files.json",
      "/_mesh-api-routing.json",
      "/x/metrics.txt",
    ])
      expect(hasTwin(f, 10 * at), f).toBe(false);
    expect(twinOf("/metrics")).toBe("/metrics.gz");
    expect(isTwin("api/v1/link/index.json.gz")).toBe(true);
    expect(isTwin("snapshots/mesh-api-v1-2026-11-21.tar.gz")).toBe(false);
    expect(isTwin(".mesh-api-files.json.gz")).toBe(false);
  });

  it("are sent to a client whose Accept-Encoding accepts gzip (RFC 9110 12.5.3), and to no other", () => {
    const yes = [
      "gzip",
      "GZIP",
      "gzip, deflate, br",
      "br;q=1.0, gzip;q=0.8, *;q=0.1",
      "x-gzip",
      "*",
      "deflate, *;q=0.5",
      " gzip ; q=0.001",
    ];
    const no = [undefined, "", "identity", "deflate", "br", "compress", "gzip;q=0", "gzip; q=0.000", "*;q=0", "*, gzip;q=0", "gzip;q=0, *"];
    for (const h of yes) expect(acceptsGzip(h), String(h)).toBe(true);
    for (const h of no) expect(acceptsGzip(h), String(h)).toBe(false);
    expect(acceptsGzip(["br", "gzip"])).toBe(true);
  });

  it("say that the answer varies with Accept-Encoding, beside the API's own Vary", () => {
    expect(varyWithTwin("Accept")).toBe("Accept, Accept-Encoding");
    expect(varyWithTwin(undefined)).toBe("Accept-Encoding");
  });
});
