/**
 * The firmware domain: the node's boot trust state (UEFI Secure Boot, enrolled keys, kernel
 * lockdown, TPM PCRs) published as SecureBootStatus. It reads through platform/firmware's
 * backend and changes nothing.
 *
 * @example
 * ```ts
 * import { firmwareControllers } from "./controllers/firmware/mod.ts";
 * import { NativeFirmwareBackend } from "./platform/firmware/mod.ts";
 * const controllers = firmwareControllers({ firmware: new NativeFirmwareBackend() });
 * console.log(controllers.map((c) => c.name));
 * ```
 * @module
 */
import type { FirmwareBackend } from "../../platform/firmware/mod.ts";
import type { MachineController } from "../../resources/mod.ts";
import { secureBootStatusController } from "./secure_boot_status.ts";

/** What the firmware domain needs. */
export interface FirmwareDeps {
  firmware: FirmwareBackend;
  /** Re-read period (ms). @default SECURE_BOOT_RESYNC_MS */
  resyncInterval?: number;
}

/** The firmware domain's controllers. */
export function firmwareControllers(deps: FirmwareDeps): MachineController[] {
  return [
    secureBootStatusController({ backend: deps.firmware, resyncInterval: deps.resyncInterval }),
  ];
}

export {
  SECURE_BOOT_RESYNC_MS,
  SecureBootStatusController,
  secureBootStatusController,
  type SecureBootStatusDeps,
} from "./secure_boot_status.ts";
export {
  describeCertificate,
  describeKeyDatabase,
  firmwareSwitch,
  NO_EFI_REASON,
  parseLockdown,
  pcrValues,
  readSecureBootStatus,
} from "./secure_boot_facts.ts";
