/**
 * Closing PCR 11 to `tpm` keys for the rest of the boot: once EPHEMERAL is
 * mounted at /var (the boot's volumes are open) and before the start gate
 * lets any service run, PCR 11 is extended with `sysinit`
 * (controllers/block/tpm_keys.ts). Each UKI's policy is signed for the
 * phase before (`enter-initrd:leave-initrd`), so from then on no process on
 * the node, machined included, can unseal a `tpm` key until the next boot.
 * @module
 */
import { closeTpmUnseal, TPM_CLOSING_PHASE } from "../controllers/block/mod.ts";
import { type TpmKeys, UKI_PCR } from "../platform/crypt/mod.ts";
import type { Machined } from "../core/mod.ts";

/** Extends PCR 11 once per boot; {@link closed} tells the start gate it happened (or cannot). */
export class TpmUnsealCloser {
  #closed = false;
  #running: Promise<void> | undefined;

  constructor(
    readonly keys: TpmKeys | undefined,
    readonly machined: Pick<Machined, "events" | "logger">,
  ) {}

  /** True once the extend ran or was found impossible (a node without a TPM). */
  get closed(): boolean {
    return this.#closed;
  }

  /** Extend PCR 11 (the first call; later calls wait for it). Never throws. */
  close(): Promise<void> {
    return this.#running ??= this.#close();
  }

  async #close(): Promise<void> {
    const { events, logger } = this.machined;
    const why = await closeTpmUnseal(this.keys);
    this.#closed = true;
    if (why) {
      events.emit("task", "tpm", "skipped", `PCR 11 not extended: ${why}`);
      return;
    }
    // The value after, on the console: a host predicts it (systemd-measure, e2e).
    const pcr = await this.keys!.tpm.readPcr(UKI_PCR).then((v) => v.toHex(), () => "unread");
    events.emit(
      "task",
      "tpm",
      "closed",
      `PCR 11 extended with ${TPM_CLOSING_PHASE}: tpm keys no longer unseal in this boot`,
    );
    logger.info("tpm", "PCR 11 extended", { phase: TPM_CLOSING_PHASE, pcr11: pcr });
  }
}
