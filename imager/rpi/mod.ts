/**
 * The Raspberry Pi 3 board: its profile (board.ts), the firmware's boot
 * configuration for the A/B slots (boot_config.ts), the boot inputs from
 * Debian (firmware.ts) and the SD-card image writer (pi_disk.ts).
 * docs/imager.md, "Raspberry Pi 3".
 * @module
 */
export * from "./board.ts";
export * from "../../layout/mod.ts";
export * from "./firmware.ts";
export * from "./pi_disk.ts";
