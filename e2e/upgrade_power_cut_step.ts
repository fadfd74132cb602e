/**
 * The power cuts of the QEMU upgrade test (e2e/node_upgrade_test.ts), on its
 * running VM: an upgrade to the slot not booted is cut at each step of the
 * slot write, and the trial it arms is cut between ready and bless. A cut is
 * QMP `stop` (the guest freezes; what its disk holds now is what a power cut
 * would leave, since the guest's unwritten page cache never reaches it),
 * `fsck.fat -n` of the ESP copied out of the disk image (the dirty bit is
 * allowed, any damage is not: fat_check.ts), then `system_reset` and `cont`:
 * a cold boot through the firmware and systemd-boot. Each boot must land on
 * the slot that was booted or on the new trial, never anything else:
 *   1. just after the bundle is verified (the other slot's entry disarmed,
 *      its old files being removed): the booted slot;
 *   2. halfway through receiving the files (`*.new` on the ESP): the booted slot;
 *   3. just after the received files are re-read (the commit and arm
 *      starting): the booted slot, or the new trial if the arm got to disk first;
 *   4. staged (`--stage`) and armed, before any reboot: the new trial;
 *   5. that trial cut as soon as it is ready (its bless still to come): the
 *      new slot again, which is then blessed.
 * The machinectl client runs as a process, killed after each cut: a
 * connection into a reset guest may never end.
 */
import assert from "node:assert/strict";
import type { Vm } from "../imager/mod.ts";
import { connectQmp } from "../imager/mod.ts";
import { checkEsp, type FatFindings } from "./fat_check.ts";
import { findUpgradeEvent, nodeVersion, type UpgradeEvent } from "./upgrade_helpers.ts";
import { upgradeStatus } from "./upgrade_status_checks.ts";
import { waitForDocs } from "./helpers.ts";

/** What the step needs from the test's VM. */
export interface PowerCutContext {
  client: string;
  port: number;
  vm: Vm;
  /** The VM's disk image (not a snapshot: the ESP is read from it). */
  disk: string;
  work: string;
  /** A good bundle and its version. */
  bundle: string;
  version: string;
  /** Called after each boot that follows a cut (STATE and EPHEMERAL checks). */
  afterBoot: (what: string) => Promise<void>;
  /** Which cuts during the slot write run (all three by default); the armed and bless cuts always do. */
  writePoints?: readonly WritePoint[];
}

/** The cuts during the slot write, in the order an upgrade reaches them. */
export const WRITE_POINTS = ["verified", "receiving", "written"] as const;
/** One cut during the slot write. */
export type WritePoint = typeof WRITE_POINTS[number];

type Slot = "A" | "B";
const other = (s: Slot): Slot => (s === "A" ? "B" : "A");

/** Runs the five cuts; returns their figures (seconds from the cut to ready). */
export async function upgradePowerCutStep(c: PowerCutContext): Promise<Record<string, number>> {
  const figures: Record<string, number> = {};
  const all: Array<{ name: WritePoint; at: (e: UpgradeEvent) => boolean }> = [
    { name: "verified", at: (e) => e.action === "verified" },
    {
      name: "receiving",
      at: (e) => e.action === "received" && Number(e.fields.bytes) * 2 >= Number(e.fields.total),
    },
    { name: "written", at: (e) => e.action === "written" },
  ];
  const cases = all.filter((k) => (c.writePoints ?? WRITE_POINTS).includes(k.name));
  for (const k of cases) {
    const booted = await bootedSlot(c);
    await cutDuringUpgrade(c, k.at, []);
    figures[`powerCut_${k.name}_toReadyS`] = await backOn(c, `cut at ${k.name}`, [
      booted,
      other(booted),
    ]);
    const now = await bootedSlot(c);
    if (now !== booted) await blessed(c, now); // the arm reached the disk before the cut
  }
  // 4. Staged and armed: the next boot is the trial.
  const booted = await bootedSlot(c);
  const target = other(booted);
  await cutDuringUpgrade(c, undefined, ["--stage"]);
  figures.powerCut_armed_toReadyS = await backOn(c, "cut when armed", [target]);
  // 5. The trial, ready, cut before (or while) it is blessed.
  await cut(c, "cut between ready and bless");
  figures.powerCut_bless_toReadyS = await backOn(c, "cut between ready and bless", [target]);
  await blessed(c, target);
  return figures;
}

async function bootedSlot(c: PowerCutContext): Promise<Slot> {
  return (await nodeVersion(c.client, c.port)).slot as Slot;
}

/**
 * Starts `machinectl upgrade -f bundle --wait=false ARGS` and cuts the power
 * when an upgrade event matches `at`, or, without `at`, once the command has
 * returned (armed).
 */
async function cutDuringUpgrade(
  c: PowerCutContext,
  at: ((e: UpgradeEvent) => boolean) | undefined,
  args: string[],
): Promise<void> {
  const ac = new AbortController();
  const seen = at
    ? findUpgradeEvent(c.client, c.port, at, { tail: 0, ms: 30 * 60_000, signal: ac.signal })
    : undefined;
  // The event stream is live only (tail 0): let it open before the upgrade starts.
  await new Promise((r) => setTimeout(r, 1500));
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL("../machinectl/main.ts", import.meta.url).pathname,
      "--config",
      c.client,
      "-e",
      `127.0.0.1:${c.port}`,
      "upgrade",
      "-f",
      c.bundle,
      "--wait=false",
      // The node already runs the bundle's version (the floor): each try is a forced replay.
      "--force",
      ...args,
    ],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const done = child.output();
  try {
    if (seen) {
      const winner = await Promise.race([seen, done.then(() => undefined)]);
      assert.ok(winner, "the upgrade ended before the event the cut waits for");
    } else {
      const out = await done;
      const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
      assert.ok(out.success, text);
      assert.match(text, /staged: the node boots it on its next reboot/);
    }
    await cut(c, "cut");
  } finally {
    ac.abort();
    try {
      child.kill("SIGKILL");
    } catch { /* already ended */ }
    await done;
  }
}

/** The power cut: freeze, check the ESP as a cut leaves it, reset, run. */
async function cut(c: PowerCutContext, what: string): Promise<FatFindings> {
  const qmp = await connectQmp(c.vm.state.qmpSocket);
  try {
    await qmp.execute("stop");
    const esp = await checkEsp(c.disk, c.work);
    assert.deepEqual(esp.damage, [], `${what}: fsck.fat -n finds the ESP damaged`);
    await qmp.execute("system_reset");
    await qmp.execute("cont");
    return esp;
  } finally {
    qmp.close();
  }
}

/**
 * After a cut: the node is ready on one of `slots` (on the new one, with the
 * good bundle's version). Returns the seconds from the reset to ready.
 */
async function backOn(c: PowerCutContext, what: string, slots: Slot[]): Promise<number> {
  const t = performance.now();
  await waitForDocs(c.client, c.port, ["machinestatus"], (d) => d[0]?.spec.ready === true, 900_000);
  const seconds = +((performance.now() - t) / 1000).toFixed(1);
  const v = await nodeVersion(c.client, c.port);
  assert.ok(
    slots.includes(v.slot as Slot),
    `${what}: booted ${v.slot}, expected ${slots.join(" or ")}`,
  );
  if (slots.length === 1 || v.slot !== slots[0]) {
    assert.equal(v.imageVersion, c.version, `${what}: the new slot runs the bundle's version`);
  }
  await c.afterBoot(what);
  return seconds;
}

/** Waits until `slot`, booted, is blessed. */
async function blessed(c: PowerCutContext, slot: Slot): Promise<void> {
  const s = await upgradeStatus(
    c.client,
    c.port,
    (s) => s.booted === slot && s.slots.find((x) => x.slot === slot)?.state === "blessed",
    180_000,
  );
  assert.equal(s.slots.find((x) => x.slot === slot)?.state, "blessed", JSON.stringify(s));
}
