/**
 * NativeWatchdogBackend: the watchdog ioctls (WDIOC_SETTIMEOUT,
 * WDIOC_KEEPALIVE) and the magic close through native-ops/src/watchdog.rs.
 * @module
 */
import { loadNative } from "../../native-ops/mod.ts";
import type { WatchdogBackend, WatchdogDevice, WatchdogInfo } from "./backend.ts";

/** The environment variable machined-init puts the armed descriptor's number in. */
export const WATCHDOG_FD_ENV = "MACHINED_WATCHDOG_FD";

interface WatchdogNative {
  watchdogAdopt(fd: number): { identity: string; timeoutS: number };
  watchdogOpen(path: string): number;
  watchdogSetTimeout(fd: number, seconds: number): number;
  watchdogKeepalive(fd: number): void;
  watchdogDisarm(fd: number): void;
}

/** The kernel's watchdog devices. */
export class NativeWatchdogBackend implements WatchdogBackend {
  readonly #load: () => WatchdogNative;
  readonly #env: { get(k: string): string | undefined; delete(k: string): void };
  #taken = false;

  constructor(
    native?: WatchdogNative,
    env: { get(k: string): string | undefined; delete(k: string): void } = Deno.env,
  ) {
    // Loaded on first use: a node without a watchdog never needs the addon for it.
    this.#load = () => native ?? (loadNative() as unknown as WatchdogNative);
    this.#env = env;
  }

  inherited(): WatchdogDevice | undefined {
    if (this.#taken) return undefined;
    this.#taken = true;
    const raw = this.#env.get(WATCHDOG_FD_ENV);
    // Services inherit machined's environment; the number means nothing to them.
    this.#env.delete(WATCHDOG_FD_ENV);
    if (raw === undefined || !/^\d+$/.test(raw)) return undefined;
    const fd = Number(raw);
    const native = this.#load();
    return new NativeWatchdog(native, fd, native.watchdogAdopt(fd));
  }

  open(path: string): WatchdogDevice {
    const native = this.#load();
    const fd = native.watchdogOpen(path);
    return new NativeWatchdog(native, fd, native.watchdogAdopt(fd));
  }
}

class NativeWatchdog implements WatchdogDevice {
  #fd: number;
  constructor(readonly native: WatchdogNative, fd: number, readonly info: WatchdogInfo) {
    this.#fd = fd;
  }
  setTimeout(seconds: number): number {
    return this.native.watchdogSetTimeout(this.#fd, seconds);
  }
  keepalive(): void {
    this.native.watchdogKeepalive(this.#fd);
  }
  disarm(): void {
    const fd = this.#fd;
    this.#fd = -1; // a second disarm is EBADF, never another process's descriptor
    this.native.watchdogDisarm(fd);
  }
}
