/**
 * Builds a disk image whose PID 1 is the imager's stand-in program
 * (imager/testdata/init_probe.ts), boots it under QEMU with TCG (OVMF →
 * systemd-boot → kernel → Deno), and checks that the program runs as pid 1
 * and that the forwarded API port answers. Needs the Debian packages in
 * imager/DEBIAN_PACKAGES and the Debian archive for the kernel download.
 * Long tier only (`deno task e2e:long`): every other QEMU case boots the
 * imager's images with machined as PID 1, so in CI this stand-in's own boot
 * proved nothing they do not (docs/decisions.md, "CI under 45 minutes").
 */
import assert from "node:assert/strict";
import { buildImage, startVm } from "../imager/mod.ts";
import { freePort } from "./helpers.ts";
import { LONG_TIER, LONG_TIER_ONLY } from "./tiers.ts";

const TIMEOUT_MS = 180_000;

Deno.test({
  name: "the imager's image boots the stand-in init as PID 1 under TCG and forwards its port " +
    `(needs qemu-system-x86_64) (${LONG_TIER_ONLY})`,
  ignore: !LONG_TIER ||
    !(await Deno.stat("/usr/bin/qemu-system-x86_64").then(() => true, () => false)),
}, async () => {
  const deadline = AbortSignal.timeout(TIMEOUT_MS);
  const t0 = performance.now();
  const image = await buildImage({
    program: new URL("../imager/testdata/init_probe.ts", import.meta.url).pathname,
    out: "build/e2e/probe.img",
    quietConsole: true,
    nativeAddon: "none",
    // The stand-in never pets the watchdog machined-init arms (docs/upgrade.md).
    append: "machined.watchdog=off",
  });
  const built = performance.now();
  const vm = await startVm({
    image: image.out,
    runDir: "build/e2e/qemu",
    hostPort: freePort(),
    accel: "tcg",
    snapshot: true,
  });
  try {
    const left = () => Math.max(1000, TIMEOUT_MS - (performance.now() - t0));
    assert.ok(!deadline.aborted, "image build used up the time budget");
    const m = await vm.waitForConsole(/INIT_PROBE_READY pid=(\d+) uptime=([\d.]+)[^\n]*\n/, {
      timeoutMs: left(),
      failOn: /Kernel panic|INIT_PROBE_FAILED/,
    });
    const booted = performance.now();
    assert.equal(m[1], "1", "the program must run as PID 1");
    const banner = await vm.waitForPort({ timeoutMs: Math.min(30_000, left()) });
    assert.equal(banner, "machined-probe pid=1\n");
    console.log(
      `image ${((built - t0) / 1000).toFixed(1)}s${image.skipped ? " (cached)" : ""}, ` +
        `QEMU start to marker ${((booted - built) / 1000).toFixed(1)}s ` +
        `(guest uptime at marker ${m[2]}s)`,
    );
  } finally {
    const how = await vm.stop({ gracefulMs: 2000 });
    assert.ok(how === "quit" || how === "powerdown", `stop returned ${how}`);
  }
});
