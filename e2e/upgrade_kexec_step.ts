/**
 * The kexec steps of the QEMU upgrade test (e2e/node_upgrade_test.ts), on
 * its running VM: a kexec upgrade (the default reboot of `machinectl
 * upgrade`) into the other slot, shown not to pass through the firmware (no
 * OVMF `BdsDxe:` line on the serial console since the step began, yet a new
 * `machined-init:` boot and a new boot id), with machined's own counter
 * rename (`+3` → `+2-1`, logged as `kexec staged`); then a cold boot of the
 * same slot (`reboot --mode powercycle`, through OVMF and systemd-boot)
 * that still lands on it (Talos #14146: a kexec boot was healthy, the next
 * cold boot was not). Also the figures both kinds of upgrade report.
 */
import assert from "node:assert/strict";
import { nodeVersion } from "./upgrade_helpers.ts";
import { machinectl } from "./helpers.ts";

/** The serial console's text from byte `from` on (QEMU appends to it). */
export async function consoleSince(consoleLog: string, from: number): Promise<string> {
  const bytes = await Deno.readFile(consoleLog);
  return new TextDecoder().decode(bytes.subarray(from));
}

/** OVMF's boot manager prints this on every firmware boot; a kexec never does. */
const FIRMWARE_BOOT = /BdsDxe: (loading|starting) Boot/g;
/** machined-init's first line, printed on every boot of an image. */
const IMAGE_BOOT = /machined-init: root \/esp\/([AB])\/root\.img/g;

/** What tells why a kexec reboot went through the firmware after all. */
const KEXEC_TRAIL =
  /kexec|overran|fallback|watchdog|panic|BdsDxe|machined-init: root|rebooting now|shutdown/i;

/** The console's lines that say how a kexec reboot went (for a failure's message). Pure. */
export function kexecTrail(text: string): string {
  return text.split("\n").filter((line) => KEXEC_TRAIL.test(line)).slice(0, 80).join("\n");
}

/**
 * An upgrade's times from `machinectl upgrade`'s output: arm (send, verify,
 * write, re-hash, arm: the RPC), reboot to ready, and the whole. Pure.
 */
export function upgradeTimes(kind: "cold" | "kexec", out: string): Record<string, number> {
  const armed = /, \d+ bytes in ([\d.]+) s, signed by/.exec(out);
  const ready = /and ready after ([\d.]+) s/.exec(out);
  assert.ok(armed && ready, `upgrade times in: ${out}`);
  const arm = Number(armed[1]);
  const total = Number(ready[1]);
  return {
    [`${kind}UpgradeArmS`]: arm,
    [`${kind}UpgradeRebootToReadyS`]: +(total - arm).toFixed(1),
    [`${kind}UpgradeTotalS`]: total,
  };
}

/** What the steps need of the test. */
export interface KexecStepContext {
  client: string;
  port: number;
  consoleLog: string;
  /** A bundle for the slot not booted, and what it reports once booted. */
  bundle: string;
  slot: "A" | "B";
  version: string;
  figures: Record<string, number | string>;
  /** Whether the node's `upgrade` events show `subject action` (within a minute). */
  hasEvent: (subject: string, action: string) => Promise<boolean>;
}

/** The kexec upgrade, then a cold boot of the same slot. */
export async function kexecUpgradeThenColdBoot(c: KexecStepContext): Promise<void> {
  const { client, port } = c;
  const counted = `machined-${c.slot.toLowerCase()}`;
  let from = (await Deno.stat(c.consoleLog)).size;
  let r = await machinectl(client, port, "upgrade", "-f", c.bundle, "--timeout", "15m");
  assert.equal(r.code, 0, r.out + r.err);
  assert.match(
    r.out,
    new RegExp(
      `node back on slot ${c.slot}, version ${c.version.replaceAll(".", "\\.")} and ready`,
    ),
  );
  Object.assign(c.figures, upgradeTimes("kexec", r.out));
  let text = await consoleSince(c.consoleLog, from);
  assert.match(
    text,
    new RegExp(
      `kexec staged: /${c.slot}/vmlinuz from ${counted}\\+3\\.conf, renamed ${counted}\\+2-1\\.conf`,
    ),
    "machined staged the armed entry and did the loader's rename",
  );
  assert.equal(
    text.match(FIRMWARE_BOOT)?.length ?? 0,
    0,
    `the kexec boot skipped the firmware; the console since the upgrade:\n${kexecTrail(text)}`,
  );
  assert.deepEqual(
    [...text.matchAll(IMAGE_BOOT)].map((m) => m[1]),
    [c.slot],
    "one boot, of the slot",
  );
  assert.ok(await c.hasEvent(`slot ${c.slot}`, "blessed"), "the kexec-booted trial is blessed");

  // A cold boot of the same slot: OVMF and systemd-boot, from the files on disk.
  from = (await Deno.stat(c.consoleLog)).size;
  const t = performance.now();
  r = await machinectl(
    client,
    port,
    "reboot",
    "--mode",
    "powercycle",
    "--wait",
    "--timeout",
    "10m",
  );
  assert.equal(r.code, 0, r.out + r.err);
  c.figures.coldRebootBackS = +((performance.now() - t) / 1000).toFixed(1);
  text = await consoleSince(c.consoleLog, from);
  assert.ok((text.match(FIRMWARE_BOOT)?.length ?? 0) > 0, "the cold boot passed the firmware");
  assert.deepEqual([...text.matchAll(IMAGE_BOOT)].map((m) => m[1]), [c.slot]);
  const v = await nodeVersion(client, port);
  assert.deepEqual([v.slot, v.imageVersion], [c.slot, c.version]);
}
