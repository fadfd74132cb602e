/**
 * FakeWatchdog: a watchdog on a {@link Clock}. It counts pets and "fires"
 * (records the reboot it would cause) when the clock passes the last pet plus
 * the timeout, so a test of the petting logic sees exactly what softdog
 * would do. Faults: `setTimeout`, `keepalive`, `disarm`, `open`, `adopt`.
 * @module
 */
import { errnoValue, SysError } from "../../native-ops/mod.ts";
import { FaultInjector } from "../mod.ts";
import type { Clock } from "../../runtime/mod.ts";
import type { WatchdogBackend, WatchdogDevice, WatchdogInfo } from "./backend.ts";

/** The state of the fake device. */
export type FakeWatchdogState = "armed" | "disarmed" | "fired";

/** An in-memory watchdog device. */
export class FakeWatchdog implements WatchdogDevice {
  readonly faults: FaultInjector;
  pets = 0;
  timeoutS: number;
  #state: FakeWatchdogState = "armed";
  #lastPet: number;
  /** Monotonic time it fired at, once it has. */
  firedAt?: number;

  constructor(
    readonly clock: Clock,
    options: { identity?: string; timeoutS?: number; faults?: FaultInjector } = {},
  ) {
    this.faults = options.faults ?? new FaultInjector();
    this.timeoutS = options.timeoutS ?? 60;
    this.#lastPet = clock.monotonic();
    this.info = { identity: options.identity ?? "Software Watchdog", timeoutS: this.timeoutS };
  }
  readonly info: WatchdogInfo;

  /** armed, disarmed, or fired (the timeout passed without a pet). */
  get state(): FakeWatchdogState {
    if (
      this.#state === "armed" && this.clock.monotonic() - this.#lastPet >= this.timeoutS * 1000
    ) {
      this.#state = "fired";
      this.firedAt = this.#lastPet + this.timeoutS * 1000;
    }
    return this.#state;
  }

  setTimeout(seconds: number): number {
    this.#live("setTimeout", [seconds]);
    this.timeoutS = seconds;
    this.#lastPet = this.clock.monotonic();
    return seconds;
  }
  keepalive(): void {
    this.#live("keepalive");
    this.pets++;
    this.#lastPet = this.clock.monotonic();
  }
  disarm(): void {
    this.#live("disarm");
    this.#state = "disarmed";
  }

  #live(op: string, args: readonly unknown[] = []) {
    const s = this.state;
    if (s === "disarmed") throw new SysError(op, errnoValue("EBADF"), "disarmed");
    // A fired watchdog has rebooted the machine: nothing after it counts.
    if (s === "fired") throw new SysError(op, errnoValue("EIO"), "fired: the node rebooted");
    this.faults.check(op, args);
  }
}

/** Hands out one {@link FakeWatchdog} as the inherited device (or none). */
export class FakeWatchdogBackend implements WatchdogBackend {
  readonly faults = new FaultInjector();
  #inherited: FakeWatchdog | undefined;
  readonly opened: FakeWatchdog[] = [];

  constructor(readonly clock: Clock, inherited?: { timeoutS?: number } | false) {
    this.#inherited = inherited === false ? undefined : new FakeWatchdog(clock, {
      timeoutS: inherited?.timeoutS ?? 180,
      faults: this.faults,
    });
  }

  /** The device machined-init "armed" (still readable after it was taken). */
  readonly device = (): FakeWatchdog | undefined => this.#inherited ?? this.opened[0];

  inherited(): WatchdogDevice | undefined {
    this.faults.check("adopt");
    if (this.#given) return undefined;
    this.#given = true;
    return this.#inherited;
  }
  #given = false;

  open(path: string): WatchdogDevice {
    this.faults.check("open", [path]);
    const d = new FakeWatchdog(this.clock, { faults: this.faults });
    this.opened.push(d);
    return d;
  }
}
