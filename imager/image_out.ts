/**
 * Where `deno task image` writes its disk image, and when it must not.
 *
 * `deno task up` boots build/machined.img and keeps writing to it (STATE, the
 * machine config, an armed upgrade). A build that replaced that file would leave
 * QEMU on the deleted inode, and the next `down`/`up` would boot a fresh disk
 * with all of that gone. So a bundle build (`--bundle`, which needs the slot's
 * kernel, initramfs and root image, not the disk) writes its disk image under
 * build/bundle/ unless told `--out`, and no build replaces the disk image a
 * running `up` VM boots from (docs/imager.md, docs/decisions.md).
 */
import { basename, resolve } from "node:path";
import type { Arch } from "./arch/profiles.ts";
import { attachVm, isRunning } from "./qemu/vm.ts";

/** Where bundle builds put their disk image (and its work directory) by default. */
export const BUNDLE_DIR = "build/bundle";

/** The disk image `up` boots for `arch`: build/machined.img, build/machined-<arch>.img if foreign. */
export function defaultImageOut(arch: Arch, host: Arch): string {
  return arch === host ? "build/machined.img" : `build/machined-${arch}.img`;
}

/** The VM recorded in `up`'s run directory: the image it boots and whether it still runs. */
export interface RecordedVm {
  pid: number;
  /** Absolute path (vm.ts records it so). */
  image: string;
  running: boolean;
}

/** Where to write, or why not. */
export type ImageOutPlan = { out: string } | { refuse: string };

/**
 * Decide the disk image's path. `--out` wins; else a bundle build writes under
 * {@link BUNDLE_DIR}, any other build to {@link defaultImageOut}. Refused when
 * that path is the disk of a running VM, whatever `--force` says. Pure.
 */
export function planImageOut(o: {
  out?: string;
  bundle?: string;
  arch: Arch;
  host: Arch;
  vm?: RecordedVm;
  cwd?: string;
}): ImageOutPlan {
  const byDefault = defaultImageOut(o.arch, o.host);
  const out = o.out ?? (o.bundle ? `${BUNDLE_DIR}/${basename(byDefault)}` : byDefault);
  const cwd = o.cwd ?? Deno.cwd();
  if (o.vm?.running && resolve(cwd, out) === resolve(cwd, o.vm.image)) {
    return {
      refuse: `${out} is the disk of the node "deno task up" is running (QEMU pid ${o.vm.pid}); ` +
        `replacing it would lose that node's STATE, config and upgrades. ` +
        `Run "deno task down" first, or build elsewhere with --out PATH.`,
    };
  }
  return { out };
}

/** The VM `up` started from `runDir`, if it left a record there. */
export async function recordedVm(runDir: string): Promise<RecordedVm | undefined> {
  const vm = await attachVm(runDir).catch(() => undefined);
  if (!vm) return undefined;
  return { pid: vm.state.pid, image: vm.state.image, running: await isRunning(vm.state.pid) };
}
