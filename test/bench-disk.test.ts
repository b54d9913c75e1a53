import { describe, expect, it } from "vitest";
import { holdsFreedInodesBack, mountOf } from "../scripts/bench-disk.ts";

// Lines as /proc/self/mountinfo writes them: optional fields (shared:N, master:N) before the "-".
const MOUNTINFO = [
  "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard",
  "30 22 0:25 / /var/tmp rw,nosuid shared:9 master:2 - tmpfs tmpfs rw",
  "31 22 7:0 / /mnt/a\\040b rw,relatime - ext4 /dev/loop0 rw",
  "32 30 7:1 / /var/tmp/deep rw - xfs /dev/loop1 rw",
  "",
].join("\n");

describe("the mount a bench folder is on", () => {
  it("is the deepest mount point that holds the path", () => {
    expect(mountOf("/var/tmp/deep/x", MOUNTINFO)).toEqual({ point: "/var/tmp/deep", device: "7:1", type: "xfs" });
    expect(mountOf("/var/tmp/work", MOUNTINFO)).toEqual({ point: "/var/tmp", device: "0:25", type: "tmpfs" });
    expect(mountOf("/var/tmp", MOUNTINFO)?.type).toBe("tmpfs");
  });

  it("is not a mount whose point only begins the same", () => {
    expect(mountOf("/var/tmpx/work", MOUNTINFO)).toEqual({ point: "/", device: "254:0", type: "ext4" });
    expect(mountOf("/var/tmp/deeper", MOUNTINFO)?.point).toBe("/var/tmp");
  });

  it("reads a space in a mount point from the kernel's octal escape", () => {
    expect(mountOf("/mnt/a b/c", MOUNTINFO)).toEqual({ point: "/mnt/a b", device: "7:0", type: "ext4" });
    expect(mountOf("/mnt/a\\040b/c", MOUNTINFO)?.point).toBe("/");
  });

  it("is none in a table without lines, and a folder not there holds nothing back", () => {
    expect(mountOf("/var/tmp", "")).toBeUndefined();
    expect(holdsFreedInodesBack("/no/such/folder/here")).toBe(false);
  });
});
