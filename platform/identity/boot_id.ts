/**
 * The kernel's boot id: a random UUID chosen at every boot. A reset's consent
 * is bound to it (a challenge from another boot is refused), and clients tell
 * that a node came back by seeing it change. {@link ProcBootIdSource} reads
 * the kernel's; {@link FakeBootIdSource} is set by tests.
 * @module
 */

/** Where the boot id comes from. */
export interface BootIdSource {
  /** The current boot's id, lower-case, without the newline. */
  bootId(): Promise<string>;
}

/** The kernel's path for it. */
export const PROC_BOOT_ID = "/proc/sys/kernel/random/boot_id";

/** Reads {@link PROC_BOOT_ID} once and caches it (it cannot change within a boot). */
export class ProcBootIdSource implements BootIdSource {
  #cached?: Promise<string>;
  constructor(readonly path = PROC_BOOT_ID) {}
  bootId(): Promise<string> {
    this.#cached ??= Deno.readTextFile(this.path).then((t) => t.trim().toLowerCase());
    this.#cached.catch(() => this.#cached = undefined);
    return this.#cached;
  }
}

/** A boot id held in memory; {@link reboot} picks a new one. */
export class FakeBootIdSource implements BootIdSource {
  constructor(public current: string = crypto.randomUUID()) {}
  bootId(): Promise<string> {
    return Promise.resolve(this.current);
  }
  /** Simulates a new boot. */
  reboot(): string {
    return this.current = crypto.randomUUID();
  }
}
