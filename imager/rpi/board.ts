/**
 * Boards: an image for one machine rather than for UEFI firmware. The only
 * one is the Raspberry Pi 3 (A+, B, B+), arm64, booted by the Pi's GPU
 * firmware from an MBR-listed FAT partition (docs/imager.md, "Raspberry Pi
 * 3"). A board fixes the architecture, the kernel (Debian's generic arm64
 * kernel: the cloud one has no BCM2835 drivers), the firmware package, the
 * device trees, the console and the modules that reach the SD card.
 */
import type { Arch, DebPin } from "../arch/profiles.ts";
import type { KernelPin } from "../versions.ts";

/** The boards an image can be built for. */
export type Board = "rpi3";

/** Every {@link Board}, for argument parsing and messages. */
export const BOARDS: readonly Board[] = ["rpi3"];

/** One board's inputs. */
export interface BoardProfile {
  board: Board;
  arch: Arch;
  kernel: KernelPin;
  /** Debian's raspi-firmware (non-free-firmware, Architecture: all). */
  firmware: DebPin;
  /** Files of the firmware package's /usr/lib/raspi-firmware copied to the FAT's root. */
  firmwareFiles: readonly string[];
  /** Device trees from the kernel package's /usr/lib/linux-image-<release>/broadcom, per slot. */
  dtbs: readonly string[];
  /** `console=` (the last one is /dev/console, machined-init's stdio). */
  consoles: readonly string[];
  /** Modules machined-init loads to reach the boot partition (replaces BOOT_MODULES). */
  bootModules: readonly string[];
  /** Modules machined loads at boot besides DEFAULT_MODULES (USB, the NICs). */
  modules: readonly string[];
  /**
   * QEMU's model of the board, booted with -kernel/-dtb/-initrd (it cannot run the GPU firmware):
   * the smallest of the boards, so the QEMU tier proves the node fits its memory.
   */
  qemu: { binary: string; machine: "raspi3ap" | "raspi3b"; dtb: string };
}

const RPI3: BoardProfile = {
  board: "rpi3",
  arch: "arm64",
  kernel: {
    package: "linux-image-6.1.0-57-arm64",
    version: "6.1.192-3",
    release: "6.1.0-57-arm64",
  },
  firmware: { package: "raspi-firmware", version: "1.20220830+ds-1" },
  // The Pi 3's boot chain: the ROM loads bootcode.bin, which loads start.elf
  // (linked with fixup.dat); the *4* files are the Pi 4's, *_cd/_x/_db variants unused.
  firmwareFiles: ["bootcode.bin", "start.elf", "fixup.dat"],
  // The firmware picks the tree by board name (upstream names with upstream_kernel=1).
  dtbs: ["bcm2837-rpi-3-b.dtb", "bcm2837-rpi-3-b-plus.dtb", "bcm2837-rpi-3-a-plus.dtb"],
  // The upstream tree's stdout-path is the mini UART on GPIO 14/15 (ttyS1);
  // the PL011 (ttyAMA0) is wired to Bluetooth. As Debian's raspi-firmware does.
  consoles: ["ttyS1,115200"],
  bootModules: ["bcm2835", "sdhci-iproc", "vfat", "nls_cp437", "nls_utf8", "loop"],
  // The generic kernel builds ext4 as a module, and ext4 needs the crc32c
  // hash (a soft dependency the module index does not follow): without it
  // STATE cannot mount (ENOENT). dwc2 is the SoC's USB (phy_generic its PHY);
  // smsc95xx and lan78xx are the 3 B's and 3 B+'s Ethernet on it; cdc_ether
  // and rndis_host take QEMU's usb-net.
  modules: [
    "crc32c_generic",
    "ext4",
    "phy_generic",
    "dwc2",
    "smsc95xx",
    "lan78xx",
    "cdc_ether",
    "rndis_host",
    "bcm2835_wdt",
  ],
  // The 3 A+ (512 MiB, no Ethernet chip: QEMU's usb-net stands for a USB Ethernet dongle).
  qemu: { binary: "qemu-system-aarch64", machine: "raspi3ap", dtb: "bcm2837-rpi-3-a-plus.dtb" },
};

/** The profile of each board. */
export const BOARD_PROFILES: Readonly<Record<Board, BoardProfile>> = { rpi3: RPI3 };

/** Parse a `--board` value. */
export function parseBoard(value: string): Board {
  if ((BOARDS as readonly string[]).includes(value)) return value as Board;
  throw new TypeError(`Unknown board "${value}" (one of ${BOARDS.join(", ")})`);
}

/** What a board fixes in a build's options (see build_image.ts). */
export interface BoardOptions {
  arch: Arch;
  kernel: KernelPin;
  out: string;
  modules: readonly string[];
  bootModules: readonly string[];
}

/**
 * The options `board` fixes: its architecture and kernel, its modules added
 * to `modules` (machined's boot list), its own initramfs modules.
 * @throws TypeError when `arch` names another architecture than the board's.
 */
export function boardOptions(
  board: BoardProfile,
  given: { arch?: Arch; out?: string; modules?: readonly string[] },
  defaultModules: readonly string[],
): BoardOptions {
  if (given.arch && given.arch !== board.arch) {
    throw new TypeError(`--board ${board.board} is ${board.arch}, not ${given.arch}`);
  }
  const modules = [...(given.modules ?? defaultModules)];
  for (const m of board.modules) if (!modules.includes(m)) modules.push(m);
  return {
    arch: board.arch,
    kernel: board.kernel,
    out: given.out ?? `build/machined-${board.board}.img`,
    modules,
    bootModules: board.bootModules,
  };
}
