/**
 * SecureBootStatusController: observes the firmware's Secure Boot state, the enrolled keys, the
 * kernel's lockdown mode and the TPM's PCRs, and publishes them as the one SecureBootStatus.
 * Inputs: none (it runs at start and every `resyncInterval`: PCRs change when something extends
 * them after boot). Outputs: SecureBootStatus.
 * @module
 */
import type { FirmwareBackend } from "../../platform/firmware/mod.ts";
import {
  type MachineController,
  RESOURCE_DESCRIPTORS,
  type ResourceSpecs,
  SECURE_BOOT_STATUS,
  SECURE_BOOT_STATUS_ID,
} from "../../resources/mod.ts";
import type { ReconcileContext } from "../../runtime/mod.ts";
import { readSecureBootStatus } from "./secure_boot_facts.ts";

/** How often the status is read again by default: 5 minutes. */
export const SECURE_BOOT_RESYNC_MS = 5 * 60_000;

/** Dependencies of {@link SecureBootStatusController}. */
export interface SecureBootStatusDeps {
  backend: FirmwareBackend;
  /** Re-read period (ms). @default SECURE_BOOT_RESYNC_MS */
  resyncInterval?: number;
}

/** Publishes the node's boot trust state. */
export class SecureBootStatusController implements MachineController {
  readonly name = "firmware.SecureBootStatusController";
  readonly inputs = [] as const;
  readonly outputs = [{ type: SECURE_BOOT_STATUS, kind: "exclusive" }] as const;
  readonly resyncInterval: number;
  readonly #backend: FirmwareBackend;

  constructor(deps: SecureBootStatusDeps) {
    this.#backend = deps.backend;
    this.resyncInterval = deps.resyncInterval ?? SECURE_BOOT_RESYNC_MS;
  }

  async reconcile(ctx: ReconcileContext<ResourceSpecs>): Promise<void> {
    const spec = await readSecureBootStatus(this.#backend);
    await ctx.apply({
      type: SECURE_BOOT_STATUS,
      namespace: RESOURCE_DESCRIPTORS[SECURE_BOOT_STATUS].namespace,
      id: SECURE_BOOT_STATUS_ID,
    }, spec);
  }
}

/** A {@link SecureBootStatusController} over `deps`. */
export function secureBootStatusController(deps: SecureBootStatusDeps): SecureBootStatusController {
  return new SecureBootStatusController(deps);
}
