/**
 * Encrypted STATE and EPHEMERAL through the block controllers, on fakes: a
 * FakeBlockBackend disk, a LinkedFakeCrypt whose headers show on that disk,
 * mkfs through FakeProcessBackend, mounts through FakeMountBackend. A
 * reboot is a new runtime and controllers over the same disk and headers.
 */
import assert from "node:assert/strict";
import { MOUNT_STATUS } from "../../resources/mod.ts";
import { waitForResource } from "../../runtime/testing.ts";
import {
  boot,
  DISK,
  diskState,
  encrypted,
  MiB,
  newMachine,
  OTHER_BOARD,
  PASS,
  PLAIN,
  provisionEncrypted,
  sha256,
} from "./testing_encryption.ts";

Deno.test("a blank volume is encrypted (LUKS2, each key in its slot) and mounted on its mapping", async () => {
  const m = await newMachine();
  const n = await boot(m, encrypted());
  try {
    const state = await n.mounted("STATE");
    const eph = await n.mounted("EPHEMERAL");
    assert.equal(state.spec.source, "/dev/mapper/STATE");
    assert.equal(eph.spec.source, "/dev/mapper/EPHEMERAL");
    const vs = (await n.status("STATE", (s) => s.phase === "ready")).spec;
    assert.equal(vs.encrypted, true);
    assert.equal(vs.mappingPath, "/dev/mapper/STATE");
    assert.deepEqual(vs.unlockedBy, { slot: 0, kind: "nodeid" });
    assert.equal(vs.locked, false);
    assert.equal(vs.filesystem, "ext4");
    assert.equal(vs.partitionPath, "/dev/vda2");
    assert.doesNotMatch(JSON.stringify(vs), new RegExp(PASS));
    // The format opened the mapping by slot 0; slot 1 was added, never tested.
    assert.deepEqual(vs.keySlots, [
      { slot: 0, kind: "nodeid", proven: true },
      { slot: 1, kind: "static", proven: false },
    ]);
    assert.equal(vs.rotation, null);
    assert.deepEqual((await m.crypt.dump("/dev/vda2")).slots, [
      { slot: 0, kind: "nodeid" },
      { slot: 1, kind: "static" },
    ]);
    assert.deepEqual((await m.crypt.dump("/dev/vda3")).slots, [{ slot: 0, kind: "nodeid" }]);
    // mkfs ran on the mappings, never on the partitions.
    const targets = n.process.processes.map((p) => p.spec.argv.at(-1));
    assert.deepEqual(targets, ["/dev/mapper/STATE", "/dev/mapper/EPHEMERAL"]);
    // The partition starts with the LUKS2 magic, not a filesystem.
    const head = m.block.bytes(DISK).subarray(9 * MiB, 9 * MiB + 6);
    assert.deepEqual([...head], [0x4c, 0x55, 0x4b, 0x53, 0xba, 0xbe]);
    const actions = n.events.history().filter((e) => e.subject === "volume STATE");
    assert.deepEqual(actions.map((e) => e.action), ["encrypted"]);
  } finally {
    await n.shutdown();
    await Deno.remove(m.dir, { recursive: true });
  }
});

Deno.test("a reboot unlocks by nodeid, opens the same mapping and writes nothing", async () => {
  const m = await newMachine();
  await provisionEncrypted(m);
  const before = await diskState(m);
  const n = await boot(m, encrypted());
  try {
    const state = await n.mounted("STATE");
    assert.equal(state.spec.source, "/dev/mapper/STATE");
    await n.mounted("EPHEMERAL");
    const vs = (await n.status("STATE", (s) => s.phase === "ready")).spec;
    assert.deepEqual(vs.unlockedBy, { slot: 0, kind: "nodeid" });
    assert.deepEqual(vs.keySlots, [
      { slot: 0, kind: "nodeid", proven: true },
      { slot: 1, kind: "static", proven: false },
    ]);
    assert.equal(vs.decision, "leave");
    assert.deepEqual(n.process.processes, [], "no mkfs on a reboot");
    assert.equal(await diskState(m), before);
    const unlocked = n.events.history().filter((e) => e.action === "unlocked");
    assert.deepEqual(unlocked.map((e) => e.subject).sort(), ["volume EPHEMERAL", "volume STATE"]);
  } finally {
    await n.shutdown();
    await Deno.remove(m.dir, { recursive: true });
  }
});

Deno.test("another board opens STATE by its static passphrase", async () => {
  const m = await newMachine();
  const first = await boot(m, encrypted());
  await first.mounted("STATE");
  await first.shutdown();
  const n = await boot(m, encrypted(), OTHER_BOARD);
  try {
    await n.mounted("STATE");
    const vs = (await n.status("STATE", (s) => s.phase === "ready")).spec;
    assert.deepEqual(vs.unlockedBy, { slot: 1, kind: "static" });
    assert.deepEqual(vs.keySlots, [
      { slot: 0, kind: "nodeid", proven: false },
      { slot: 1, kind: "static", proven: true },
    ]);
  } finally {
    await n.shutdown();
    await Deno.remove(m.dir, { recursive: true });
  }
});

Deno.test("no configured key opens the header: locked, an event, nothing written, nothing mounted", async () => {
  const m = await newMachine();
  await provisionEncrypted(m);
  const before = await diskState(m);
  const n = await boot(m, encrypted("not the passphrase at all"), OTHER_BOARD);
  try {
    const vs = (await n.status("STATE", (s) => s.phase === "locked")).spec;
    assert.equal(vs.locked, true);
    assert.equal(vs.encrypted, true);
    assert.equal(vs.mappingPath, "");
    assert.equal(vs.unlockedBy, null);
    assert.equal(vs.error?.code, "locked");
    assert.match(
      vs.lockedReason,
      /slot 0 \(nodeid\): did not open; slot 1 \(static\): did not open/,
    );
    assert.doesNotMatch(JSON.stringify(vs), /not the passphrase/);
    assert.deepEqual(vs.keySlots, [
      { slot: 0, kind: "nodeid", proven: false },
      { slot: 1, kind: "static", proven: false },
    ]);
    await n.status("EPHEMERAL", (s) => s.phase === "locked");
    const locked = n.events.history().filter((e) => e.action === "locked");
    assert.equal(locked.length, 2);
    assert.equal(m.crypt.mapped.size, 0);
    assert.equal(await diskState(m), before, "the disk and headers are unchanged");
    assert.deepEqual(n.process.processes, []);
    const st = await waitForResource(n.store, MOUNT_STATUS, (r) => r.metadata.id === "STATE");
    assert.equal(st.spec.mounted, false);
    assert.match(st.spec.message, /waiting for volume STATE \(locked\)/);
  } finally {
    await n.shutdown();
    await Deno.remove(m.dir, { recursive: true });
  }
});

Deno.test("a plain filesystem where encryption is configured: refused, never converted", async () => {
  const m = await newMachine();
  const first = await boot(m, PLAIN);
  await first.mounted("STATE");
  await first.mounted("EPHEMERAL");
  await first.shutdown();
  const before = await diskState(m);
  const n = await boot(m, encrypted());
  try {
    const vs = (await n.status("STATE", (s) => s.phase === "failed")).spec;
    assert.equal(vs.error?.code, "plain-filesystem");
    assert.equal(vs.encrypted, false);
    assert.match(vs.error?.message ?? "", /never converted in place/);
    await n.status("EPHEMERAL", (s) => s.error?.code === "plain-filesystem");
    assert.equal(m.crypt.headers.size, 0);
    assert.deepEqual(n.process.processes, []);
    assert.equal(await diskState(m), before);
  } finally {
    await n.shutdown();
    await Deno.remove(m.dir, { recursive: true });
  }
});

Deno.test("a LUKS2 header where no encryption is configured: refused (not-configured), unchanged", async () => {
  const m = await newMachine();
  await provisionEncrypted(m);
  const before = await diskState(m);
  const n = await boot(m, PLAIN);
  try {
    const vs = (await n.status("STATE", (s) => s.phase === "failed")).spec;
    assert.equal(vs.error?.code, "not-configured");
    assert.equal(vs.encrypted, true);
    assert.deepEqual(n.process.processes, []);
    assert.equal(await diskState(m), before);
  } finally {
    await n.shutdown();
    await Deno.remove(m.dir, { recursive: true });
  }
});

Deno.test("an opened mapping that reads zeros (mkfs cut short) gets its filesystem; other data is left alone", async () => {
  const m = await newMachine();
  await provisionEncrypted(m);
  m.crypt.plaintext("/dev/vda2").fill(0, 0, 64 * 1024); // the format stopped before mkfs
  m.crypt.plaintext("/dev/vda3").fill(0x5a, 0, 64 * 1024); // not a filesystem, not zero
  const ephBefore = await sha256(m.crypt.plaintext("/dev/vda3"));
  const n = await boot(m, encrypted());
  try {
    await n.mounted("STATE");
    const eph = (await n.status("EPHEMERAL", (s) => s.phase === "failed")).spec;
    assert.equal(eph.error?.code, "unrecognized-data");
    assert.equal(eph.mappingPath, "/dev/mapper/EPHEMERAL");
    assert.deepEqual(n.process.processes.map((p) => p.spec.argv.at(-1)), ["/dev/mapper/STATE"]);
    assert.equal(await sha256(m.block.bytes("/dev/mapper/EPHEMERAL")), ephBefore);
  } finally {
    await n.shutdown();
    await Deno.remove(m.dir, { recursive: true });
  }
});

Deno.test("the store's config is redacted: the static key comes from the full config, never the placeholder", async () => {
  const m = await newMachine();
  const n = await boot(m, encrypted(), undefined, undefined, { fullConfig: true });
  try {
    await n.mounted("STATE");
    const pass = new TextEncoder().encode(PASS);
    assert.equal(await m.crypt.testKey("/dev/vda2", pass, 1), true, "slot 1 holds the passphrase");
    const placeholder = new TextEncoder().encode("(redacted)");
    assert.equal(await m.crypt.testKey("/dev/vda2", placeholder), false);
  } finally {
    await n.shutdown();
    await Deno.remove(m.dir, { recursive: true });
  }
  // Without the full config a static key is refused: nothing is formatted with the placeholder.
  const blank = await newMachine();
  const r = await boot(blank, encrypted(), undefined, undefined, {});
  try {
    const vs = (await r.status("STATE", (s) => s.phase === "failed")).spec;
    assert.match(vs.error?.message ?? "", /passphrase is not available \(redacted copy\)/);
    assert.equal(blank.crypt.headers.size, 0, "no header written");
  } finally {
    await r.shutdown();
    await Deno.remove(blank.dir, { recursive: true });
  }
});
