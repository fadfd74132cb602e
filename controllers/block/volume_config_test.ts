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

Deno.test("machine.install.encryption reaches the spec without any passphrase", () => {
  const [state, eph] = volumeSpecs({
    disk: "/dev/sda",
    wipe: false,
    system: false,
    encryption: {
      state: {
        keys: [{ slot: 0, kind: "static", passphrase: "correct-horse" }, {
          slot: 1,
          kind: "nodeid",
        }],
        cipher: "aes-xts-plain64",
        sector_size: 4096,
        allow_discards: false,
      },
    },
  });
  assert.deepEqual(state.encryption, {
    cipher: "aes-xts-plain64",
    sectorSize: 4096,
    allowDiscards: false,
    keys: [{ slot: 0, kind: "static" }, { slot: 1, kind: "nodeid" }],
  });
  assert.ok(!JSON.stringify(state).includes("correct-horse"));
  assert.equal("encryption" in eph, false);
});
