/**
 * NativeEspBackend's mount sequence, root-free on the fake mount backend:
 * read-only to read and `rw,dirsync` to write, unmounted after each; and
 * when the ESP's superblock is held read-only elsewhere (a root image
 * attached file-backed by machined-init), a write session mounts
 * read-only, remounts read-write, and remounts read-only before unmounting.
 * The real vfat is in backend_native_root_test.ts and the QEMU upgrade test.
 */
import assert from "node:assert/strict";
import { FakeMountBackend, type MountRequest } from "../mount/mod.ts";
import { isSysError } from "../../native-ops/mod.ts";
import { NativeEspBackend } from "./backend_native.ts";

const MOUNT_POINT = "/run/machined/esp";

function setup() {
  const mounts = new FakeMountBackend().addDirectory(MOUNT_POINT);
  const esp = new NativeEspBackend(mounts, () => "/dev/vda1", MOUNT_POINT);
  /** The ESP's mount options and its superblock's while a session runs. */
  const seen = () => {
    const m = mounts.table.findLast((e) => e.mountPoint === MOUNT_POINT);
    return m && { options: m.options[0], superblock: m.superOptions[0] };
  };
  const requests = () =>
    mounts.faults.callsOf("mount").map(([r]) => (r as MountRequest).flags?.join(","));
  return { mounts, esp, seen, requests };
}

/** The kernel's answer while a read-only superblock of the device is held: rw mounts are EBUSY. */
function holdReadOnly(mounts: FakeMountBackend) {
  mounts.faults.failAlways("mount", "EBUSY", ([r]) => {
    const flags = (r as MountRequest).flags ?? [];
    return !flags.includes("ro") && !flags.includes("remount");
  });
}

Deno.test("an ESP mounted only here: ro to read, rw,dirsync to write, unmounted after each", async () => {
  const { mounts, esp, seen, requests } = setup();
  assert.deepEqual(await esp.read(() => Promise.resolve(seen())), {
    options: "ro",
    superblock: "ro",
  });
  assert.deepEqual(await esp.write(() => Promise.resolve(seen())), {
    options: "rw",
    superblock: "rw",
  });
  assert.deepEqual(requests(), ["ro,nosuid,nodev,noexec", "dirsync,nosuid,nodev,noexec"]);
  assert.equal(seen(), undefined, "unmounted");
  assert.equal(mounts.faults.callsOf("remount").length, 0);
});

Deno.test("a superblock held read-only (file-backed root): write = ro mount, remount rw, remount ro, unmount", async () => {
  const { mounts, esp, seen, requests } = setup();
  holdReadOnly(mounts);
  assert.deepEqual(await esp.write(() => Promise.resolve(seen())), {
    options: "rw",
    superblock: "rw",
  });
  assert.deepEqual(requests(), [
    "dirsync,nosuid,nodev,noexec", // EBUSY
    "ro,nosuid,nodev,noexec",
    "remount,dirsync,nosuid,nodev,noexec",
  ]);
  assert.deepEqual(mounts.faults.callsOf("remount"), [[MOUNT_POINT, {}]], "read-only again");
  assert.equal(seen(), undefined, "unmounted");
  // Reads still work in that state, and a failed session still ends read-only and unmounted.
  assert.deepEqual(await esp.read(() => Promise.resolve(seen())), {
    options: "ro",
    superblock: "ro",
  });
  await assert.rejects(esp.write(() => Promise.reject(new Error("write failed"))), /write failed/);
  assert.equal(mounts.faults.callsOf("remount").length, 2);
  assert.equal(seen(), undefined);
});

Deno.test("a write mount refused otherwise (EINVAL) is not retried; a failed remount leaves nothing mounted", async () => {
  const { mounts, esp, seen, requests } = setup();
  mounts.faults.failNext("mount", "EINVAL");
  await assert.rejects(esp.write(() => Promise.resolve()), (e) => isSysError(e, "EINVAL"));
  assert.equal(requests().length, 1);
  holdReadOnly(mounts);
  mounts.faults.failNext("mount", "EPERM", {
    when: ([r]) => ((r as MountRequest).flags ?? []).includes("remount"),
  });
  await assert.rejects(esp.write(() => Promise.resolve()), (e) => isSysError(e, "EPERM"));
  assert.equal(seen(), undefined, "the read-only mount was taken down again");
});

Deno.test("a session waits for the ESP to be discovered (a rollback right after boot), bounded", async () => {
  const mounts = new FakeMountBackend().addDirectory(MOUNT_POINT);
  let asked = 0;
  const late = new NativeEspBackend(
    mounts,
    () => ++asked > 2 ? "/dev/vda1" : undefined,
    MOUNT_POINT,
  );
  assert.equal(await late.read(() => Promise.resolve("read")), "read");
  assert.ok(asked >= 3);
  const never = new NativeEspBackend(mounts, () => undefined, MOUNT_POINT, 300);
  await assert.rejects(
    never.read(() => Promise.resolve()),
    /no EFI System Partition .*waited 0.3 s/,
  );
});
