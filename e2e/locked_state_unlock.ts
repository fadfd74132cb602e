/**
 * A node whose config lives only on its encrypted STATE, booted where no key
 * opens STATE from its header (another board for a `nodeid` key, a cleared
 * TPM for a `tpm` key): it waits in maintenance with the condition `locked`,
 * STATE's bytes unchanged, a wrong passphrase is refused (STATE still
 * unchanged), and `machinectl unlock STATE --insecure` (passphrase on stdin,
 * the maintenance certificate pinned from the console) opens it; the same
 * boot then goes on with the config read from STATE. Shared by the reset
 * case (e2e/reset_locked_state.ts) and the Secure Boot case's fresh TPM.
 * @module
 */
import assert from "node:assert/strict";
import type { Vm } from "../imager/mod.ts";
import { sha256Range } from "./cidata.ts";
import { machinectl, parseDocs } from "./helpers.ts";
import { type AtRest, unlockInsecure } from "./luks_host.ts";
import { poll, secondsSince } from "./reset_node.ts";

/** What {@link unlockLockedState} checks and does on a booting node. */
export interface LockedStateBoot {
  vm: Vm;
  port: number;
  image: string;
  /** STATE as the host saw it before this boot (luks_host.ts's checkAtRest). */
  state: AtRest;
  passphrase: string;
  /** The static slot the passphrase opens. */
  slot: number;
  /** What MachineStatus's `locked` condition must say (which slots were tried). */
  reason: RegExp;
  figures: Record<string, unknown>;
  /** `performance.now()` when the VM was started. */
  bootedAt: number;
}

/**
 * Waits for maintenance saying `locked`, checks STATE unchanged before and
 * after a wrong passphrase, then unlocks it. Returns when the unlock answered
 * (`performance.now()`), for the case to time what follows.
 */
export async function unlockLockedState(o: LockedStateBoot): Promise<number> {
  const fp = (await o.vm.waitForConsole(/API certificate fingerprint (SHA256:[0-9a-f]{64})/, {
    timeoutMs: 300_000,
  }))[1];
  const insecure = async (...args: string[]) => {
    const r = await machinectl("/nonexistent", o.port, ...args, "--insecure", "--fingerprint", fp);
    if (r.code !== 0) throw new Error(r.err);
    return parseDocs(r.out);
  };
  const ms = await poll("maintenance saying locked", async () => {
    const [m] = await insecure("get", "machinestatus", "-o", "json");
    const c = (m?.spec.unmetConditions as { name: string; reason: string }[] | undefined)
      ?.find((x) => x.name === "locked");
    return c ? { stage: m.spec.stage, reason: c.reason } : undefined;
  });
  o.figures.lockedBootToMaintenanceS = secondsSince(o.bootedAt);
  assert.equal(ms.stage, "maintenance");
  assert.match(ms.reason, o.reason);
  const { offset, length } = o.state.range;
  const unchanged = async () =>
    assert.equal(await sha256Range(o.image, offset, length), o.state.sha, "STATE unchanged");
  await unchanged();
  const wrong = await unlockInsecure(o.port, "STATE", "not the passphrase", fp);
  assert.notEqual(wrong.code, 0, wrong.out + wrong.err);
  assert.match(wrong.err, /opens no keyslot/);
  await unchanged();
  const unlockedAt = performance.now();
  const ok = await unlockInsecure(o.port, "STATE", o.passphrase, fp);
  assert.equal(ok.code, 0, ok.out + ok.err);
  assert.match(ok.out, new RegExp(`STATE unlocked by slot ${o.slot}: /dev/mapper/STATE`));
  o.figures.unlockS = secondsSince(unlockedAt);
  return unlockedAt;
}
