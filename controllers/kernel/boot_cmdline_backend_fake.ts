/**
 * An in-memory {@link BootCmdlineBackend}: a settable next boot, the writes it took, and an
 * injectable failure.
 * @module
 */
import { applyRecordedKernelArgs, checkCmdlineSize, type KernelArgs } from "../../config/mod.ts";
import type { BootCmdlineBackend, NextBoot } from "./boot_cmdline_backend.ts";

/** See the module doc. */
export class FakeBootCmdlineBackend implements BootCmdlineBackend {
  /** Lines written, in order. */
  readonly writes: string[] = [];
  /** When set, `next` and `write` throw it. */
  fail?: Error;

  constructor(public boot: NextBoot) {}

  next(): Promise<NextBoot> {
    return this.fail ? Promise.reject(this.fail) : Promise.resolve(this.boot);
  }

  write(args: KernelArgs): Promise<NextBoot> {
    if (this.fail) return Promise.reject(this.fail);
    if (this.boot.kind !== "entry") return Promise.resolve(this.boot);
    const line = checkCmdlineSize(applyRecordedKernelArgs(this.boot.cmdline, args));
    if (line !== this.boot.cmdline) {
      this.writes.push(line);
      this.boot = { ...this.boot, cmdline: line };
    }
    return Promise.resolve(this.boot);
  }
}
