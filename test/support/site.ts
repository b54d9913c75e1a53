import path from "node:path";
import { build, startPreview, type BuildResult, type Preview } from "../../src/index.ts";
import { PUBLIC_SAMPLE } from "./expected.ts";
import { tempDir } from "./tree.ts";

/** The public sample built into a fresh folder and served by the preview on an ephemeral loopback port. */
export interface SampleSite {
  readonly out: string;
  readonly result: BuildResult;
  readonly preview: Preview;
  readonly port: number;
}

/**
 * A community's Freifunk API settings (build --freifunk-api): the builds that must answer every path
 * form of the route table write the file, which only an operator's template makes.
 */
export const FREIFUNK_API_SETTINGS = {
  outputs: {
    "freifunk-api": {
      source: "community.json",
      template: {
        name: "Freifunk Test",
        url: "https://example.org/",
        location: { city: "Rostock", geoCode: { lat: 54.09, lon: 12.12 } },
        contact: { email: "mesh@example.org" },
      },
      siteUrl: "https://api.example.org/",
    },
  },
} as const;

export async function sampleSite(): Promise<SampleSite> {
  const out = path.join(tempDir(), "dist");
  const result = await build({ data: `${PUBLIC_SAMPLE}dump`, out, settings: FREIFUNK_API_SETTINGS });
  const preview = await startPreview({ dir: out, port: 0 });
  return { out, result, preview, port: Number(new URL(preview.url).port) };
}
