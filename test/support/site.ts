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

export async function sampleSite(): Promise<SampleSite> {
  const out = path.join(tempDir(), "dist");
  const result = await build({ data: `${PUBLIC_SAMPLE}dump`, out });
  const preview = await startPreview({ dir: out, port: 0 });
  return { out, result, preview, port: Number(new URL(preview.url).port) };
}
