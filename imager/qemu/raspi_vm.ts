/**
 * Boots a Raspberry Pi 3 SD-card image under QEMU's raspi3ap model (the 3 A+,
 * 512 MiB; or raspi3b, the 3 B with 1 GiB). QEMU cannot run the Pi's GPU
 * firmware (bootcode.bin, start.elf), so it never reads config.txt: the
 * kernel, device tree, initramfs and command line are taken out of the
 * image's boot partition (the slot's directory) and handed to QEMU's own
 * loader (-kernel/-dtb/-initrd/-append). The image is the SD card; the
 * network is QEMU's usb-net on the SoC's DWC2 USB controller with the API
 * port forwarded: on the 3 A+, which has no Ethernet chip, what a USB
 * Ethernet dongle in its USB port is; on the 3 B it stands in for the board's
 * own LAN9514 on that USB, which QEMU does not model.
 */
import { CommandError, run } from "../run.ts";
import { runPaths, type Vm, vmHandle, type VmState } from "./vm.ts";
import { SECTOR_SIZE } from "../../layout/mod.ts";
import { decodeMbr } from "../../platform/block/mod.ts";
import type { Slot } from "../../layout/mod.ts";
import { piSlotPaths } from "../../layout/mod.ts";
import { BOARD_PROFILES } from "../rpi/mod.ts";

const RPI3_QEMU = BOARD_PROFILES.rpi3.qemu;

/**
 * Words a model needs on the image's command line. QEMU 7.2's raspi3ap turns
 * the kernel's read of the ASB bridge's ID register (0x3f00a020, by the
 * bcm2835-power driver built into Debian's kernel) into a synchronous
 * external abort, where raspi3b reads 0 and the driver gives up (ENODEV):
 * the oops kills PID 1 during the initcalls, before machined-init. Skipping
 * that driver's initcall leaves the node as it is under raspi3b. A real 3 A+
 * has the bridge and boots the image's command line as it is.
 */
const MODEL_APPEND: Readonly<Record<string, string>> = {
  raspi3ap: "initcall_blacklist=bcm2835_power_driver_init",
};

/** How to start a raspi VM. */
export interface RaspiVmOptions {
  image: string;
  /** @default "build/qemu-rpi3" */
  runDir?: string;
  /** Host port forwarded to the guest's API (50000). */
  hostPort: number;
  /** @default the board profile's model, "raspi3ap" */
  machine?: "raspi3ap" | "raspi3b";
  /**
   * The device tree in the slot's directory, the model's board.
   * @default the board profile's, "bcm2837-rpi-3-a-plus.dtb"
   */
  dtb?: string;
  /** The slot whose files QEMU loads (what slot.txt would select). @default "A" */
  slot?: Slot;
  /** Discard SD-card writes. @default false */
  snapshot?: boolean;
}

/**
 * The kernel command line QEMU gives `machine`: the image's cmdline.txt with
 * the model's own words first (the words after its ` -- ` are machined's
 * arguments, not the kernel's).
 */
export function raspiCommandLine(machine: string, cmdline: string): string {
  return [MODEL_APPEND[machine], cmdline.trim()].filter(Boolean).join(" ");
}

/** The slot's boot files, copied out of the image's boot FAT. */
export interface RaspiBootFiles {
  kernel: string;
  dtb: string;
  initrd: string;
  cmdline: string;
}

/**
 * Copy the slot's kernel, device tree, initramfs and cmdline.txt out of the
 * boot FAT (the first MBR partition, as the Pi's ROM finds it) into `dir`.
 */
export async function extractBootFiles(
  image: string,
  slot: Slot,
  dtb: string,
  dir: string,
): Promise<RaspiBootFiles> {
  const sector = new Uint8Array(512);
  {
    using f = await Deno.open(image, { read: true });
    await f.read(sector);
  }
  const boot = decodeMbr(sector)?.[0];
  if (!boot || boot.type !== 0x0c) throw new Error(`${image}: no FAT32 first MBR partition`);
  const drive = `${image}@@${boot.firstLba * SECTOR_SIZE}`;
  await Deno.mkdir(dir, { recursive: true });
  const p = piSlotPaths(slot);
  const out = {
    kernel: `${dir}/vmlinuz`,
    dtb: `${dir}/${dtb}`,
    initrd: `${dir}/initramfs.img`,
    cmdline: `${dir}/cmdline.txt`,
  };
  const env = { MTOOLS_SKIP_CHECK: "1" };
  for (
    const [from, to] of [
      [p.kernel, out.kernel],
      [`${p.dir}/${dtb}`, out.dtb],
      [p.initramfs, out.initrd],
      [p.cmdline, out.cmdline],
    ]
  ) {
    await run("mcopy", ["-o", "-n", "-i", drive, `::${from}`, to], { env });
  }
  return out;
}

/**
 * Start QEMU's Pi 3 model on `opts.image` as a daemon: the slot's boot files
 * from the image, the image as the SD card, the mini UART (the second serial
 * port, ttyS1, the upstream device tree's console) to console.log and the
 * PL011 (Bluetooth's UART on the board) to pl011.log.
 * @throws CommandError when QEMU refuses to start.
 */
export async function startRaspiVm(opts: RaspiVmOptions): Promise<Vm> {
  const runDir = absolute(opts.runDir ?? "build/qemu-rpi3");
  const paths = runPaths(runDir);
  await Deno.mkdir(runDir, { recursive: true });
  for (const f of [paths.consoleLog, paths.qmpSocket, paths.pidFile]) {
    await Deno.remove(f).catch(() => {});
  }
  const image = absolute(opts.image);
  const files = await extractBootFiles(
    image,
    opts.slot ?? "A",
    opts.dtb ?? RPI3_QEMU.dtb,
    `${runDir}/boot`,
  );
  const machine = opts.machine ?? RPI3_QEMU.machine;
  const append = raspiCommandLine(machine, await Deno.readTextFile(files.cmdline));
  const args = [
    "-name",
    "machined-rpi3",
    "-M",
    machine,
    "-kernel",
    files.kernel,
    "-dtb",
    files.dtb,
    "-initrd",
    files.initrd,
    "-append",
    append,
    "-drive",
    `file=${image},if=sd,format=raw,cache=unsafe${opts.snapshot ? ",snapshot=on" : ""}`,
    "-netdev",
    `user,id=net0,hostfwd=tcp:127.0.0.1:${opts.hostPort}-:50000`,
    "-device",
    "usb-net,netdev=net0",
    "-display",
    "none",
    "-chardev",
    `file,id=pl011,path=${runDir}/pl011.log`,
    "-serial",
    "chardev:pl011",
    "-chardev",
    `file,id=serial1,path=${paths.consoleLog}`,
    "-serial",
    "chardev:serial1",
    "-qmp",
    `unix:${paths.qmpSocket},server=on,wait=off`,
    "-pidfile",
    paths.pidFile,
    "-daemonize",
  ];
  const startedAt = Date.now();
  const out = await new Deno.Command("qemu-system-aarch64", {
    args,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (out.code !== 0) {
    throw new CommandError(
      "qemu-system-aarch64",
      args,
      out.code,
      new TextDecoder().decode(out.stderr),
    );
  }
  const state: VmState = {
    pid: Number((await Deno.readTextFile(paths.pidFile)).trim()),
    image,
    hostPort: opts.hostPort,
    accel: "tcg",
    consoleLog: paths.consoleLog,
    qmpSocket: paths.qmpSocket,
    startedAt,
  };
  await Deno.writeTextFile(paths.state, JSON.stringify(state, null, 2) + "\n");
  return vmHandle(state, paths.state);
}

function absolute(path: string): string {
  return path.startsWith("/") ? path : `${Deno.cwd()}/${path}`;
}
