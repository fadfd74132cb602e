/**
 * Power: sync, restart, power off, halt, kexec, and the Ctrl-Alt-Del mode.
 * {@link NativePowerBackend} ends the machine; {@link FakePowerBackend} records it.
 *
 * @example
 * ```ts
 * import { NativePowerBackend } from "./platform/power/mod.ts";
 * const power = new NativePowerBackend();
 * await power.setCtrlAltDel("signal"); // PID 1 gets SIGINT and shuts down cleanly
 * ```
 * @module
 */
export type { CtrlAltDelMode, PowerBackend } from "./backend.ts";
export { NativePowerBackend } from "./backend_native.ts";
export { FakePowerBackend, type FakePowerState } from "./backend_fake.ts";
export { powerBackendConformance } from "./backend_conformance.ts";
