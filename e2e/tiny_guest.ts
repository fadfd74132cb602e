/**
 * Tiny QEMU guests for the QEMU tier's helpers that are not nodes: the LACP
 * peer (lacp_peer.ts) and the ESP write-cut VM (esp_write_cut_test.ts). Each
 * boots the Debian cloud kernel the imager pins (imager/versions.ts) straight
 * from QEMU's `-kernel`, with an uncompressed newc initramfs made here: some
 * of that kernel's modules (closed over their dependencies), host binaries
 * at their host paths with the libraries `ldd` names, busybox applets in
 * `/bin`, and a busybox `/init` the caller writes. Their serial console goes
 * to a file the caller waits on.
 *
 * @module
 */
import { join } from "node:path";
import {
  type CpioEntry,
  defaultCacheDir,
  fetchKernel,
  KERNEL,
  loadModuleIndex,
  resolveModuleClosure,
  sharedLibraries,
  writeCpio,
} from "../imager/mod.ts";

/** Where the guests' busybox is, on the host and in the guest. */
export const BUSYBOX = "/bin/busybox";

/** What goes into a tiny guest's initramfs. */
export interface TinyGuestSpec {
  /** Modules to load, by name; their dependencies come too. */
  modules: readonly string[];
  /** Host binaries, copied to the same paths with their libraries (busybox always comes). */
  binaries: readonly string[];
  /** busybox applets linked in `/bin`. */
  applets: readonly string[];
  /** The `/init` script, given the module files (in `/lib/modules`) in load order. */
  init: (modules: string[]) => string;
  /** Further entries (configuration files, a program). */
  extra?: readonly CpioEntry[];
  /** The initramfs's file name in the build directory. */
  name: string;
}

/**
 * Build a tiny guest's initramfs in `dir` from the pinned kernel (fetched
 * into the imager's cache if needed). Returns the kernel and initramfs paths.
 * @throws Deno.errors.NotFound when a host binary is missing.
 */
export async function buildTinyGuest(
  dir: string,
  spec: TinyGuestSpec,
): Promise<{ kernel: string; initrd: string }> {
  const kernel = await fetchKernel(KERNEL, defaultCacheDir());
  const closure = resolveModuleClosure(await loadModuleIndex(kernel.modulesDir), [
    ...spec.modules,
  ]);
  const files = new Set<string>([BUSYBOX, ...spec.binaries]);
  for (const b of [...files]) for (const lib of await sharedLibraries(b)) files.add(lib);
  const dirs = ["/proc", "/sys", "/dev", "/etc", "/tmp", "/lib", "/lib/modules", "/bin"];
  const modules = closure.load.map((m) => baseName(m.path));
  const entries: CpioEntry[] = [
    ...dirs.map((path): CpioEntry => ({ type: "dir", path })),
    { type: "chardev", path: "/dev/console", mode: 0o600, major: 5, minor: 1 },
    { type: "file", path: "/init", mode: 0o755, data: bytes(spec.init(modules)) },
    ...closure.load.map((m): CpioEntry => ({
      type: "file",
      path: `/lib/modules/${baseName(m.path)}`,
      source: join(kernel.modulesDir, m.path),
    })),
    ...spec.applets.map((a): CpioEntry => ({
      type: "symlink",
      path: `/bin/${a}`,
      target: "busybox",
    })),
    ...parentDirs([...files, ...(spec.extra ?? []).map((e) => e.path)], new Set(dirs)),
    ...[...files].map((f): CpioEntry => ({ type: "file", path: f, mode: 0o755, source: f })),
    ...(spec.extra ?? []),
  ];
  await Deno.mkdir(dir, { recursive: true });
  const initrd = join(dir, spec.name);
  const out = await Deno.open(initrd, { write: true, create: true, truncate: true });
  try {
    await writeCpio(entries, async (c) => void await out.write(c));
  } finally {
    out.close();
  }
  return { kernel: kernel.vmlinuz, initrd };
}

/** QEMU's arguments for a tiny guest (TCG, one CPU, no devices but the caller's, no reboot). */
export function tinyGuestArgs(o: {
  kernel: string;
  initrd: string;
  consoleLog: string;
  memoryMiB: number;
  devices: readonly string[];
}): string[] {
  return ["-accel", "tcg", "-M", "pc", "-m", String(o.memoryMiB), "-smp", "1", "-nodefaults"]
    .concat(["-no-user-config", "-display", "none", "-no-reboot"])
    .concat(["-serial", `file:${o.consoleLog}`, "-kernel", o.kernel, "-initrd", o.initrd])
    .concat(["-append", "console=ttyS0 quiet panic=-1", ...o.devices]);
}

/**
 * The console's first match of `re`, awaited up to `ms` (monotonic), with
 * the console's text.
 * @throws Error naming `who`, with the console's tail, when the guest has
 *   exited, the console matches `failed`, or `ms` pass.
 */
export async function waitForConsole(
  consoleLog: string,
  re: RegExp,
  o: { ms: number; who: string; exited: () => boolean; failed?: RegExp },
): Promise<{ match: RegExpExecArray; text: string }> {
  const deadline = performance.now() + o.ms;
  for (;;) {
    const text = await Deno.readTextFile(consoleLog).catch(() => "");
    const match = re.exec(text);
    if (match) return { match, text };
    const why = o.failed?.test(text)
      ? `printed ${o.failed}`
      : o.exited()
      ? "exited"
      : performance.now() > deadline
      ? `did not print ${re} in ${o.ms} ms`
      : "";
    if (why) throw new Error(`${o.who} ${why}; its console ends with:\n${text.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

const bytes = (s: string) => new TextEncoder().encode(s);
const baseName = (path: string) => path.slice(path.lastIndexOf("/") + 1);

/** Every directory above `paths` not already in `have`, as cpio entries (writeCpio orders them). */
function parentDirs(paths: string[], have: Set<string>): CpioEntry[] {
  const out: CpioEntry[] = [];
  for (const p of paths) {
    for (
      let d = p.slice(0, p.lastIndexOf("/"));
      d && !have.has(d);
      d = d.slice(0, d.lastIndexOf("/"))
    ) {
      have.add(d);
      out.push({ type: "dir", path: d });
    }
  }
  return out;
}
