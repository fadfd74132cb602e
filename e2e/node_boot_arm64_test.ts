/**
 * The arm64 QEMU tier: the node `deno task up --arch arm64` boots, built on
 * this x86_64 host (arm64 Debian kernel, systemd-boot aa64, containerd and
 * runc from Debian's arm64 packages through a private apt; Deno 2.9.3 from
 * npm; native-ops and machined-init cross-built in native-ops/cross's
 * chroot), booted under `qemu-system-aarch64 -M virt` with AAVMF and TCG
 * (AAVMF → systemd-boot → kernel → machined-init → Deno → machined as PID 1).
 * Checked from the host through the API: Version answers over mutual TLS
 * with the config's hostname, machined is PID 1 on aarch64, MachineStatus
 * reaches running, STATE and EPHEMERAL are provisioned on the image's own
 * disk, containerd reports CRI RuntimeReady, and the read-only root refuses
 * writes. Figures go to bench/results/boot-arm64.json in node_boot_test's
 * format. Then, on the same VM (an emulated arm64 boot takes minutes, so
 * one VM serves both), the upgrade steps of e2e/arm64_upgrade.ts: a signed
 * arm64 bundle upgrades the node to slot B, an x86_64 bundle is refused,
 * rollback to A. The image is built at version X with a trusted key in its
 * config and booted without `snapshot`, so the host can read its ESP.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { ensureNodeBundle, PROFILES, UP_INSTALL_DISK, upNode } from "../imager/mod.ts";
import {
  API_READY,
  APID_PRIVILEGES,
  assertApidUnprivileged,
  bootFigures,
  FAIL,
  FOOTPRINT,
  reportBootFigures,
  ROOT_MOUNTED,
  RSS,
} from "./boot_figures.ts";
import { freePort, machinectl, removeScratch, waitForDocs } from "./helpers.ts";
import { ARM64_X, upgradeArm64 } from "./arm64_upgrade.ts";
import { generateSigningKey, loadSigningKey } from "../bundle/mod.ts";
import { LONG_TIER, LONG_TIER_ONLY } from "./tiers.ts";

/**
 * TCG emulating arm64 on an x86_64 host: 2.0 min from QEMU start to the API
 * with the code cache (6.4 min without) at a host load of 14, after a 3 min
 * build (docs/imager.md). The budget leaves room for a loaded CI host; the
 * boot alone took 6 min, with the upgrade steps 23–28 min at loads of 4–18.
 */
const API_TIMEOUT_MS = 15 * 60_000;
const HOSTNAME = "e2e-arm64";
/**
 * The upgrade steps add a second arm64 build (with its code cache) and two
 * reboots (about 3.5 of the case's 7.8 min on a quiet host, more under load:
 * docs/upgrade.md): the long tier's (e2e/tiers.ts), or with
 * MACHINED_E2E_ARM64_UPGRADE=1; MACHINED_E2E_ARM64_UPGRADE=0 skips them there too.
 */
const ARM64_UPGRADE = Deno.env.get("MACHINED_E2E_ARM64_UPGRADE");
const SKIP_UPGRADE = ARM64_UPGRADE === "0" || (!LONG_TIER && ARM64_UPGRADE !== "1");

const exists = (p: string) => Deno.stat(p).then(() => true, () => false);
const arm64 = PROFILES.arm64;
const hasQemu = await exists(`/usr/bin/${arm64.qemu.binary}`) &&
  await exists(arm64.qemu.firmwareCode);
/** native-ops/cross needs root (chroot, unshare) and debootstrap, or a chroot already made. */
const canCross = Deno.uid() === 0 &&
  (await exists("/usr/sbin/debootstrap") || await exists(".cache/cross/bookworm/usr/bin/rustc"));

Deno.test({
  name: "an arm64 node boots in qemu-system-aarch64 (virt, AAVMF, TCG) as PID 1: mTLS API, " +
    "STATE and EPHEMERAL, containerd RuntimeReady; upgrades A→B on a signed arm64 bundle, " +
    "refuses an x86_64 one, rolls back (needs qemu-system-arm, qemu-efi-aarch64, root and " +
    "debootstrap)",
  ignore: !hasQemu || !canCross,
  sanitizeOps: false,
  sanitizeResources: false,
}, async (t) => {
  const work = "build/e2e/arm64";
  await Deno.remove(work, { recursive: true }).catch(() => {});
  await Deno.mkdir(work, { recursive: true });
  const port = freePort();
  const nodeDir = join(work, "node");
  // The up node's machine config, trusting our upgrade signing key.
  const key = await generateSigningKey();
  const signing = await loadSigningKey(key.privatePem);
  const nodeBundle = await ensureNodeBundle(nodeDir, { name: HOSTNAME, port });
  const cfg = parse(await Deno.readTextFile(nodeBundle.paths.machineConfig));
  cfg.machine.upgrade = { trusted_keys: [key.publicPem] };
  const machineConfig = join(work, "machine.yaml");
  await Deno.writeTextFile(machineConfig, stringify(cfg));
  const program = new URL("../main.ts", import.meta.url).pathname;
  const node = await upNode({
    nodeDir,
    name: HOSTNAME,
    port,
    image: {
      arch: "arm64",
      program,
      out: join(work, "node.img"),
      config: machineConfig,
      quietConsole: true,
      imageVersion: ARM64_X,
      force: true,
    },
    vm: { arch: "arm64", runDir: join(work, "qemu") },
    timeoutMs: API_TIMEOUT_MS,
  });
  const { vm, image } = node;
  const config = node.bundle.paths.clientConfig;
  try {
    assert.equal(vm.state.accel, "tcg");
    const ready = await vm.waitForConsole(API_READY, { timeoutMs: 10_000, failOn: FAIL });
    assert.equal(ready[1], "1", "machined must run as PID 1");
    assert.equal(node.hostname, HOSTNAME);
    const version = await machinectl(config, port, "version");
    assert.equal(version.code, 0, version.err);
    assert.match(version.out, new RegExp(`hostname ${HOSTNAME}`));
    const [ms] = await waitForDocs(
      config,
      port,
      ["machinestatus"],
      (d) => d[0]?.spec.stage === "running" && d[0]?.spec.pid1 === true,
    );
    assert.equal(ms.spec.mode, "node");
    const vs = await waitForDocs(
      config,
      port,
      ["volumestatus"],
      (d) =>
        ["STATE", "EPHEMERAL"].every((id) =>
          d.find((v) => v.metadata.id === id)?.spec.phase === "ready"
        ),
    );
    const provisionedS = +((performance.now() - node.qemuStart) / 1000).toFixed(1);
    for (const v of vs.filter((v) => ["STATE", "EPHEMERAL"].includes(v.metadata.id))) {
      assert.equal(v.spec.disk, UP_INSTALL_DISK, JSON.stringify(v));
      assert.equal(v.spec.filesystem, "ext4");
    }
    await waitForDocs(config, port, ["runtimestatus"], (d) => d[0]?.spec.ready === true);
    const rss = await vm.waitForConsole(RSS, { timeoutMs: 60_000, failOn: FAIL });
    // apid is the cross-built machined-edge, unprivileged, in its own limited cgroup.
    assertApidUnprivileged(
      await vm.waitForConsole(APID_PRIVILEGES, { timeoutMs: 10_000, failOn: FAIL }),
    );
    const root = await vm.waitForConsole(ROOT_MOUNTED, { timeoutMs: 10_000, failOn: FAIL });
    const foot = await vm.waitForConsole(FOOTPRINT, { timeoutMs: 120_000, failOn: FAIL });
    assert.equal(foot[4], "EROFS", `writing /usr must fail as read-only: ${foot[0]}`);
    assert.equal(foot[5], "EROFS", `writing /machined must fail as read-only: ${foot[0]}`);

    const figures = await bootFigures({
      accel: vm.state.accel,
      image,
      apiMs: node.apiMs,
      volumesReadyS: provisionedS,
      ready,
      rss,
      root,
      foot,
      console: await vm.console(),
    });
    await reportBootFigures("boot-arm64", "bench/results/boot-arm64.json", {
      arch: "arm64",
      ...figures,
    });

    await t.step({
      name: "upgrade A→B on a signed arm64 bundle, x86_64 refused, rollback" +
        (SKIP_UPGRADE ? ` (${LONG_TIER_ONLY})` : ""),
      ignore: SKIP_UPGRADE,
      fn: () =>
        upgradeArm64({
          work,
          program,
          config: machineConfig,
          image,
          client: config,
          port,
          key: signing,
        }),
    });
  } finally {
    await vm.stop({ gracefulMs: 30_000 });
  }
  await removeScratch(work);
});
