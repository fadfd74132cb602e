import assert from "node:assert/strict";
import { escapeMountPath, parseMountInfo, unescapeMountPath } from "./mountinfo.ts";

const GOLDEN = [
  "22 1 0:21 / / rw,relatime shared:1 - ext4 /dev/vda rw",
  "36 22 0:32 / /run/with\\040space rw,nosuid,nodev - tmpfs my\\040tmpfs rw,size=1024k,mode=755",
  "37 22 0:32 /sub /mnt/tab\\011and\\134slash ro,nosuid master:3 shared:7 - tmpfs none rw",
  "38 22 8:1 / /boot rw - vfat /dev/sda1 rw,fmask=0022",
  "",
].join("\n");

Deno.test("parseMountInfo: golden lines with escapes and optional fields", () => {
  const m = parseMountInfo(GOLDEN);
  assert.equal(m.length, 4);
  assert.deepEqual(m[0], {
    id: 22,
    parentId: 1,
    major: 0,
    minor: 21,
    root: "/",
    mountPoint: "/",
    options: ["rw", "relatime"],
    optionalFields: ["shared:1"],
    fstype: "ext4",
    source: "/dev/vda",
    superOptions: ["rw"],
  });
  assert.equal(m[1].mountPoint, "/run/with space");
  assert.equal(m[1].source, "my tmpfs");
  assert.deepEqual(m[1].superOptions, ["rw", "size=1024k", "mode=755"]);
  assert.equal(m[2].root, "/sub");
  assert.equal(m[2].mountPoint, "/mnt/tab\tand\\slash");
  assert.deepEqual(m[2].optionalFields, ["master:3", "shared:7"]);
  assert.equal(m[3].major, 8);
});

Deno.test("escapeMountPath round-trips", () => {
  const p = "/a b\tc\nd\\e";
  assert.equal(escapeMountPath(p), "/a\\040b\\011c\\012d\\134e");
  assert.equal(unescapeMountPath(escapeMountPath(p)), p);
});

Deno.test("parseMountInfo rejects malformed lines", () => {
  assert.throws(() => parseMountInfo("1 2 3"), SyntaxError);
  assert.throws(() => parseMountInfo("x 1 0:1 / / rw - tmpfs none rw"), SyntaxError);
});

Deno.test("parseMountInfo reads this process's real table", async () => {
  const m = parseMountInfo(await Deno.readTextFile("/proc/self/mountinfo"));
  assert.ok(m.some((e) => e.mountPoint === "/"));
});
