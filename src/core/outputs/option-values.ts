import { OUTPUTS } from "./index.ts";
import type { OutputBase } from "./output.ts";

/** What the site settings hold of every output (output.ts): its options' recorded values and its check. */

/** Each output's settings checked before any work, at the data's instant (or the cycle's run's). */
export function assertOutputSettings(outputs: Readonly<Record<string, unknown>> | undefined, at: string | null): void {
  for (const o of OUTPUTS as readonly OutputBase[]) {
    const settings = outputs?.[o.kind];
    if (settings !== undefined && settings !== null) o.assertSettings?.(settings, at);
  }
}

/** Every output's options with the values its settings hold, by flag, in the order of the outputs (the cycle records them). */
export function recordedOptions(outputs: Readonly<Record<string, unknown>> | undefined): Record<string, string | null> {
  const recorded: Record<string, string | null> = {};
  for (const o of OUTPUTS as readonly OutputBase[])
    for (const option of o.options ?? [])
      if (option.recorded) recorded[option.flags.split(" ")[0]] = option.recorded(outputs?.[o.kind] ?? null);
  return recorded;
}
