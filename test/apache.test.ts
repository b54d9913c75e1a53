import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPreview, type Preview } from "../src/index.ts";
import { placeholderValues } from "../src/core/plan.ts";
import { API } from "../src/core/routes.ts";
import { APACHE_LIMITS, apacheLimits, apacheOverlong } from "../src/hosts/apache.ts";
import { startApache } from "./support/apache.ts";
import { describeHost } from "./support/hosts-replay.ts";
import { GET, otherRequests, sameAnswer, SHARED_LIMITS, split, type Request, type RunningServer } from "./support/served.ts";
import { previewAnswersOnce } from "./support/answers.ts";
import { rawRequest, rawRequests, type RawResponse } from "./support/http.ts";
import { sharedBuild } from "./support/shared.ts";

/**
 * Debian's Apache, started as a child process with the configuration `host-config apache --standalone`
 * prints for the build it serves, answers every request like the preview (test/support/hosts-replay.ts).
 * A difference is a failure unless it is one of Apache's listed limits (APACHE_LIMITS, docs/hosting.md).
 */

/** Which limit explains a difference, from the request alone; undefined if none does. */
function limitOf(r: Request, p: RawResponse, n: RawResponse): keyof typeof APACHE_LIMITS | undefined {
  const { rawPath } = split(r);
  if (SHARED_LIMITS.assetType(r, p, n)) return "assetType";
  if (r.target.length > 8190 && p.status === 414 && n.status === 414) return "longTarget";
  if (/%00/.test(rawPath) && p.status === 400 && n.status === 404) return "encodedNul";
  if (/%2F/i.test(rawPath) && n.status === 404) return "encodedSlash";
  if (rawPath.split("/").some((s) => /^(?:\.|%2E){1,2}$/i.test(s))) return "dotSegments";
  const location = (x: RawResponse) => x.headers.location?.replace(/%[0-9A-F]{2}/gi, (e) => e.toUpperCase());
  if (p.status === 301 && n.status === 301 && p.body.equals(n.body) && location(p) === location(n)) return "redirectHexCase";
  return undefined;
}

describeHost({
  name: "apache",
  start: startApache,
  overlong: apacheOverlong,
  limitOf,
  // Three asset types, map.js, leaflet.css and the reference's docs.js (GET, HEAD).
  otherLimits: { assetType: 6 },
});

describe("Apache's warnings", () => {
  it("warns of no hostile value (every one folds letter by letter), but of a letter whose case folds to two", async () => {
    const values = placeholderValues((await sharedBuild("hostile")).model);
    expect(apacheLimits(values)).toEqual([]);
    const strasse = { ...values, values: { ...values.values, mac: ["straße"] } };
    expect(apacheLimits(strasse).map((w) => w.message)).toEqual([`if_hwaddress="straße": ${APACHE_LIMITS.caseFolding}`]);
  });
});

describe("Apache beyond the replay", () => {
  let preview: Preview;
  let served: RunningServer;
  let model: Awaited<ReturnType<typeof sharedBuild>>["model"];
  beforeAll(async () => {
    let out: string;
    ({ out, model } = await sharedBuild("data"));
    preview = await startPreview({ dir: out, port: 0 });
    served = await startApache(out, placeholderValues(model), { vhost: true });
  }, 120_000);
  afterAll(async () => {
    await Promise.all([served?.stop(), preview?.close()]);
  });
  const previewPort = () => Number(new URL(preview.url).port);
  const both = (r: Request) => Promise.all([rawRequest(previewPort(), r.method, r.target), rawRequest(served.port, r.method, r.target)]);

  it("the block included in a <VirtualHost>, as docs/hosting.md shows it, answers like the preview", async () => {
    const requests = otherRequests(model);
    const previews = await previewAnswersOnce("data", requests, () => rawRequests(previewPort(), requests));
    const answers = await rawRequests(served.port, requests);
    const differ = requests.filter((r, i) => !sameAnswer(previews[i], answers[i]) && limitOf(r, previews[i], answers[i]) !== "assetType");
    expect(differ).toEqual([]);
  });

  it("answers the listed limits as docs/hosting.md says, each recognised from the request", async () => {
    const ap = model.accesspoints[0].main_ip;
    const cases: [string, keyof typeof APACHE_LIMITS][] = [
      [`${API}/accesspoint/%C3%A9/links`, "redirectHexCase"],
      [`${API}/accesspoint/a%00b`, "encodedNul"],
      [`${API}/accesspoint/${ap}%2Flinks/`, "encodedSlash"],
      [`${API}/link/../accesspoint/${ap}`, "dotSegments"],
      [`${API}/accesspoint/?status=${"a".repeat(8200)}`, "longTarget"],
    ];
    for (const [target, limit] of cases) {
      const [p, n] = await both(GET(target));
      expect(sameAnswer(p, n), target).toBe(false);
      expect(limitOf(GET(target), p, n), target).toBe(limit);
    }
  });
});
