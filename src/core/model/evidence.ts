/**
 * When an access point existed at the latest, from what its own record says: the install dates it
 * reports, the boot its uptime implies, and its last sighting. The meshviewer file's `firstseen` reads
 * it where no import with memory saw the access point appear (docs/freifunk.md), and such an import
 * fixes it for the access points already there when its memory begins (importers/opennet/dump.ts), so
 * that it does not move on with each sighting.
 */

/** Routers without a clock report 1970: no evidence of anything. */
export const EARLIEST_CREDIBLE = Date.UTC(2000, 0, 1) * 1000;

export interface EvidenceInput {
  /** lastseen_timestamp, microseconds since the epoch */
  readonly lastseenMicros: number | null;
  /** system_uptime, seconds */
  readonly uptimeSeconds: number | null;
  /** firmware_install_timestamp, mesh_install_timestamp: YYYY-MM-DD */
  readonly installDates: readonly (string | null)[];
}

/** The boot its uptime implies, in microseconds; null without a credible one. */
export function bootMicros(lastseenMicros: number | null, uptimeSeconds: number | null): number | null {
  if (lastseenMicros === null || uptimeSeconds === null || !Number.isFinite(uptimeSeconds) || uptimeSeconds < 0) return null;
  const boot = lastseenMicros - Math.round(uptimeSeconds * 1_000_000);
  return boot >= EARLIEST_CREDIBLE ? boot : null;
}

/** The earliest credible instant the record shows it existed, in microseconds; null for one never seen. */
export function existedBy(input: EvidenceInput): number | null {
  if (input.lastseenMicros === null) return null;
  let earliest = input.lastseenMicros;
  const boot = bootMicros(input.lastseenMicros, input.uptimeSeconds);
  if (boot !== null && boot < earliest) earliest = boot;
  for (const date of input.installDates) {
    if (date === null) continue;
    const at = Date.parse(`${date}T00:00:00Z`) * 1000;
    if (Number.isFinite(at) && at >= EARLIEST_CREDIBLE && at < earliest) earliest = at;
  }
  return earliest;
}
