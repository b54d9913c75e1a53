import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

let ticks: number | undefined;

/**
 * The CPU seconds this process spent so far, its threads and its children that ended (waited for)
 * alike, from /proc/self/stat (utime, stime, cutime, cstime: proc(5)). Differences of two readings
 * around a child give the child's own: how `cp -r` is measured against a build's system time
 * (issue 45, item 2). Ticks of 1/CLK_TCK s (10 ms here).
 */
export function cpuSeconds(): { user: number; system: number } {
  ticks ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }));
  const stat = readFileSync("/proc/self/stat", "utf8");
  // the fields after the command's name, which is in parentheses and may hold spaces
  const f = stat
    .slice(stat.lastIndexOf(")") + 2)
    .split(" ")
    .map(Number);
  // f[0] is field 3 (state): utime is field 14, stime 15, cutime 16, cstime 17
  const [utime, stime, cutime, cstime] = [f[11], f[12], f[13], f[14]];
  return { user: (utime + cutime) / ticks, system: (stime + cstime) / ticks };
}
