/**
 * NativePowerBackend: reboot(2) and sync(2) through native-ops.
 * @module
 */
import { loadNative } from "../../native-ops/mod.ts";
import type { CtrlAltDelMode, PowerBackend } from "./backend.ts";

interface PowerNative {
  reboot(cmd: string): Promise<void>;
  sync(): Promise<void>;
}

/** The kernel's power controls. Never call the ending methods in tests outside a PID namespace. */
export class NativePowerBackend implements PowerBackend {
  readonly #native: PowerNative;
  constructor(native: PowerNative = loadNative() as unknown as PowerNative) {
    this.#native = native;
  }
  sync(): Promise<void> {
    return this.#native.sync();
  }
  restart(): Promise<void> {
    return this.#native.reboot("restart");
  }
  powerOff(): Promise<void> {
    return this.#native.reboot("poweroff");
  }
  halt(): Promise<void> {
    return this.#native.reboot("halt");
  }
  kexec(): Promise<void> {
    return this.#native.reboot("kexec");
  }
  setCtrlAltDel(mode: CtrlAltDelMode): Promise<void> {
    return this.#native.reboot(mode === "signal" ? "cad_off" : "cad_on");
  }
}
