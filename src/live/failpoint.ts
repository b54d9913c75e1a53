/**
 * The points of a run at which the fault tests kill it (test/cycle-faults.test.ts): with
 * MESH_API_FAILPOINT=<name> in its environment, a run sends itself SIGKILL when it reaches that point,
 * as a power cut or the OOM killer would stop it there, with no handler run. Nothing happens without
 * the variable. Points between every two steps that change a file, so a test can stop a run at each.
 */
export type Failpoint = "recovered" | "imported" | "built" | "configured" | "recorded" | "committed" | "linked" | "reloaded";

export const FAILPOINTS: readonly Failpoint[] = [
  "recovered",
  "imported",
  "built",
  "configured",
  "recorded",
  "committed",
  "linked",
  "reloaded",
];

export function failpoint(name: Failpoint): void {
  if (process.env.MESH_API_FAILPOINT === name) process.kill(process.pid, "SIGKILL");
}
