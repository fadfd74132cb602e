/**
 * Petting the watchdog from machined's event loop. The pet is a timer on the
 * one JavaScript thread, so a thread stuck in a loop (or a runtime whose
 * `progressing` check fails) stops petting and the device reboots the node
 * after its timeout; a trial slot that hangs so loses a boot try
 * (docs/upgrade.md). The petter keeps petting through a shutdown (whose
 * steps have their own deadlines, boot/shutdown.ts) and disarms with the
 * magic close only at the very end, right before reboot(2).
 * @module
 */
import type { Logger } from "../logs/mod.ts";
import { type Clock, systemClock } from "../runtime/mod.ts";
import type { WatchdogDevice } from "../platform/watchdog/mod.ts";

/** The running timeout when the command line names none (`machined.watchdog=`). */
export const DEFAULT_WATCHDOG_TIMEOUT_S = 60;
/** Pets per timeout: one missed (a GC pause, a slow tick under emulation) never fires it. */
export const PETS_PER_TIMEOUT = 4;

/** What a {@link WatchdogPetter} runs on. */
export interface PetterOptions {
  device: WatchdogDevice;
  /** The running timeout to set, in seconds. */
  timeoutS: number;
  logger: Logger;
  /** Pet only while this holds (the runtime is progressing). @default always */
  progressing?: () => boolean;
  /** The event loop's timers. @default systemClock */
  clock?: Clock;
}

/** Where the petter is. */
export type PetterState = "idle" | "petting" | "disarmed" | "failed";

/** Pets one device every `timeoutS / PETS_PER_TIMEOUT` while the runtime progresses. */
export class WatchdogPetter {
  readonly #o: PetterOptions;
  readonly #clock: Clock;
  readonly #stop = new AbortController();
  #state: PetterState = "idle";
  /** Pets made, and ticks skipped because the runtime was not progressing. */
  pets = 0;
  skipped = 0;
  /** The timeout the driver took. */
  timeoutS = 0;

  constructor(options: PetterOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
  }

  get state(): PetterState {
    return this.#state;
  }

  /**
   * Sets the running timeout and starts the loop. A driver that refuses the
   * timeout keeps its own (reported); a failing pet stops the loop and is
   * reported and the device disarmed (one that cannot be petted would reboot
   * a healthy node on every boot).
   */
  start(): void {
    if (this.#state !== "idle") return;
    const { device, logger } = this.#o;
    try {
      this.timeoutS = device.setTimeout(this.#o.timeoutS);
    } catch (e) {
      this.timeoutS = device.info.timeoutS;
      logger.warn("watchdog", `timeout ${this.#o.timeoutS} s refused; keeping the driver's`, {
        error: e,
        timeoutS: this.timeoutS,
      });
    }
    this.#state = "petting";
    logger.info("watchdog", "petting", {
      device: device.info.identity,
      timeoutS: this.timeoutS,
      everyMs: this.intervalMs,
    });
    void this.#loop();
  }

  /** How often it pets. */
  get intervalMs(): number {
    return Math.max(250, Math.floor((this.timeoutS * 1000) / PETS_PER_TIMEOUT));
  }

  async #loop(): Promise<void> {
    const signal = this.#stop.signal;
    while (this.#state === "petting") {
      try {
        await this.#clock.sleep(this.intervalMs, signal);
      } catch {
        return; // stopped
      }
      if (this.#state !== "petting") return;
      if (!(this.#o.progressing?.() ?? true)) {
        this.skipped++;
        continue;
      }
      try {
        this.#o.device.keepalive();
        this.pets++;
      } catch (e) {
        // A device that cannot be petted would reboot a healthy node on every boot: disarm it.
        this.#o.logger.error("watchdog", "cannot pet the watchdog; disarming it", { error: e });
        this.disarm();
        this.#state = "failed";
        return;
      }
    }
  }

  /**
   * Stops petting and disarms (magic close): the last thing before reboot(2)
   * or power-off, so neither a long shutdown nor the kernel's own shutdown
   * can be cut short by it. Idempotent; a failure is reported, not thrown.
   */
  disarm(): void {
    if (this.#state === "disarmed") return;
    this.#state = "disarmed";
    this.#stop.abort();
    try {
      this.#o.device.disarm();
      this.#o.logger.info("watchdog", "disarmed (magic close)");
    } catch (e) {
      this.#o.logger.warn("watchdog", "cannot disarm the watchdog", { error: e });
    }
  }
}
