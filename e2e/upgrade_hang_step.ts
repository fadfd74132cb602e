/**
 * The upgrade test's hang step (e2e/node_upgrade_test.ts): a bundle whose
 * machined hangs its JavaScript thread after boot. The bundle is a test
 * image (it carries watchdog's marker file, so the hook may act) whose
 * signed command line adds `machined.test.hang_after_s=0` and a short running
 * watchdog timeout (`machined.watchdog=20`). On each of B's tries (one: the test
 * sets `machine.upgrade.boot_tries: 1`)
 * machined-init arms softdog, machined takes it over, pets it, hangs, and
 * softdog reboots the node; then B's tries have run out and the loader boots
 * A again, where `machinectl upgrade` finds the node and says it is not on B.
 * Figures: the upgrade command to back-on-A-and-ready, and the first hang to
 * the first reboot (the watchdog's own delay), from the console.
 * Also the unready step ({@link upgradeUnreadyStep}) on the same test image.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildImage, type ExtensionSource } from "../imager/mod.ts";
import { writeBundle } from "../bundle/mod.ts";
import type { loadSigningKey } from "../bundle/mod.ts";
import { HANG_WORD, TEST_HOOKS_MARKER } from "../watchdog/mod.ts";
import { UNREADY_WORD } from "../node/mod.ts";
import { upgradeStatus } from "./upgrade_status_checks.ts";
import { machinectl } from "./helpers.ts";

/** The hang bundle's running watchdog timeout, in seconds. */
export const HANG_WATCHDOG_S = 20;

/** What the step needs from the test's shared VM. */
export interface HangStepContext {
  work: string;
  /** machined's entry point and the machine config the images are built with. */
  program: string;
  config: string;
  client: string;
  port: number;
  consoleLog: string;
  compatible: { arch: string; board: string };
  signing: Awaited<ReturnType<typeof loadSigningKey>>;
  /** The system extensions the running node has (the test image must keep them). */
  extensions?: ExtensionSource[];
  /** The slot and version the node is on before the step (it must come back there). */
  slot: "A" | "B";
  version: string;
}

/** Inserts kernel words before the `--` that starts init's argv. Pure. */
export function withKernelWords(cmdline: string, words: string): string {
  const i = cmdline.indexOf(" -- ");
  return i < 0 ? `${cmdline} ${words}` : `${cmdline.slice(0, i)} ${words}${cmdline.slice(i)}`;
}

/** The test image (it carries the test-hooks marker), built once per work directory. */
const testImages = new Map<string, Promise<Awaited<ReturnType<typeof buildImage>>>>();

function testImage(c: HangStepContext) {
  let built = testImages.get(c.work);
  if (!built) {
    built = (async () => {
      const marker = join(c.work, "test-hooks");
      await Deno.writeTextFile(marker, "machined test hooks allowed (e2e only)\n");
      return await buildImage({
        program: c.program,
        out: join(c.work, "hooks.img"),
        config: c.config,
        quietConsole: true,
        imageVersion: "4.0.0-hooks",
        extraFiles: [{ source: marker, dest: TEST_HOOKS_MARKER, mode: 0o644, withLibs: false }],
        extensions: c.extensions,
      });
    })();
    testImages.set(c.work, built);
  }
  return built;
}

/** A bundle of the test image at `version` whose command line adds `words`. */
async function hookBundle(c: HangStepContext, name: string, version: string, words: string) {
  const h = await testImage(c);
  const bundle = join(c.work, `${name}.bundle`);
  await writeBundle(bundle, {
    files: {
      "vmlinuz": h.kernelPath,
      "initramfs.img": h.initramfsPath,
      "root.img": h.rootImagePath,
    },
    version,
    cmdline: withKernelWords(h.cmdline, words),
    compatible: c.compatible,
    key: c.signing,
    extensions: h.extensions,
  });
  return bundle;
}

/** `machinectl upgrade` failed (exit 1), saying the node came back on the slot it was on. */
function assertCameBack(c: HangStepContext, r: { code: number; out: string; err: string }) {
  assert.equal(r.code, 1, r.out + r.err);
  const version = c.version.replace(/\./g, "\\.");
  assert.match(
    r.err,
    new RegExp(`node came back on slot ${c.slot}, version ${version} .*not on slot`),
  );
}

/** Runs the step; returns its figures. */
export async function upgradeHangStep(
  c: HangStepContext & { tries: number },
): Promise<Record<string, number>> {
  const words = `machined.watchdog=${HANG_WATCHDOG_S} ${HANG_WORD}=0`;
  const bundle = await hookBundle(c, "hang", "4.0.0-hang", words);
  const before = (await Deno.readTextFile(c.consoleLog)).length;
  const t = performance.now();
  const r = await machinectl(c.client, c.port, "upgrade", "-f", bundle, "--timeout", "30m");
  const upgradeToBackS = +((performance.now() - t) / 1000).toFixed(1);
  assertCameBack(c, r);
  assert.match(r.out, new RegExp(`armed as machined-b\\+${c.tries}\\.conf`));
  const log = (await Deno.readTextFile(c.consoleLog)).slice(before);
  // The kernel log's copy of the hook's line (machined's own log has one too).
  const hangs = log.match(/\] machined: TEST HOOK machined\.test\.hang_after_s/g)?.length ?? 0;
  const fired = log.match(/softdog: Initiating system reboot/g)?.length ?? 0;
  assert.ok(
    hangs >= c.tries,
    `machined hung on each of B's ${c.tries} tries (saw ${hangs})\n${log.slice(-4000)}`,
  );
  assert.ok(fired >= c.tries, `softdog rebooted each hang (saw ${fired})`);
  return {
    hangFallbackToReadyS: upgradeToBackS,
    hangs,
    watchdogReboots: fired,
    ...hangToReboot(log),
    ...armedToBack(log),
  };
}

/** Seconds from the first hang to softdog's reboot, from the console's kernel timestamps. */
function hangToReboot(log: string): Record<string, number> {
  const stamp = (re: RegExp) => {
    const m = log.match(re);
    return m ? Number(m[1]) : undefined;
  };
  const hung = stamp(/\[\s*(\d+\.\d+)\] machined: TEST HOOK/);
  const fired = stamp(/\[\s*(\d+\.\d+)\] softdog: Initiating system reboot/);
  return hung !== undefined && fired !== undefined && fired > hung
    ? { firstHangToWatchdogRebootS: +(fired - hung).toFixed(1) }
    : {};
}

/**
 * Seconds from slot B armed to the API ready on the old slot again, from
 * machined's log lines (the guest's wall clock, which nothing steps in this
 * test: the VM has no NTP server it can resolve).
 */
function armedToBack(log: string): Record<string, number> {
  const iso = (re: RegExp, last = false) => {
    const all = [...log.matchAll(re)];
    const m = last ? all.at(-1) : all[0];
    return m ? Date.parse(m[1]) : NaN;
  };
  const armed = iso(/(\S+Z) \[info\] upgrade: armed/g);
  const ready = iso(/(\S+Z) \[info\] boot: API ready/g, true);
  return ready > armed ? { armedToBackReadyS: +((ready - armed) / 1000).toFixed(1) } : {};
}

/**
 * The unready step: a bundle whose machined boots and serves but is never
 * ready (the test image's `machined.test.unready=1` hook raises an unmet
 * condition), under a config whose `machine.upgrade.trial_deadline` is 1
 * min: the trial is marked bad at the deadline and the node reboots into the
 * slot it came from by itself; `machinectl upgrade` says so (exit 1). The
 * config's deadline is put back afterwards. Returns the upgrade command's
 * seconds to back-and-ready.
 */
export async function upgradeUnreadyStep(
  c: HangStepContext & { applyDeadline: (deadline: string | undefined) => Promise<void> },
): Promise<Record<string, number>> {
  const bundle = await hookBundle(c, "unready", "4.1.0-unready", `${UNREADY_WORD}=1`);
  await c.applyDeadline("1m");
  try {
    const t = performance.now();
    const r = await machinectl(c.client, c.port, "upgrade", "-f", bundle, "--timeout", "20m");
    const seconds = +((performance.now() - t) / 1000).toFixed(1);
    assertCameBack(c, r);
    const s = await upgradeStatus(c.client, c.port, (s) => s.last.outcome === "rolled-back");
    const trial = c.slot === "A" ? "B" : "A";
    assert.deepEqual(
      [s.booted, s.slots.find((x) => x.slot === trial)?.state],
      [c.slot, "bad"],
      JSON.stringify(s),
    );
    assert.match(s.last.reason, /not ready 1 min after machined started/, JSON.stringify(s.last));
    return { unreadyFallbackToReadyS: seconds };
  } finally {
    await c.applyDeadline(undefined);
  }
}
