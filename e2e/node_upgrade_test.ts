/**
 * The QEMU tier for upgrades (docs/upgrade.md), on one VM reused across the
 * steps: build the up node's image at version X with a trusted signing key
 * in its config, and a bundle of the same node at version Y, both carrying a
 * system extension (`hello`, e2e/extension_checks.ts) and a service that runs
 * from it; then
 *   0. the service runs from the extension (ExtensionStatus mounted with its
 *      SHA-256), and a bundle of Y without it is refused (extension-dropped);
 *   1. `machinectl upgrade -f Y` (kexec, the default): the node comes back on
 *      slot B reporting Y without a firmware pass on the console (machined's
 *      `+3` → `+2-1` rename logged), blesses B, and a cold boot of B
 *      (`reboot --mode powercycle`) lands on B again (e2e/upgrade_kexec_step.ts);
 *      the service runs from B's extension;
 *   2. `machinectl rollback`: back on slot A reporting X; a bundle above X
 *      but below the floor Y (raised when B was blessed) is refused;
 *   3. a bundle whose kernel panics at once (`rdinit=/nonexistent`, with the
 *      image's `panic=10`), booted by kexec (machined counts B's first try),
 *      then twice by systemd-boot: B's three tries run out and the node comes
 *      back on A by itself; `machinectl upgrade` says so (exit 1); then
 *      `machinectl rollback` to the bad B is refused (FailedPrecondition);
 *   4. an untrusted bundle is refused (PermissionDenied) and the node stays;
 *      so are trusted bundles whose command line names the booted slot or
 *      holds a newline (InvalidArgument, bad-cmdline: issue 28);
 *   4c. Y again (the floor: a replay) and `deadbeef` (no order) are refused
 *      without --force; 4d. `upgrade --from` a host server that stalls after
 *      12 bytes is refused DeadlineExceeded at the idle deadline, the ESP
 *      free at once (e2e/upgrade_refusal_step.ts);
 *   5. a bundle whose machined hangs after boot (a test image's hook), armed
 *      with one try (`machine.upgrade.boot_tries: 1`; step 3 proves three):
 *      softdog, armed by machined-init and petted by machined, reboots it and
 *      the node comes back on A by itself
 *      (e2e/upgrade_hang_step.ts); `machinectl upgrade` says so (exit 1);
 *   5b. a bundle whose machined boots but is never ready (a test image's
 *      hook), with `machine.upgrade.trial_deadline` at 1 min: marked bad at
 *      the deadline, back on A by itself (e2e/upgrade_hang_step.ts);
 *   6. `machinectl upgrade -f Y --mode powercycle` (a cold reboot): back on
 *      slot B reporting Y, ready, blessed (event `upgrade slot B blessed`);
 *   7. (long tier) v1 → v2 (good) → v3 (broken): from B at Y, the panicking bundle goes
 *      to A and the node comes back on B at Y by itself;
 *   8. power cuts (QMP) at each step of an upgrade's slot write (in CI's
 *      short tier only halfway through receiving: e2e/tiers.ts) and between
 *      the trial's ready and its bless: every boot lands on the booted slot
 *      or the new trial, and `fsck.fat -n` finds the ESP undamaged
 *      (e2e/upgrade_power_cut_step.ts).
 * The untrusted and below-floor refusals leave the ESP's files unchanged
 * (read from the disk image on the host, which is why the VM runs on the
 * image itself rather than a snapshot).
 * After every step's reboots STATE and EPHEMERAL are the filesystems the
 * first boot made, left as they were, and a foreign disk attached to the VM
 * is byte-for-byte unchanged at the end (e2e/upgrade_data_checks.ts).
 * The kexec (step 1) and cold (step 6) upgrade times: arm (send, verify,
 * write, arm), reboot to ready, total.
 * After steps 1–3 `machinectl get upgradestatus` shows the slots, the floor
 * and the outcome (e2e/upgrade_status_checks.ts).
 * Times go to bench/results/upgrade.json.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import {
  buildImage,
  bundleCompatible,
  ensureNodeBundle,
  isRunning,
  upNode,
} from "../imager/mod.ts";
import { generateSigningKey, loadSigningKey, writeBundle } from "../bundle/mod.ts";
import { freePort, machinectl, removeScratch } from "./helpers.ts";
import { kexecUpgradeThenColdBoot, upgradeTimes } from "./upgrade_kexec_step.ts";
import { upgradeRefusalStep } from "./upgrade_refusal_step.ts";
import * as us from "./upgrade_status_checks.ts";
import { upgradeHangStep, upgradeUnreadyStep } from "./upgrade_hang_step.ts";
import { espFingerprint, hasEvent, nodeVersion } from "./upgrade_helpers.ts";
import { reSignedBundle } from "./hostile_bundle.ts";
import * as data from "./upgrade_data_checks.ts";
import { upgradePowerCutStep, WRITE_POINTS, type WritePoint } from "./upgrade_power_cut_step.ts";
import { byTier, LONG_TIER, LONG_TIER_ONLY } from "./tiers.ts";
import { checkEsp } from "./fat_check.ts";
import {
  assertExtensionRuns,
  buildHelloExtension,
  EXT,
  extensionService,
} from "./extension_checks.ts";

const hasQemu = await Deno.stat("/usr/bin/qemu-system-x86_64").then(() => true, () => false);
const X = "1.0.0-e2e";
const Y = "2.0.0-e2e";

Deno.test({
  name: "upgrade in QEMU: A→B on a signed bundle, rollback to A, a panicking bundle falls back " +
    "by itself, power cuts during an upgrade land on A or the B trial (needs qemu-system-x86_64)",
  ignore: !hasQemu,
  sanitizeOps: false,
  sanitizeResources: false,
}, async (ctx) => {
  const work = "build/e2e/upgrade";
  await Deno.remove(work, { recursive: true }).catch(() => {});
  await Deno.mkdir(work, { recursive: true });
  const port = freePort();
  const nodeDir = join(work, "node");
  const name = "e2e-upgrade";
  // A machine config that trusts our signing key.
  const key = await generateSigningKey();
  const bundleDir = await ensureNodeBundle(nodeDir, { name, port });
  const cfg = parse(await Deno.readTextFile(bundleDir.paths.machineConfig));
  cfg.machine.upgrade = { trusted_keys: [key.publicPem] };
  // A system extension in X's slot and in Y's, and a service that runs from it (issue 32).
  const hello = await buildHelloExtension(work);
  const extensions = [{ name: EXT.name, path: hello.path }];
  cfg.machine.services = [...(cfg.machine.services ?? []), extensionService()];
  const config = join(work, "machine.yaml");
  await Deno.writeTextFile(config, stringify(cfg));
  const program = new URL("../main.ts", import.meta.url).pathname;
  const foreign = await data.makeForeignDisk(work);
  const t0 = performance.now();
  const node = await upNode({
    nodeDir,
    name,
    port,
    image: {
      program,
      out: join(work, "x.img"),
      config,
      quietConsole: true,
      imageVersion: X,
      extensions,
    },
    vm: { runDir: join(work, "qemu"), accel: "auto", snapshot: false, extraDisks: [foreign.path] },
    timeoutMs: 600_000,
  });
  const { vm } = node;
  const disk = node.image.out;
  /** The ESP's listing and loader entries, read from the disk image. */
  const esp = () => espFingerprint(disk, node.image.layout!.espOffset);
  const client = node.bundle.paths.clientConfig;
  const figures: Record<string, number | string> = {
    at: new Date().toISOString(),
    accel: vm.state.accel,
    firstBootS: +((performance.now() - t0) / 1000).toFixed(1),
  };
  try {
    let v = await nodeVersion(client, port);
    assert.equal(v.slot, "A");
    assert.equal(v.imageVersion, X);
    const volumes = await data.volumeIdentities(client, port);
    const kept = (step: string) => data.assertVolumesKept(client, port, volumes, step);

    // The bundle of version Y: the same node, rebuilt with another version.
    const y = await buildImage({
      program,
      out: join(work, "y.img"),
      config,
      quietConsole: true,
      imageVersion: Y,
      extensions,
    });
    const signing = await loadSigningKey(key.privatePem);
    const files = {
      "vmlinuz": y.kernelPath,
      "initramfs.img": y.initramfsPath,
      "root.img": y.rootImagePath,
    };
    const compatible = bundleCompatible(y.arch);
    const yBundle = join(work, "y.bundle");
    const yb = await writeBundle(yBundle, {
      files,
      version: Y,
      cmdline: y.cmdline,
      compatible,
      key: signing,
      extensions: y.extensions,
    });
    figures.bundleBytes = yb.bytes;
    assert.deepEqual(yb.manifest.extensions?.map((e) => [e.name, e.sha256]), [
      [EXT.name, hello.sha256],
    ]);

    // 0. The service runs from X's extension; a bundle of Y without it is refused, unforced.
    await assertExtensionRuns(client, port, hello.sha256, "on A before the upgrade");
    const dropping = join(work, "drop-extension.bundle");
    await writeBundle(dropping, {
      files,
      version: Y,
      cmdline: y.cmdline,
      compatible,
      key: signing,
    });
    let espBefore = await esp();
    let r = await machinectl(client, port, "upgrade", "-f", dropping, "--wait=false");
    assert.equal(r.code, 1, r.out + r.err);
    assert.match(r.err, /FailedPrecondition|failed.precondition/i);
    assert.match(r.err, /drops system extension "hello" that the running node has/);
    assert.match(r.err, /extension-dropped/);
    assert.deepEqual(await esp(), espBefore, "a bundle dropping an extension changed nothing");

    // 1. A kexec upgrade to Y (B), then a cold boot that lands on B again.
    await kexecUpgradeThenColdBoot({
      client,
      port,
      consoleLog: vm.state.consoleLog,
      bundle: yBundle,
      slot: "B",
      version: Y,
      figures,
      hasEvent: (subject, action) => hasEvent(client, port, subject, action),
    });
    await us.assertUpgraded(client, port, X, Y);
    await kept("kexec upgrade and cold boot");
    await assertExtensionRuns(client, port, hello.sha256, "on B after the upgrade");

    // 2. Rollback → A, reporting X.
    let t = performance.now();
    r = await machinectl(client, port, "rollback", "--timeout", "15m");
    assert.equal(r.code, 0, r.out + r.err);
    assert.match(r.out, /node back on slot A, version 1\.0\.0-e2e and ready/);
    figures.rollbackToReadyS = +((performance.now() - t) / 1000).toFixed(1);
    await us.assertRolledBack(client, port, Y);
    await kept("rollback");
    // Above the running X but below the floor Y (raised when B was blessed): refused.
    const below = join(work, "below.bundle");
    await writeBundle(below, {
      files,
      version: "1.5.0-e2e",
      cmdline: y.cmdline,
      compatible,
      key: signing,
      extensions: y.extensions,
    });
    espBefore = await esp();
    await us.assertBelowFloorRefused(client, port, below, "1.5.0-e2e");
    assert.deepEqual(await esp(), espBefore, "a refused bundle changed nothing on the ESP");

    // 3. A bundle whose kernel finds no init: panic, panic=10 reboots, B's tries run out, A.
    const broken = join(work, "broken.bundle");
    await writeBundle(broken, {
      files,
      version: "3.0.0-broken",
      cmdline: y.cmdline.replace("rdinit=/sbin/machined-init", "rdinit=/nonexistent"),
      compatible,
      key: signing,
      extensions: y.extensions,
    });
    const panicking = { client, port, consoleLog: vm.state.consoleLog, bundle: broken };
    figures.panicFallbackToReadyS = await panicFallback({ ...panicking, back: ["A", X] });
    await us.assertFellBack(client, port, "A");
    await kept("panic fallback");
    // Rollback to the bad B: refused, and nothing changes.
    r = await machinectl(client, port, "rollback", "--wait=false");
    assert.equal(r.code, 1, r.out + r.err);
    assert.match(r.err, /FailedPrecondition|failed.precondition/i);
    assert.match(r.err, /slot B is bad .*not a known-good image/);
    v = await nodeVersion(client, port);
    assert.deepEqual([v.slot, v.imageVersion], ["A", X]);

    // 4. An untrusted bundle is refused; the node stays on A.
    const stranger = await loadSigningKey((await generateSigningKey()).privatePem);
    const untrusted = join(work, "untrusted.bundle");
    await writeBundle(untrusted, {
      files,
      version: Y,
      cmdline: y.cmdline,
      compatible,
      key: stranger,
      extensions: y.extensions,
    });
    espBefore = await esp();
    r = await machinectl(client, port, "upgrade", "-f", untrusted, "--wait=false");
    assert.equal(r.code, 1);
    assert.match(r.err, /PermissionDenied|unknown-key/);
    assert.deepEqual(await esp(), espBefore, "an untrusted bundle changed nothing on the ESP");
    v = await nodeVersion(client, port);
    assert.deepEqual([v.slot, v.imageVersion], ["A", X]);
    // 4b. Trusted bundles whose command line names the booted slot or adds entry lines (issue 28).
    for (const extra of [" machined.slot=A", "\nlinux /A/vmlinuz"]) {
      const hostile = join(work, "hostile.bundle");
      await reSignedBundle(yBundle, hostile, signing, (m) => {
        const at = m.cmdline.indexOf(" -- ");
        m.cmdline = m.cmdline.slice(0, at) + extra + m.cmdline.slice(at);
      });
      r = await machinectl(client, port, "upgrade", "-f", hostile, "--wait=false");
      assert.equal(r.code, 1, r.out + r.err);
      assert.match(r.err, /InvalidArgument|invalid.argument/i);
      assert.match(r.err, /bad-cmdline/);
      assert.deepEqual(await esp(), espBefore, `${JSON.stringify(extra)} changed the ESP`);
    }
    v = await nodeVersion(client, port);
    assert.deepEqual([v.slot, v.imageVersion], ["A", X]);
    // 4c, 4d. The floor's replay and an unordered version; a --from server that stalls.
    Object.assign(
      figures,
      await upgradeRefusalStep({
        client,
        port,
        work,
        floorBundle: yBundle,
        files,
        cmdline: y.cmdline,
        compatible,
        signing,
        esp,
        extensions: y.extensions,
      }),
    );
    v = await nodeVersion(client, port);
    assert.deepEqual([v.slot, v.imageVersion], ["A", X]);

    // 5. A bundle whose machined hangs, armed with one try (`machine.upgrade.boot_tries: 1`;
    // step 3 proved the loader's three): the watchdog reboots it, then A by itself.
    const applyUpgrade = async (upgrade: { trial_deadline?: string; boot_tries?: number }) => {
      const c = structuredClone(cfg);
      Object.assign(c.machine.upgrade ??= {}, upgrade);
      const file = join(work, "machine-upgrade.yaml");
      await Deno.writeTextFile(file, stringify(c));
      const a = await machinectl(client, port, "apply-config", "-f", file);
      assert.equal(a.code, 0, a.out + a.err);
    };
    await applyUpgrade({ boot_tries: 1 });
    const { consoleLog } = vm.state;
    const hang = {
      work,
      program,
      config,
      client,
      port,
      consoleLog,
      compatible,
      signing,
      extensions,
    };
    Object.assign(figures, await upgradeHangStep({ ...hang, slot: "A", version: X, tries: 1 }));
    await kept("watchdog fallback");

    // 5b. A bundle that boots but is never ready: marked bad at the trial deadline (1 min here),
    // then the config back as it was (three tries, the default deadline).
    const applyDeadline = (deadline: string | undefined) =>
      applyUpgrade(deadline ? { trial_deadline: deadline, boot_tries: 1 } : {});
    Object.assign(
      figures,
      await upgradeUnreadyStep({ ...hang, slot: "A", version: X, applyDeadline }),
    );
    await kept("unready fallback");

    // 6. A cold upgrade A → B (--mode powercycle), back on B reporting Y, blessed. Y is the
    // floor since step 1 blessed it: installing it again is a replay, so it is forced.
    t = performance.now();
    r = await machinectl(
      client,
      port,
      "upgrade",
      "-f",
      yBundle,
      "--force",
      "--mode",
      "powercycle",
      "--timeout",
      "15m",
    );
    assert.equal(r.code, 0, r.out + r.err);
    assert.match(r.out, /slot B armed as machined-b\+3\.conf: version 2\.0\.0-e2e/);
    assert.match(r.out, /node back on slot B, version 2\.0\.0-e2e and ready/);
    figures.upgradeToReadyS = +((performance.now() - t) / 1000).toFixed(1);
    Object.assign(figures, upgradeTimes("cold", r.out));
    v = await nodeVersion(client, port);
    assert.deepEqual([v.slot, v.imageVersion], ["B", Y]);
    assert.ok(await hasEvent(client, port, "slot B", "blessed"), "B is blessed once ready");
    await kept("cold upgrade");

    // 7. v1 → v2 → v3: the broken bundle goes to A (X's slot); back on B at Y by itself.
    // Step 3 from the other slot: the long tier's (e2e/tiers.ts).
    await ctx.step({
      name: "v1 → v2 → v3: a panicking bundle from slot B falls back to B" +
        (LONG_TIER ? "" : ` (${LONG_TIER_ONLY})`),
      ignore: !LONG_TIER,
      fn: async () => {
        figures.v3FallbackToReadyS = await panicFallback({ ...panicking, back: ["B", Y] });
        await us.assertFellBack(client, port, "B");
        await kept("v3 fallback");
      },
    });

    // 8. Power cuts during an upgrade to Y and before its bless; the short tier cuts the
    // slot write once, halfway through receiving the files (e2e/tiers.ts).
    const writePoints = byTier<readonly WritePoint[]>(WRITE_POINTS, ["receiving"]);
    if (!LONG_TIER) {
      // Named as skipped, so the tally shows what the short tier leaves out.
      await ctx.step({
        name: `power cuts just after verifying and just after writing the slot (${LONG_TIER_ONLY})`,
        ignore: true,
        fn: () => {},
      });
    }
    figures.tier = LONG_TIER ? "long" : "short";
    Object.assign(
      figures,
      await upgradePowerCutStep({
        client,
        port,
        vm,
        disk,
        work,
        bundle: yBundle,
        version: Y,
        afterBoot: kept,
        writePoints,
      }),
    );

    console.log(JSON.stringify({ suite: "upgrade", ...figures }));
    await Deno.mkdir("bench/results", { recursive: true });
    await Deno.writeTextFile("bench/results/upgrade.json", JSON.stringify(figures, null, 2) + "\n");
  } finally {
    if (await isRunning(vm.state.pid)) await vm.stop({ gracefulMs: 1000 });
  }
  await data.assertForeignDiskUnchanged(foreign);
  // Undamaged at the end. Its dirty bit stays set after the cuts: Linux never clears a
  // dirty bit it found at mount time, only fsck.fat does (docs/upgrade.md).
  assert.deepEqual((await checkEsp(disk, work)).damage, [], "the ESP at the end");
  await removeScratch(work);
});

/**
 * `machinectl upgrade -f bundle` with a bundle whose kernel panics: the other
 * slot's three tries run out and the node comes back on `back` by itself
 * (exit 1, saying so). Returns the seconds to ready.
 */
async function panicFallback(o: {
  client: string;
  port: number;
  consoleLog: string;
  bundle: string;
  back: ["A" | "B", string];
}): Promise<number> {
  const [slot, version] = o.back;
  const trial = slot === "A" ? "B" : "A";
  const panicsBefore = await countPanics(o.consoleLog);
  const t = performance.now();
  const r = await machinectl(o.client, o.port, "upgrade", "-f", o.bundle, "--timeout", "20m");
  assert.equal(r.code, 1, r.out + r.err);
  const said = `node came back on slot ${slot}, version ${version.replaceAll(".", "\\.")} ` +
    `.*not on slot ${trial}`;
  assert.match(r.err, new RegExp(said));
  const seconds = +((performance.now() - t) / 1000).toFixed(1);
  const panics = (await countPanics(o.consoleLog)) - panicsBefore;
  assert.ok(panics >= 3, `${trial} panicked on each of its three tries (saw ${panics})`);
  return seconds;
}

async function countPanics(consoleLog: string): Promise<number> {
  return (await Deno.readTextFile(consoleLog)).match(/Kernel panic/g)?.length ?? 0;
}
