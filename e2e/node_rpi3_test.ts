/**
 * The Raspberry Pi 3 tier: the SD-card image `deno task image --board rpi3`
 * builds (Debian's generic arm64 kernel and raspi-firmware, a GPT with a
 * hybrid MBR, the firmware's boot FAT with slots A and B), booted under
 * QEMU's raspi3ap model with TCG: the Pi 3 A+, 512 MiB, the smallest board
 * machined targets. QEMU cannot run the GPU firmware, so the kernel, the 3
 * A+'s device tree, initramfs and command line are copied out of the image's
 * slot A and given to QEMU's loader (imager/qemu/raspi_vm.ts); the SD card is
 * the image itself, the network QEMU's usb-net on the SoC's DWC2 (the 3 A+
 * has no Ethernet chip: a USB Ethernet dongle, as on the real board).
 * Checked: machined-init finds the boot partition on the SD card and mounts
 * the verified root, machined runs as PID 1, the API answers over mutual TLS
 * through the USB NIC, STATE and EPHEMERAL are provisioned on /dev/mmcblk0,
 * and afterwards the SD card still has its hybrid MBR (the Pi's ROM needs it)
 * beside the new GPT. The SD card is prepared as an install of A from B
 * leaves it (slot.txt B, trial.txt A): machined-init consumes A's try on the
 * real vfat, and the upgrade steps (e2e/rpi3_upgrade.ts) follow on the same
 * VM: A blessed once ready, a UEFI bundle refused by its board, the Pi's own
 * bundle staged into B and armed, a rollback to it refused; the FAT is then
 * checked from the host. config.txt, os_prefix and the firmware are
 * hardware-only.
 * Figures go to bench/results/boot-rpi3.json in node_boot_test's format, with
 * the guest's MemTotal and MemAvailable once STATE and EPHEMERAL are ready
 * (the case runs no containerd).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildImage, startRaspiVm, waitForApi } from "../imager/mod.ts";
import { renderConfigTemplate } from "../config/mod.ts";
import { generateNodeBundle } from "../pki/mod.ts";
import { decodeMbr, MBR_TYPE_FAT32_LBA, readGpt } from "../platform/block/mod.ts";
import { API_READY, FAIL, ROOT_MOUNTED } from "./boot_figures.ts";
import { serveHostTime } from "./host_time.ts";
import { parse, stringify } from "yaml";
import { generateSigningKey, loadSigningKey } from "../bundle/mod.ts";
import { armTrialOfA, checkPiFat, PI_X, upgradePi } from "./rpi3_upgrade.ts";
import { freePort, machinectl, removeScratch, waitForDocs } from "./helpers.ts";
import { memoryMiB, oomKills, readMemory } from "./memory_figures.ts";

/** Budgets: an image build with the code cache (3 to 10 min) and the emulated Pi's boot. */
const API_TIMEOUT_MS = 15 * 60_000;
const HOSTNAME = "e2e-rpi3";
const SD_DISK = "/dev/mmcblk0";
/** The Pi 3 A+ (imager/rpi/board.ts): 512 MiB, of which QEMU gives the GPU 64. */
const MACHINE = "raspi3ap";
const MEMORY_MIB = 512;

const exists = (p: string) => Deno.stat(p).then(() => true, () => false);
const hasQemu = await exists("/usr/bin/qemu-system-aarch64");
const canCross = Deno.uid() === 0 &&
  (await exists("/usr/sbin/debootstrap") || await exists(".cache/cross/bookworm/usr/bin/rustc"));

async function readSector0AndGpt(image: string) {
  using f = await Deno.open(image, { read: true });
  const size = (await f.stat()).size;
  const read = async (offset: number, length: number) => {
    const buf = new Uint8Array(length);
    await f.seek(offset, Deno.SeekMode.Start);
    for (let o = 0; o < length;) o += (await f.read(buf.subarray(o)))!;
    return buf;
  };
  return { mbr: decodeMbr(await read(0, 512)), gpt: await readGpt(read, size, 512) };
}

Deno.test({
  name: "a Raspberry Pi 3 image boots in qemu-system-aarch64 -M raspi3ap (the 512 MiB 3 A+, TCG, " +
    "kernel from the image's slot A) as PID 1: mTLS API over usb-net, STATE and EPHEMERAL on the " +
    "SD card, hybrid MBR kept; the trial A blessed, a UEFI bundle refused, the Pi's bundle staged " +
    "into B (needs qemu-system-arm, root and debootstrap)",
  ignore: !hasQemu || !canCross,
  sanitizeOps: false,
  sanitizeResources: false,
}, async () => {
  const work = "build/e2e/rpi3";
  await Deno.remove(work, { recursive: true }).catch(() => {});
  const port = freePort();
  const key = await generateSigningKey();
  const signing = await loadSigningKey(key.privatePem);
  const bundle = await generateNodeBundle({
    name: HOSTNAME,
    endpoint: `127.0.0.1:${port}`,
    outDir: join(work, "node"),
    renderMachineConfig: ({ ca }) =>
      renderConfigTemplate({
        hostname: HOSTNAME,
        ca,
        certSans: ["127.0.0.1"],
        installDisk: SD_DISK,
        // QEMU's usb-net (cdc_ether/rndis_host) names its link usb0; a real 3 B's is eth0.
        interfaces: [{ name: "usb0", dhcp: true }],
        containerd: false,
        // The Pi has no real-time clock: it boots in 1970 and refuses every client
        // certificate until its first NTP sync (10.0.2.2:123 is the host's loopback).
        timeServers: ["10.0.2.2"],
      }),
  });
  // The node trusts our upgrade signing key.
  const cfg = parse(await Deno.readTextFile(bundle.paths.machineConfig));
  cfg.machine.upgrade = { trusted_keys: [key.publicPem] };
  const machineConfig = join(work, "machine.yaml");
  await Deno.writeTextFile(machineConfig, stringify(cfg));
  const sntp = await serveHostTime();
  const image = await buildImage({
    board: "rpi3",
    program: new URL("../main.ts", import.meta.url).pathname,
    config: machineConfig,
    out: join(work, "rpi3.img"),
    imageVersion: PI_X,
    // E2E_VERBOSE_CONSOLE=1 keeps the kernel's messages on the console log.
    quietConsole: !Deno.env.get("E2E_VERBOSE_CONSOLE"),
    force: true,
  });
  // The SD card as an install of A from B leaves it: machined-init must consume A's try.
  const imagedCmdlineA = await armTrialOfA(image.out, work);
  let staged: Awaited<ReturnType<typeof upgradePi>>["files"] | undefined;
  const t0 = performance.now();
  const vm = await startRaspiVm({
    image: image.out,
    runDir: join(work, "qemu"),
    hostPort: port,
    // The 3 A+'s device tree (bcm2837-rpi-3-a-plus.dtb) comes with it, the board profile's.
    machine: MACHINE,
  });
  try {
    const root = await vm.waitForConsole(ROOT_MOUNTED, { timeoutMs: API_TIMEOUT_MS, failOn: FAIL });
    assert.match(root[2], /mmcblk0/, `the root image comes from the SD card: ${root[0]}`);
    await vm.waitForConsole(/machined-init: trial boot of slot A: try consumed/, {
      timeoutMs: 1000,
    });
    const ready = await vm.waitForConsole(API_READY, { timeoutMs: API_TIMEOUT_MS, failOn: FAIL });
    assert.equal(ready[1], "1", "machined must run as PID 1");
    const hostname = await waitForApi(bundle.paths.clientConfig, port, API_TIMEOUT_MS);
    const apiMs = performance.now() - t0;
    assert.equal(hostname, HOSTNAME);
    const config = bundle.paths.clientConfig;
    const version = await machinectl(config, port, "version");
    assert.equal(version.code, 0, version.err);
    assert.match(version.out, /aarch64/);
    const vs = await waitForDocs(
      config,
      port,
      ["volumestatus"],
      (d) =>
        ["STATE", "EPHEMERAL"].every((id) =>
          d.find((v) => v.metadata.id === id)?.spec.phase === "ready"
        ),
    );
    const volumesS = +((performance.now() - t0) / 1000).toFixed(1);
    // What the 3 A+ has left with machined and apid up and STATE and EPHEMERAL mounted.
    const memory = memoryMiB(await readMemory(config, port));
    for (const v of vs.filter((v) => ["STATE", "EPHEMERAL"].includes(v.metadata.id))) {
      assert.equal(v.spec.disk, SD_DISK, JSON.stringify(v));
    }
    const figures = {
      arch: "arm64",
      board: "rpi3",
      machine: MACHINE,
      memoryMiB: MEMORY_MIB,
      containerd: false,
      ...memory,
      at: new Date().toISOString(),
      accel: "tcg",
      imageBuildS: +image.seconds.toFixed(1),
      qemuStartToApiAnswerS: +(apiMs / 1000).toFixed(1),
      kernelStartToApiReadyS: Number(ready[3]),
      machinedStartToApiReadyMs: Number(ready[2]),
      qemuStartToVolumesReadyS: volumesS,
      rootFs: root[1],
      rootLoop: root[2],
      rootHashS: Number(root[3]),
      rootMountS: Number(root[4]),
      imageBytes: Number(image.imageBytes),
      initramfsBytes: (await Deno.stat(image.initramfsPath)).size,
      rootImageBytes: (await Deno.stat(image.rootImagePath)).size,
      kernelBytes: (await Deno.stat(image.kernelPath)).size,
    };
    const upgraded = await upgradePi({ work, image, client: config, port, key: signing });
    staged = upgraded.files;
    Object.assign(figures, upgraded.figures);
    assert.deepEqual(await oomKills(config, port), [], `OOM kills at ${MEMORY_MIB} MiB`);
    console.log(JSON.stringify({ suite: "boot-rpi3", ...figures }));
    await Deno.mkdir("bench/results", { recursive: true });
    await Deno.writeTextFile(
      "bench/results/boot-rpi3.json",
      JSON.stringify(figures, null, 2) + "\n",
    );
  } finally {
    await vm.stop({ gracefulMs: 20_000 });
    await sntp.close();
  }
  // The provisioner rewrote the GPT on the SD card; the Pi's ROM still finds its FAT.
  const after = await readSector0AndGpt(image.out);
  assert.equal(after.mbr?.[0]?.type, MBR_TYPE_FAT32_LBA, JSON.stringify(after.mbr));
  assert.equal(after.mbr?.[0]?.firstLba, 2048);
  assert.equal(after.mbr?.[1]?.type, 0xee);
  const names = after.gpt?.table.partitions.map((p) => p.name);
  await checkPiFat({ work, image }, imagedCmdlineA, staged!);
  assert.ok(names?.includes("STATE") && names.includes("EPHEMERAL"), JSON.stringify(names));
  await removeScratch(work);
});
