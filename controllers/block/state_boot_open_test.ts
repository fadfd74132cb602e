/**
 * A node whose config lives only on an encrypted STATE, through the boot
 * path on fakes: the late config sources (config/keeper/late_config.ts, what
 * boot/node_main.ts starts when no config was found at boot) open STATE with
 * the StateBootOpener, read its config.yaml and apply it; then the block
 * controllers run with that config, as on the node. On another board the
 * node stays in maintenance with the condition `locked`, nothing is written,
 * and a passphrase through UnlockVolume lets it continue without a reboot.
 * With a `tpm` slot, boot opens STATE by the TPM from its token; a cleared
 * TPM leaves it locked, naming the refusal.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ConfigKeeper, type LateConfigOptions, runLateConfig } from "../../config/keeper/mod.ts";
import { Machined } from "../../core/mod.ts";
import { createLogger } from "../../logs/mod.ts";
import { FakeMountBackend } from "../../platform/mount/mod.ts";
import {
  boot,
  diskState,
  encrypted,
  type Machine,
  newMachine,
  OTHER_BOARD,
  PASS,
  PLAIN,
  provisionEncrypted,
  UUID,
} from "./testing_encryption.ts";
import { StateBootOpener } from "./state_boot_open.ts";
import { STATE_LOCKED_CONDITION } from "./state_boot.ts";
import { TestTpm } from "./testing_tpm.ts";
import { VolumeUnlocker, VolumeUnlockError } from "./volume_unlock.ts";

const enc = new TextEncoder();
/** The config kept on STATE: nodeid keys only, so on another board only a typed passphrase opens. */
const ON_STATE = PLAIN + `    encryption:
      state:
        keys:
          - { slot: 0, kind: nodeid }
          - { slot: 1, kind: static, passphrase: "${PASS}" }
`;
const NODEID_ONLY = PLAIN + `    encryption:
      state:
        keys:
          - { slot: 0, kind: nodeid }
      ephemeral:
        keys:
          - { slot: 0, kind: nodeid }
`;

/** The late sources of a command line without `machined.config=`: STATE, then CIDATA. */
const PLAN: LateConfigOptions["plan"] = {
  sources: [{ kind: "state", file: "config.yaml" }, {
    kind: "cidata",
    label: "CIDATA",
    file: "user-data",
  }],
};

/** A boot with no config: maintenance, discovery has found STATE holding LUKS2. */
async function lateBoot(m: Machine, board: string, onState: string) {
  const machined = new Machined({
    mode: "dev",
    pid1: false,
    logger: createLogger({ console: false }),
  });
  machined.stage.set("maintenance");
  const dir = await Deno.makeTempDir({ prefix: "machined-state-boot-" });
  // The fake mount backend mounts nothing: the file is where the mapping would be mounted.
  await Deno.writeTextFile(
    join(dir, "config.yaml"),
    `version: v1alpha1\nmachine:\n  hostname: from-state\n${onState}`,
  );
  await machined.store.create({
    type: "DiscoveredVolume",
    namespace: "block",
    id: "vda2",
    owner: "test",
    spec: {
      disk: "vda",
      devicePath: "/dev/vda2",
      partitionNumber: 2,
      offset: 0,
      size: 1,
      partitionType: "",
      partitionUuid: "",
      partitionLabel: "STATE",
      role: "state",
      filesystem: "crypto_LUKS",
      filesystemLabel: "STATE",
      filesystemUuid: "",
      inKernel: true,
    },
  });
  const keeper = new ConfigKeeper(machined);
  const unlocker = new VolumeUnlocker({ crypt: m.crypt });
  const opener = new StateBootOpener({
    crypt: m.crypt,
    block: m.block,
    keys: { smbiosUuid: () => Promise.resolve(board), ...(m.tpm ? { tpm: m.tpm } : {}) },
    unlocker,
    condition: (name, reason) => machined.conditions.set(name, reason),
    events: machined.events,
  });
  const mount = new FakeMountBackend().addDirectory(dir);
  let stateChecked = false;
  const late = runLateConfig({
    machined,
    keeper,
    plan: PLAN,
    mount,
    cidataDir: "/nonexistent",
    stateDir: dir,
    cidataWaitMs: 100,
    discoveryWaitMs: 5_000,
    onStateChecked: () => (stateChecked = true),
    encryptedState: opener,
  });
  return {
    machined,
    keeper,
    unlocker,
    mount,
    late,
    stateChecked: () => stateChecked,
    condition: () => machined.conditions.list().find((c) => c.name === STATE_LOCKED_CONDITION),
    async close() {
      await machined.stop();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

async function eventually(what: string, fn: () => boolean): Promise<void> {
  const end = performance.now() + 5000;
  while (!fn()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
Deno.test("config on an encrypted STATE: opened by the header's nodeid token, read, closed; the node boots with it", async () => {
  const m = await newMachine();
  await provisionEncrypted(m);
  const before = await diskState(m);
  const calls = m.crypt.faults.calls.length;
  const b = await lateBoot(m, UUID, encrypted());
  try {
    assert.equal(await b.late, "STATE /dev/vda2");
    assert.equal(b.keeper.config?.machine.hostname, "from-state");
    assert.equal(b.machined.stage.get(), "running");
    assert.equal(b.condition(), undefined);
    const mounted = b.mount.faults.calls.filter((c) => c.op === "mount")
      .map((c) => c.args[0] as { source: string; flags: string[] });
    assert.deepEqual(mounted.map((r) => [r.source, r.flags]), [["/dev/mapper/STATE", ["ro"]]]);
    assert.equal(m.crypt.mapped.size, 0, "the mapping is closed once config.yaml is read");
    assert.equal(await diskState(m), before, "reading the config wrote nothing");
    const tried = m.crypt.faults.calls.slice(calls).filter((c) => c.op === "testKey")
      .map((c) => c.args[1]);
    assert.deepEqual(tried, [0], "only the nodeid slot, from its token");
  } finally {
    await b.close();
  }
  // Boot goes on with the config read from STATE: the provisioner unlocks and mounts it.
  const n = await boot(m, encrypted());
  try {
    const st = await n.mounted("STATE");
    assert.equal(st.spec.source, "/dev/mapper/STATE");
  } finally {
    await n.shutdown();
    await Deno.remove(m.dir, { recursive: true });
  }
});

Deno.test("config on an encrypted STATE, another board: maintenance says locked, nothing written; UnlockVolume opens it and boot goes on without a reboot", async () => {
  const m = await newMachine();
  await provisionEncrypted(m);
  const before = await diskState(m);
  const b = await lateBoot(m, OTHER_BOARD, ON_STATE);
  try {
    await eventually("the locked condition", () => b.condition() !== undefined);
    assert.match(
      b.condition()!.reason,
      /^STATE is locked: tried slot 0 \(nodeid\): did not open; slot 1 \(static\) need a passphrase/,
    );
    assert.equal(b.machined.stage.get(), "maintenance");
    assert.ok(b.stateChecked(), "an insecure apply is not held while STATE waits");
    assert.ok(b.machined.events.history().some((e) => e.action === "locked"));
    assert.equal(m.crypt.mapped.size, 0);
    assert.equal(await diskState(m), before, "a locked STATE is never written");
    const wrong = await b.unlocker.unlock("STATE", enc.encode("not it")).catch((e) => e);
    assert.ok(wrong instanceof VolumeUnlockError && wrong.code === "permission-denied");
    assert.equal(await diskState(m), before);
    assert.equal(b.keeper.config?.machine.hostname, undefined);
    const r = await b.unlocker.unlock("STATE", enc.encode(PASS));
    assert.deepEqual(r, { volume: "STATE", slot: 1, mappingPath: "/dev/mapper/STATE" });
    assert.equal(await b.late, "STATE /dev/vda2");
    assert.equal(b.keeper.config?.machine.hostname, "from-state");
    assert.equal(b.machined.stage.get(), "running");
    assert.equal(b.condition(), undefined);
    assert.equal(m.crypt.mapped.size, 0);
    assert.equal(await diskState(m), before);
    const again = await b.unlocker.unlock("STATE", enc.encode(PASS)).catch((e) => e);
    assert.equal((again as VolumeUnlockError).code, "failed-precondition");
  } finally {
    await b.close();
  }
  // The config's keys do not open STATE on this board; the passphrase typed once does, in
  // the same process: STATE opens and mounts without a reboot.
  const n = await boot(m, NODEID_ONLY, OTHER_BOARD, b.unlocker);
  try {
    const st = await n.mounted("STATE");
    assert.equal(st.spec.source, "/dev/mapper/STATE");
    const vs = (await n.status("STATE", (s) => s.phase === "ready")).spec;
    assert.deepEqual(vs.unlockedBy, { slot: 1, kind: "passphrase" });
    assert.doesNotMatch(JSON.stringify(vs), new RegExp(PASS));
  } finally {
    await n.shutdown();
    await Deno.remove(m.dir, { recursive: true });
  }
});

Deno.test("an encrypted STATE with no nodeid slot is locked at once (no key tried); a config applied another way ends the wait", async () => {
  const m = await newMachine();
  await provisionEncrypted(m);
  // Leave only the static slot: the header's tokens offer nothing to try without the config.
  await m.crypt.killSlot("/dev/vda2", 0);
  const before = await diskState(m);
  const calls = m.crypt.faults.calls.length;
  const b = await lateBoot(m, UUID, ON_STATE);
  try {
    await eventually("the locked condition", () => b.condition() !== undefined);
    assert.match(b.condition()!.reason, /no slot opens from its header's tokens/);
    const tried = m.crypt.faults.calls.slice(calls).filter((c) => c.op === "testKey");
    assert.equal(tried.length, 0);
    await b.keeper.apply(`version: v1alpha1\nmachine:\n  hostname: applied\n`, "api");
    assert.equal(await b.late, undefined);
    assert.equal(b.keeper.config?.machine.hostname, "applied");
    assert.equal(b.condition(), undefined);
    assert.equal(await diskState(m), before);
  } finally {
    await b.close();
    await Deno.remove(m.dir, { recursive: true });
  }
});

/** STATE with a static recovery key in slot 0 and a tpm key in slot 1; EPHEMERAL plain. */
const TPM_STATE = PLAIN + `    encryption:
      state:
        keys:
          - { slot: 0, kind: static, passphrase: "${PASS}" }
          - { slot: 1, kind: tpm }
`;

/** A board with a TPM whose STATE was provisioned with TPM_STATE and shut down. */
async function provisionedWithTpm(): Promise<Machine & { tpm: TestTpm }> {
  const m = { ...await newMachine(), tpm: await TestTpm.create() };
  const n = await boot(m, TPM_STATE);
  await n.mounted("STATE");
  await n.shutdown();
  return m;
}

const testedSlots = (m: Machine, from: number) =>
  m.crypt.faults.calls.slice(from).filter((c) => c.op === "testKey").map((c) => c.args[1]);

Deno.test("config on STATE with static + tpm keys: boot opens STATE by the TPM from its token before any config", async () => {
  const m = await provisionedWithTpm();
  const before = await diskState(m);
  const calls = m.crypt.faults.calls.length;
  const b = await lateBoot(m, OTHER_BOARD, TPM_STATE);
  try {
    assert.equal(await b.late, "STATE /dev/vda2");
    assert.equal(b.keeper.config?.machine.hostname, "from-state");
    assert.equal(b.condition(), undefined);
    assert.deepEqual(testedSlots(m, calls), [1], "only the tpm slot, from its token");
    const opened = b.machined.events.history().find((e) => e.action === "unlocked");
    assert.equal(opened?.message, "STATE opened by slot 1 (tpm) before the config");
    assert.equal(m.crypt.mapped.size, 0);
    assert.equal(await diskState(m), before);
  } finally {
    await b.close();
    await Deno.remove(m.dir, { recursive: true });
  }
});

Deno.test("config on STATE, a cleared TPM: maintenance says locked, naming the TPM's refusal; nothing written", async () => {
  const m = await provisionedWithTpm();
  m.tpm.tpm.clear();
  await m.tpm.signCurrent();
  const before = await diskState(m);
  const b = await lateBoot(m, OTHER_BOARD, TPM_STATE);
  try {
    await eventually("the locked condition", () => b.condition() !== undefined);
    assert.match(
      b.condition()!.reason,
      /^STATE is locked: tried slot 1 \(tpm\): The TPM refused to unseal the key \(load\).*slot 0 \(static\) need a passphrase/,
    );
    assert.equal(b.machined.stage.get(), "maintenance");
    assert.equal(await diskState(m), before);
    await b.unlocker.unlock("STATE", enc.encode(PASS));
    assert.equal(await b.late, "STATE /dev/vda2");
    assert.equal(b.keeper.config?.machine.hostname, "from-state");
  } finally {
    await b.close();
    await Deno.remove(m.dir, { recursive: true });
  }
});
