/**
 * The power backend: sync, restart, power off, halt, boot a staged kexec
 * image, and choose what Ctrl-Alt-Del does. machined as PID 1 calls these at
 * the end of its shutdown sequence (after stopping services and unmounting).
 * @module
 */

/** Ctrl-Alt-Del: reboot at once (kernel default) or send SIGINT to PID 1. */
export type CtrlAltDelMode = "reboot" | "signal";

/**
 * Power state changes.
 *
 * `restart`, `powerOff`, `halt` and `kexec` sync first and do not return on
 * success (the kernel ends); in a child PID namespace they end that
 * namespace's init instead. `setCtrlAltDel` is idempotent.
 */
export interface PowerBackend {
  sync(): Promise<void>;
  restart(): Promise<void>;
  powerOff(): Promise<void>;
  halt(): Promise<void>;
  /** Boot the image staged with the kmod backend's `kexecLoad`. @throws SysError EINVAL when none is staged. */
  kexec(): Promise<void>;
  /** @throws SysError EINVAL outside the initial PID namespace. */
  setCtrlAltDel(mode: CtrlAltDelMode): Promise<void>;
}
