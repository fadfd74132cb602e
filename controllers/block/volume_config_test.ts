import assert from "node:assert/strict";
import { DEFAULT_LAYOUT, PARTITION_TYPE } from "../../layout/mod.ts";
import { volumeSpecs } from "./volume_config.ts";

Deno.test("machine.install becomes STATE and EPHEMERAL specs; none without it", () => {
  assert.deepEqual(volumeSpecs(undefined), []);
  const [state, eph] = volumeSpecs({ disk: "/dev/sda", wipe: true, system: true }, {
    ephemeralFilesystem: "xfs",
  });
  assert.deepEqual(state, {
    volume: "STATE",
    disk: "/dev/sda",
    wipe: true,
    system: true,
    filesystem: "ext4",
    partitionName: "STATE",
    partitionType: PARTITION_TYPE.STATE,
    size: DEFAULT_LAYOUT.stateSize,
    mountPoint: "/system/state",
    mountFlags: ["nosuid", "nodev", "noexec"],
  });
  assert.deepEqual(
    [eph.volume, eph.filesystem, eph.size, eph.mountPoint, eph.partitionType],
    ["EPHEMERAL", "xfs", 0, "/var", PARTITION_TYPE.EPHEMERAL],
  );
});
