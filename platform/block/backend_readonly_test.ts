import assert from "node:assert/strict";
import { isSysError } from "../../native-ops/mod.ts";
import { FakeBlockBackend } from "./backend_fake.ts";
import { ReadOnlyBlockBackend } from "./backend_readonly.ts";

Deno.test("the read-only backend passes reads through and refuses every write with EROFS", async () => {
  const inner = new FakeBlockBackend();
  inner.addDisk("/dev/vdz", 8 * 1024 * 1024);
  const ro = new ReadOnlyBlockBackend(inner);
  assert.equal((await ro.geometry("/dev/vdz")).size, 8 * 1024 * 1024);
  assert.equal((await ro.read("/dev/vdz", 0, 16)).length, 16);
  await assert.rejects(() => ro.write("/dev/vdz"), (e) => isSysError(e, "EROFS"));
  await assert.rejects(() => ro.discard("/dev/vdz"), (e) => isSysError(e, "EROFS"));
  await assert.rejects(() => ro.rereadPartitions("/dev/vdz"), (e) => isSysError(e, "EROFS"));
  assert.deepEqual([...inner.bytes("/dev/vdz").slice(0, 16)], new Array(16).fill(0));
});
