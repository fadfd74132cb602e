/**
 * Failure injection for fake backends. Every fake owns a {@link FaultInjector};
 * a test arms a fault for an operation (optionally only when a predicate on the
 * call's arguments holds) and the fake throws it when that call arrives, as the
 * real backend would throw a {@link SysError}.
 *
 * @example
 * ```ts
 * const faults = new FaultInjector();
 * faults.failNext("mount", "EBUSY");
 * faults.check("mount", ["/mnt"]); // throws SysError(mount, EBUSY)
 * ```
 * @module
 */
import { errnoValue, SysError } from "../native-ops/mod.ts";

interface ArmedFault {
  op: string;
  error: Error;
  when?: (args: readonly unknown[]) => boolean;
  remaining: number;
}

/** Arms failures per operation and records every call a fake receives. */
export class FaultInjector {
  #armed: ArmedFault[] = [];
  /** Every call checked so far, in order, as `[op, args]`. */
  readonly calls: Array<{ op: string; args: readonly unknown[] }> = [];

  /**
   * Fail the next `times` calls of `op` (matching `when`, if given) with an errno
   * code such as `"EBUSY"` or with a given error.
   */
  failNext(
    op: string,
    error: string | Error,
    options: { times?: number; when?: (args: readonly unknown[]) => boolean } = {},
  ): void {
    const err = typeof error === "string"
      ? new SysError(op, errnoValue(error), "injected fault")
      : error;
    this.#armed.push({ op, error: err, when: options.when, remaining: options.times ?? 1 });
  }

  /** Fail every call of `op` until {@link clear}. */
  failAlways(op: string, error: string | Error, when?: (args: readonly unknown[]) => boolean) {
    this.failNext(op, error, { times: Number.POSITIVE_INFINITY, when });
  }

  /** Disarm everything (calls stay recorded). */
  clear(): void {
    this.#armed = [];
  }

  /** Record the call and throw if a fault is armed for it. Fakes call this first. */
  check(op: string, args: readonly unknown[] = []): void {
    this.calls.push({ op, args });
    const i = this.#armed.findIndex((f) => f.op === op && (!f.when || f.when(args)));
    if (i < 0) return;
    const fault = this.#armed[i];
    if (--fault.remaining <= 0) this.#armed.splice(i, 1);
    throw fault.error;
  }

  /** The recorded calls of one operation. */
  callsOf(op: string): Array<readonly unknown[]> {
    return this.calls.filter((c) => c.op === op).map((c) => c.args);
  }
}
