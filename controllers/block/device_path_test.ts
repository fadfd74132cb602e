import assert from "node:assert/strict";
import { FakeClock } from "../../runtime/mod.ts";
import {
  DeviceTimeoutError,
  kernelName,
  partitionPath,
  resolveDevice,
  waitForDeviceNode,
} from "./device_path.ts";

Deno.test("partition node names follow the kernel's rule", () => {
  assert.equal(partitionPath("/dev/sda", 2), "/dev/sda2");
  assert.equal(partitionPath("/dev/vda", 1), "/dev/vda1");
  assert.equal(partitionPath("/dev/nvme0n1", 3), "/dev/nvme0n1p3");
  assert.equal(partitionPath("/dev/loop7", 1), "/dev/loop7p1");
  assert.equal(partitionPath("/dev/mmcblk0", 1), "/dev/mmcblk0p1");
  assert.equal(kernelName("/dev/nvme0n1p3"), "nvme0n1p3");
});

Deno.test("resolveDevice follows links and keeps unknown paths", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/disk`, "");
    await Deno.symlink(`${dir}/disk`, `${dir}/by-id`);
    assert.equal(await resolveDevice(`${dir}/by-id`), await Deno.realPath(`${dir}/disk`));
    assert.equal(await resolveDevice("/dev/does-not-exist"), "/dev/does-not-exist");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("waitForDeviceNode: resolves for an existing node, times out on the clock otherwise", async () => {
  const clock = new FakeClock();
  await waitForDeviceNode("/dev/null", { clock });
  const waiting = waitForDeviceNode("/dev/machined-no-such-node", { clock, timeoutMs: 100 });
  let settled = false;
  const rejected = assert.rejects(waiting, DeviceTimeoutError).finally(() => settled = true);
  for (let i = 0; i < 5; i++) {
    await clock.waitForSleepers(1);
    await clock.advance(20);
  }
  await rejected;
  assert.ok(settled);
  assert.equal(clock.pendingSleeps, 0);
});
