/**
 * `buildImage`: from a program, a pinned kernel and options to a bootable
 * UEFI disk image, entirely in userspace. Steps: resolve (bundle) the
 * program, fetch the kernel, resolve the module closure, lay out the
 * initramfs, skip if nothing changed, write the initramfs, write the disk.
 */
import { fetchKernel } from "./kernel/kernel_fetch.ts";
import { loadModuleIndex } from "./kernel/module_index.ts";
import { resolveModuleClosure } from "./kernel/module_closure.ts";
import {
  addTree,
  type ExtraFile,
  type InitramfsCompression,
  type InitramfsSizes,
  LAYOUT,
  planInitramfs,
  writeInitramfs,
} from "./initramfs/initramfs.ts";
import { MACHINED_API_UID } from "./initramfs/etc_files.ts";
import { bundleProgram, resolveProgram } from "./program.ts";
import { warmDenoDir } from "./code_cache.ts";
import { kernelCmdline } from "./cmdline.ts";
import { type DiskLayout, writeDiskImage } from "./disk_image.ts";
import { guidFromSeed } from "./guid_from_seed.ts";
import { fingerprint } from "./fingerprint.ts";
import { createProgress, formatBytes, type Progress } from "./progress.ts";
import { run } from "./run.ts";
import { buildInit } from "./init_binary.ts";
import { nodeExtras } from "./node_extras.ts";
import { sourceRevisionOf } from "./source_revision.ts";
import {
  DEFAULT_MODULES,
  KERNEL,
  type KernelPin,
  SOURCE_DATE_EPOCH,
  SYSTEMD_BOOT_EFI,
} from "./versions.ts";

/** Options of {@link buildImage}; every field has a default. */
export interface ImageOptions {
  /** @default "build/machined.img" */
  out?: string;
  /** TS/JS entry or directory for Deno to run as PID 1. @default "main.ts" */
  program?: string;
  /** A compiled executable to run as PID 1 instead of a Deno program. */
  binary?: string;
  /**
   * apid's TypeScript entry, bundled alone and shipped as /machined/apid.js
   * (PID 1 starts it instead of `main.js apid`); null ships none.
   * @default api/apid/main.ts when `program` is machined's main.ts, else null
   */
  apid?: string | null;
  /**
   * Ship Deno caches warmed at build time (V8 code cache, dependency
   * analysis) for the program and apid, at the DENO_DIRs they run with
   * (see code_cache.ts); reproducible like the rest of the image. Warming
   * imports the program on the build host, so only a program whose top level
   * has no side effects may use it (machined's main.ts guards on
   * `import.meta.main`; a stand-in init that mounts and serves must not).
   * @default true for machined's main.ts, false for any other program
   */
  codeCache?: boolean;

  /** Machine config baked in at /etc/machined/config.yaml. */
  config?: string;
  /** PKI directory baked in at /etc/machined/pki. */
  pki?: string;
  /** Disk size in bytes. @default 2 GiB */
  size?: bigint;
  /** ESP size in bytes. @default 512 MiB */
  espSize?: bigint;
  /** Extra kernel arguments. */
  append?: string;
  /** `quiet loglevel=3` on the kernel command line. @default false */
  quietConsole?: boolean;
  /**
   * Initramfs compression: lz4 boots faster (the kernel unpacks it about
   * twice as fast), zstd is smaller. @default "lz4"
   */
  compression?: InitramfsCompression;
  /** zstd's level. @default 9 (19 saves ~5 MiB and costs over a minute) */
  zstdLevel?: number;
  /** Modules PID 1 loads at boot (their closure is shipped). @default DEFAULT_MODULES */
  modules?: readonly string[];
  /**
   * Modules shipped with their dependencies (and listed in modules.dep) but not
   * loaded at boot: for `machine.kernel.modules` to load when the config asks.
   * @default []
   */
  onDemandModules?: readonly string[];
  extraFiles?: ExtraFile[];
  /** Ship containerd, runc and mkfs.ext4 from the host (see node_extras.ts). @default true */
  nodeExtras?: boolean;
  /** Host Deno binary to ship. @default Deno.execPath() */
  deno?: string;
  /** The addon to ship; "auto" ships native-ops/machined_native_ops.node when built. @default "auto" */
  nativeAddon?: string | "auto" | "none";
  /** Downloaded inputs (the kernel package). @default ~/.cache/machined/imager (see defaultCacheDir) */
  cacheDir?: string;
  /** @default KERNEL */
  kernel?: KernelPin;
  /** Rebuild even when the inputs are unchanged. @default false */
  force?: boolean;
  progress?: Progress;
}

/** What was built (or found current). */
export interface ImageResult {
  out: string;
  skipped: boolean;
  fingerprint: string;
  cmdline: string;
  imageBytes: bigint;
  initramfsPath: string;
  initramfs?: InitramfsSizes;
  layout?: DiskLayout;
  seconds: number;
}

const REPO_ADDON = new URL("../native-ops/machined_native_ops.node", import.meta.url).pathname;
/** The image's disk size: the ESP plus room for STATE and EPHEMERAL (about 1.5 GiB). */
export const DEFAULT_DISK_SIZE = 2n << 30n;
/** The ESP's size. */
export const DEFAULT_ESP_SIZE = 512n << 20n;

/** lz4 -9 (HC) unpacks as fast as -1 and is ~15% smaller; it costs ~5 s at build time. */
const LZ4_LEVEL = 9;
const REPO_MAIN = new URL("../main.ts", import.meta.url).pathname;
const REPO_APID = new URL("../api/apid/main.ts", import.meta.url).pathname;

/**
 * Where downloaded inputs (the pinned kernel package) are kept: per user and
 * outside the checkout, like cargo's or Deno's caches, so fresh clones and CI
 * reuse a download instead of fetching it again.
 */
export function defaultCacheDir(): string {
  const base = Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME") ?? "/root"}/.cache`;
  return `${base}/machined/imager`;
}

/** Whether `program` is this repository's main.ts (machined itself). */
async function isMachinedMain(program: string): Promise<boolean> {
  const real = await Deno.realPath(program).catch(() => undefined);
  return real !== undefined && real === await Deno.realPath(REPO_MAIN).catch(() => undefined);
}

/**
 * Build (or confirm current) the disk image described by `options`.
 * @throws CommandError from host tools, ModuleNotFoundError for an unknown
 *   module, TypeError for contradictory program options.
 */
export async function buildImage(options: ImageOptions = {}): Promise<ImageResult> {
  const p = options.progress ?? createProgress();
  const out = options.out ?? "build/machined.img";
  const workDir = `${dirname(out)}/work/${basename(out)}`;
  const cacheDir = options.cacheDir ?? defaultCacheDir();
  const pin = options.kernel ?? KERNEL;
  const deno = await Deno.realPath(options.deno ?? Deno.execPath());
  const size = options.size ?? DEFAULT_DISK_SIZE;
  const espSize = options.espSize ?? DEFAULT_ESP_SIZE;
  const compression = options.compression ?? "lz4";
  const level = compression === "lz4" ? LZ4_LEVEL : options.zstdLevel ?? 9;

  const program = await p.step(
    "program",
    () =>
      resolveProgram(
        {
          program: options.binary ? undefined : options.program ?? "main.ts",
          binary: options.binary,
        },
        `${workDir}/program`,
        deno,
      ),
    (r) => `${r.kind} ${"file" in r ? r.file : r.dir}`,
  );
  const machinedMain = !options.binary && await isMachinedMain(options.program ?? "main.ts");
  const apidEntry = options.binary
    ? null
    : options.apid === undefined
    ? (machinedMain ? REPO_APID : null)
    : options.apid;
  const apid = apidEntry && program.kind === "js"
    ? await p.step(
      "apid",
      () => bundleProgram(apidEntry, `${workDir}/program/apid.js`, deno),
      (f) => f,
    )
    : undefined;
  const kernel = await p.step(
    "kernel",
    () => fetchKernel(pin, cacheDir),
    () => `${pin.package}=${pin.version}`,
  );
  const modules = await p.step("modules", async () => {
    const index = await loadModuleIndex(kernel.modulesDir);
    const atBoot = [...(options.modules ?? DEFAULT_MODULES)];
    const boot = resolveModuleClosure(index, atBoot);
    const all = resolveModuleClosure(index, [...atBoot, ...(options.onDemandModules ?? [])]);
    const loaded = new Set(boot.load.map((m) => m.name));
    return { ...boot, onDemand: all.load.filter((m) => !loaded.has(m.name)) };
  }, (c) =>
    `${c.load.length + c.onDemand.length} to ship (${c.onDemand.length} on demand), ` +
    `built in: ${c.builtin.join(" ") || "none"}`);
  const addon = await pickAddon(options.nativeAddon ?? "auto");
  const init = await p.step("init", () => buildInit(), (path) => path);
  const extras = options.nodeExtras === false
    ? { present: [], missing: [] }
    : await p.step("extras", () => nodeExtras(), (x) =>
      `${x.present.length} node binaries` +
      (x.missing.length ? `; missing: ${x.missing.join(", ")}` : ""));
  const denoVersion = program.kind === "binary"
    ? "none"
    : (await run(deno, ["--version"])).split("\n")[0];
  const commit = await sourceRevisionOf();
  const rootfs = await p.step("layout", () =>
    planInitramfs({
      program,
      deno,
      init,
      nativeAddon: addon,
      modules: {
        modulesDir: kernel.modulesDir,
        release: pin.release,
        load: modules.load,
        onDemand: modules.onDemand,
      },
      apid,
      config: options.config,
      pkiDir: options.pki,
      extraFiles: [...extras.present, ...(options.extraFiles ?? [])],
      release: {
        kernel: `${pin.package}=${pin.version}`,
        deno: denoVersion,
        commit,
      },
    }), (fs) => `${fs.entries().length} entries${addon ? ", with native addon" : ""}`);

  const cmdline = kernelCmdline({
    program: program.kind,
    quiet: options.quietConsole,
    append: options.append,
  });
  const codeCache = (options.codeCache ?? machinedMain) && program.kind === "js";
  // The warmed caches derive from the program and Deno, both fingerprinted, so
  // they are added after the fingerprint (their bytes differ between builds).
  const print = await fingerprint(rootfs.entries(), {
    codeCache,
    cmdline,
    size,
    espSize,
    compression,
    level,
    pin,
    epoch: SOURCE_DATE_EPOCH,
  }, [kernel.vmlinuz, SYSTEMD_BOOT_EFI]);
  const stampFile = `${out}.inputs`;
  const initramfsPath = `${workDir}/initramfs.img`;
  const previous = await Deno.readTextFile(stampFile).catch(() => "");
  if (!options.force && previous.trim() === print && (await exists(out))) {
    p.note(`${out} is current (inputs ${print.slice(0, 12)}), not rebuilding`);
    return {
      out,
      skipped: true,
      fingerprint: print,
      cmdline,
      imageBytes: size,
      initramfsPath,
      seconds: p.elapsed(),
    };
  }
  await Deno.remove(stampFile).catch(() => {});

  if (codeCache && program.kind === "js") {
    const warm: Array<{ file: string; node: string; dir: string }> = [
      { file: program.file, node: LAYOUT.programEntry, dir: LAYOUT.denoDir },
    ];
    if (apid) warm.push({ file: apid, node: LAYOUT.apidEntry, dir: LAYOUT.apidDenoDir });
    for (const w of warm) {
      const r = await p.step(
        `code cache ${w.node}`,
        () =>
          warmDenoDir({
            deno,
            program: w.file,
            nodePath: w.node,
            denoDir: `${workDir}${w.dir}`,
          }),
        (r) =>
          `${r.codeCacheEntries} entries${r.programCached ? "" : " (program NOT cached)"}, ${
            formatBytes(r.bytes)
          }`,
      );
      const owner = w.dir === LAYOUT.apidDenoDir
        ? { uid: MACHINED_API_UID, gid: MACHINED_API_UID }
        : undefined;
      await addTree(rootfs, r.denoDir, w.dir, owner);
    }
  }

  const initramfs = await p.step(
    `initramfs (${compression} -${level})`,
    () => writeInitramfs(rootfs, initramfsPath, { compression, level, mtime: SOURCE_DATE_EPOCH }),
    (s) => `${formatBytes(s.cpioBytes)} cpio -> ${formatBytes(s.compressedBytes)} compressed`,
  );
  const layout = await p.step(
    "disk",
    async () =>
      writeDiskImage({
        out,
        size,
        espSize,
        diskGuid: await guidFromSeed(`machined-disk:${print}`),
        espGuid: await guidFromSeed(`machined-esp:${print}`),
        bootloader: SYSTEMD_BOOT_EFI,
        slots: {
          A: { kernel: kernel.vmlinuz, initramfs: initramfsPath },
          B: { kernel: kernel.vmlinuz, initramfs: initramfsPath },
        },
        defaultSlot: "A",
        cmdline,
        sourceDateEpoch: SOURCE_DATE_EPOCH,
        workDir,
      }),
    (l) =>
      `GPT + ESP ${formatBytes(l.espSize)} at ${formatBytes(l.espOffset)}, ${
        formatBytes(l.free)
      } left free`,
  );
  await Deno.writeTextFile(stampFile, print + "\n");
  const allocated = await diskUsage(out);
  p.note(
    `${out}: ${formatBytes(size)} (${formatBytes(allocated)} allocated), initramfs ${
      formatBytes(initramfs.compressedBytes)
    }, ` +
      `kernel ${formatBytes((await Deno.stat(kernel.vmlinuz)).size)}, total ${
        p.elapsed().toFixed(1)
      }s`,
  );
  return {
    out,
    skipped: false,
    fingerprint: print,
    cmdline,
    imageBytes: size,
    initramfsPath,
    initramfs,
    layout,
    seconds: p.elapsed(),
  };
}

async function pickAddon(choice: string): Promise<string | undefined> {
  if (choice === "none") return undefined;
  if (choice !== "auto") return choice;
  return (await exists(REPO_ADDON)) ? REPO_ADDON : undefined;
}

async function diskUsage(path: string): Promise<number> {
  const st = await Deno.stat(path);
  return (st.blocks ?? 0) * 512;
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

function dirname(path: string): string {
  const i = path.lastIndexOf("/");
  return i < 0 ? "." : i === 0 ? "/" : path.slice(0, i);
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}
