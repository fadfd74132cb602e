import assert from "node:assert/strict";
import { EventBus } from "../events/mod.ts";
import { createLogger } from "../logs/mod.ts";
import { FAKE_ESP_HOST_ROOT, FakeEspBackend } from "../platform/esp/mod.ts";
import { FakeKmodBackend } from "../platform/kmod/mod.ts";
import { hostCompatible } from "../bundle/mod.ts";
import { KexecReboot } from "./kexec_reboot.ts";
import { installBundle } from "./slot_writer.ts";
import { bootFake, chunked, imagedEsp, testBundle, testKeys } from "./testing.ts";

/** A node on A whose ESP has B armed (`machined-b+3.conf`), the kernels on the fake ESP's host path. */
async function armed() {
  const k = await testKeys();
  const esp = imagedEsp("1.0.0");
  const b = await testBundle({ key: k.signing, version: "2.0.0", cmdline: "console=ttyS0 v2" });
  await installBundle(chunked(b.bytes), {
    esp,
    booted: "A",
    keys: [k.trusted],
    machine: hostCompatible(),
  });
  const kmod = new FakeKmodBackend();
  for (const s of ["A", "B"]) {
    kmod.addFile(`${FAKE_ESP_HOST_ROOT}/${s}/vmlinuz`);
    kmod.addFile(`${FAKE_ESP_HOST_ROOT}/${s}/initramfs.img`);
  }
  const events = new EventBus();
  const kexec = new KexecReboot({ esp, kmod, events, logger: createLogger({ console: false }) });
  const seen = () =>
    events.history().filter((e) => e.kind === "power").map((e) => `${e.subject} ${e.action}`);
  return { esp, kmod, kexec, events, seen };
}

const entries = (esp: FakeEspBackend) =>
  [...esp.files.keys()].filter((p) => p.startsWith("/loader/entries/")).sort();

/** A copy of an ESP's files (to boot it with the loader model while keeping the original). */
function copy(esp: FakeEspBackend): FakeEspBackend {
  return new FakeEspBackend(Object.fromEntries(esp.files));
}

Deno.test("kexec reboot: stages the armed trial's kernel, initramfs and options; renames +3 as the loader would", async () => {
  const n = await armed();
  const loader = copy(n.esp);
  n.kexec.request("kexec");
  assert.ok(await n.kexec.prepare());
  assert.deepEqual(n.kmod.staged, {
    kernel: `${FAKE_ESP_HOST_ROOT}/B/vmlinuz`,
    initramfs: `${FAKE_ESP_HOST_ROOT}/B/initramfs.img`,
    cmdline: n.kmod.staged!.cmdline,
  });
  assert.match(
    n.kmod.staged!.cmdline,
    /^console=ttyS0 v2 machined\.slot=B machined\.root\.sha256=/,
  );
  // The rename is exactly the one systemd-boot would have done for a cold boot.
  assert.equal(bootFake(loader)!.entry, "machined-b+2-1.conf");
  assert.deepEqual(entries(n.esp), entries(loader));
  assert.ok(!n.esp.wroteWhileReadOnly, "renamed in a read-write session only");
  assert.deepEqual(n.seen(), ["kexec staged"]);
  const ev = n.events.history().find((e) => e.action === "staged")!;
  assert.deepEqual([ev.fields?.entry, ev.fields?.renamedTo], [
    "machined-b+3.conf",
    "machined-b+2-1.conf",
  ]);
  // A cold boot of the same ESP afterwards still lands on B, counting on from +2-1.
  assert.deepEqual(bootFake(n.esp), { slot: "B", entry: "machined-b+1-2.conf", rootOk: true });
});

Deno.test("kexec reboot: kexec_file_load refused (ENOSYS, EKEYREJECTED) → cold, the ESP untouched", async () => {
  for (const errno of ["ENOSYS", "EKEYREJECTED"]) {
    const n = await armed();
    const before = entries(n.esp);
    n.kmod.faults.failNext("kexec_file_load", errno);
    n.kexec.request("kexec");
    assert.equal(await n.kexec.prepare(), false);
    assert.equal(n.kmod.staged, null);
    assert.deepEqual(entries(n.esp), before, "the loader does the counting on the cold boot");
    assert.deepEqual(n.seen(), ["kexec fallback"]);
    const ev = n.events.history().find((e) => e.action === "fallback")!;
    assert.match(ev.message, new RegExp(`${errno}.*rebooting cold`));
  }
});

Deno.test("kexec reboot: a failed rename drops the staged image and reboots cold", async () => {
  const n = await armed();
  n.esp.cutAt(n.esp.ops); // the next mutating operation (the rename) fails
  n.kexec.request("kexec");
  assert.equal(await n.kexec.prepare(), false);
  assert.equal(n.kmod.staged, null, "unloaded");
  assert.ok(n.esp.files.has("/loader/entries/machined-b+3.conf"));
  assert.deepEqual(n.seen(), ["kexec fallback"]);
});

Deno.test("kexec reboot: blessed slots need no rename; default and powercycle never kexec", async () => {
  const esp = imagedEsp("1.0.0");
  const kmod = new FakeKmodBackend().addFile(`${FAKE_ESP_HOST_ROOT}/A/vmlinuz`)
    .addFile(`${FAKE_ESP_HOST_ROOT}/A/initramfs.img`);
  const logger = createLogger({ console: false });
  const k = new KexecReboot({ esp, kmod, events: new EventBus(), logger });
  k.request("kexec");
  k.request("powercycle"); // the first request wins
  assert.ok(await k.prepare());
  assert.equal(kmod.staged?.kernel, `${FAKE_ESP_HOST_ROOT}/A/vmlinuz`);
  assert.equal(esp.writeSessions, 0, "nothing to rename");
  for (const mode of ["default", "powercycle", undefined] as const) {
    const other = new KexecReboot({
      esp,
      kmod: new FakeKmodBackend(),
      events: new EventBus(),
      logger,
    });
    other.request(mode);
    assert.equal(other.wanted, false);
    assert.equal(await other.prepare(), false);
  }
});
