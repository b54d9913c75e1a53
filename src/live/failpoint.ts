/**
 * The points of a run at which the fault tests stop it (test/cycle-faults.test.ts, test/cycle.test.ts):
 * with MESH_API_FAILPOINT=<name> in its environment, a run sends itself SIGKILL when it reaches that
 * point, as a power cut or the OOM killer would stop it there, with no handler run;
 * MESH_API_FAILPOINT=<name>:ENOSPC makes it fail there as a full disk would (a system error thrown).
 * Nothing happens without the variable. Points lie between every two steps that change a file.
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
  const [point, code] = (process.env.MESH_API_FAILPOINT ?? "").split(":");
  if (point !== name) return;
  if (code === undefined) process.kill(process.pid, "SIGKILL");
  throw Object.assign(new Error(`${code}: failpoint ${name}`), { code, errno: -28, syscall: "write" });
}
