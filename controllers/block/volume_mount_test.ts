import assert from "node:assert/strict";
import { isBootPlaceholder } from "./volume_mount.ts";

Deno.test("only machined-init's tmpfs placeholder may be covered by a volume mount", () => {
  assert.equal(isBootPlaceholder({ source: "tmpfs", fstype: "tmpfs" }), true);
  assert.equal(isBootPlaceholder({ source: "/dev/vdb1", fstype: "ext4" }), false);
  assert.equal(isBootPlaceholder({ source: "/dev/vda3", fstype: "tmpfs" }), false);
});
