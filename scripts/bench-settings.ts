/**
 * The opennet community's settings, for the cycles and the fresh builds they are measured against
 * alike. A module of its own: the measured cycle (bench-cycle-run.ts) imports it without the
 * synthetic network's generator, which it does not run.
 */
export const CYCLE_SETTINGS = { brand: "opennet", defaultStatus: "online" } as const;
