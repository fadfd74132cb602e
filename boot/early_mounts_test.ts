/**
 * The firmware filesystems (issue 28): securityfs and efivarfs mounted where
 * the kernel offers them, efivarfs read-only, neither twice.
 */
import assert from "node:assert/strict";
import { FakeMountBackend } from "../platform/mount/mod.ts";
import { mountFirmwareFilesystems } from "./early_mounts.ts";

const EFIVARS = "/sys/firmware/efi/efivars";
const SECURITY = "/sys/kernel/security";

Deno.test("an EFI boot mounts securityfs and efivarfs, the variables read-only", async () => {
  const mount = new FakeMountBackend().addDirectory(SECURITY).addDirectory(EFIVARS);
  const mounted = await mountFirmwareFilesystems(mount, () => Promise.resolve(true));
  assert.deepEqual(mounted, [SECURITY, EFIVARS]);
  const efivars = mount.table.findLast((m) => m.mountPoint === EFIVARS)!;
  assert.equal(efivars.fstype, "efivarfs");
  assert.ok(efivars.options.includes("ro"), efivars.options.join(","));
  assert.deepEqual(await mountFirmwareFilesystems(mount, () => Promise.resolve(true)), []);
});

Deno.test("a boot without EFI (BIOS, a Pi) mounts only securityfs", async () => {
  const mount = new FakeMountBackend().addDirectory(SECURITY);
  const mounted = await mountFirmwareFilesystems(mount, (p) => Promise.resolve(p === SECURITY));
  assert.deepEqual(mounted, [SECURITY]);
});
