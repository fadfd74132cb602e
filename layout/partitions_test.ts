import assert from "node:assert/strict";
import { GPT_TYPE } from "../platform/block/mod.ts";
import { isBootPartition, PARTITION_NAME, PARTITION_TYPE, partitionRole } from "./partitions.ts";

Deno.test("the ESP (as the imager writes it) is the UEFI type, named EFI, a boot partition", () => {
  assert.equal(PARTITION_TYPE.EFI_SYSTEM, "c12a7328-f81f-11d2-ba4b-00a0c93ec93b");
  assert.equal(PARTITION_TYPE.EFI_SYSTEM, GPT_TYPE.EFI_SYSTEM);
  assert.equal(PARTITION_NAME.EFI, "EFI");
  const esp = { type: PARTITION_TYPE.EFI_SYSTEM, name: PARTITION_NAME.EFI };
  assert.ok(isBootPartition(esp));
  assert.equal(partitionRole(esp), "efi");
});

Deno.test("machined's type GUIDs are distinct, lower case, and not well-known types", () => {
  const ours = [PARTITION_TYPE.STATE, PARTITION_TYPE.EPHEMERAL, PARTITION_TYPE.BOOT_SLOT];
  assert.equal(new Set(ours).size, 3);
  for (const t of ours) {
    assert.equal(t, t.toLowerCase());
    assert.ok(!(Object.values(GPT_TYPE) as string[]).includes(t));
  }
});

Deno.test("roles: by type first, name second", () => {
  const T = PARTITION_TYPE, N = PARTITION_NAME;
  assert.equal(partitionRole({ type: T.EFI_SYSTEM, name: "anything" }), "efi");
  assert.equal(partitionRole({ type: T.BIOS_BOOT, name: "" }), "bios-boot");
  assert.equal(partitionRole({ type: T.BOOT_SLOT, name: N.BOOT_A }), "boot-a");
  assert.equal(partitionRole({ type: T.BOOT_SLOT, name: N.BOOT_B }), "boot-b");
  assert.equal(partitionRole({ type: T.STATE, name: N.STATE }), "state");
  assert.equal(partitionRole({ type: T.STATE, name: "OTHER" }), "other");
  assert.equal(partitionRole({ type: T.EPHEMERAL, name: N.EPHEMERAL }), "ephemeral");
  assert.equal(partitionRole({ type: GPT_TYPE.LINUX_FILESYSTEM, name: N.STATE }), "other");
  assert.ok(!isBootPartition({ type: GPT_TYPE.LINUX_FILESYSTEM, name: N.EFI }));
});
