import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { cpuSeconds } from "../scripts/bench-cpu.ts";

describe("the bench's CPU seconds of a child", () => {
  it("counts a child's user and system time once it has ended", () => {
    const before = cpuSeconds();
    // about 0.4 s of user time, and system time in many small reads of /dev/zero
    execFileSync(process.execPath, [
      "-e",
      "const fs=require('fs');const b=Buffer.alloc(1);const fd=fs.openSync('/dev/zero','r');" +
        "const t=Date.now();while(Date.now()-t<400){};for(let i=0;i<300000;i++)fs.readSync(fd,b,0,1,null)",
    ]);
    const after = cpuSeconds();
    expect(after.user - before.user).toBeGreaterThanOrEqual(0.3);
    expect(after.system - before.system).toBeGreaterThan(0);
    expect(after.user - before.user).toBeLessThan(30);
  });
});
