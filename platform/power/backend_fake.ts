/**
 * FakePowerBackend: records what the node was asked to do. After restart,
 * power-off, halt or kexec, {@link FakePowerBackend.state} says so and the
 * returned promise never settles, as on a real machine. `kexec` without a
 * staged image fails with EINVAL, like the kernel.
 * @module
 */
import { errnoValue, SysError } from "../../native-ops/mod.ts";
import { FaultInjector } from "../mod.ts";
import type { CtrlAltDelMode, PowerBackend } from "./backend.ts";

/** What the fake machine is doing. */
export type FakePowerState = "running" | "restarting" | "powered-off" | "halted" | "kexec";

/** The in-memory power backend. */
export class FakePowerBackend implements PowerBackend {
  readonly faults = new FaultInjector();
  state: FakePowerState = "running";
  ctrlAltDel: CtrlAltDelMode = "reboot";
  syncs = 0;
  /** Set by a test (or the fake kmod backend's owner) when a kexec image is staged. */
  kexecStaged = false;
  #ended: Array<(s: FakePowerState) => void> = [];

  /** Resolves when the machine restarts, powers off, halts or kexecs. */
  ended(): Promise<FakePowerState> {
    if (this.state !== "running") return Promise.resolve(this.state);
    return new Promise((r) => this.#ended.push(r));
  }

  sync(): Promise<void> {
    try {
      this.faults.check("sync");
      this.syncs++;
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e);
    }
  }

  restart(): Promise<void> {
    return this.#end("restart", "restarting");
  }
  powerOff(): Promise<void> {
    return this.#end("poweroff", "powered-off");
  }
  halt(): Promise<void> {
    return this.#end("halt", "halted");
  }
  kexec(): Promise<void> {
    if (!this.kexecStaged) {
      return Promise.reject(new SysError("reboot", errnoValue("EINVAL"), "Kexec"));
    }
    return this.#end("kexec", "kexec");
  }

  setCtrlAltDel(mode: CtrlAltDelMode): Promise<void> {
    try {
      this.faults.check("cad", [mode]);
      this.ctrlAltDel = mode;
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e);
    }
  }

  #end(op: string, state: FakePowerState): Promise<void> {
    try {
      this.faults.check(op);
      this.syncs++;
      this.state = state;
      for (const r of this.#ended.splice(0)) r(state);
      return new Promise(() => {}); // the machine is gone
    } catch (e) {
      return Promise.reject(e);
    }
  }
}
