/**
 * The steps of {@link ../build_image.ts buildImage}, one named function each,
 * in the order it runs them: resolve the inputs (program, kernel, modules,
 * addon, machined-init, machined-edge, node binaries), plan the two trees (the
 * root image's and the boot initramfs'), fingerprint them, add the warmed
 * code caches, write the root image, write the initramfs, write the disk.
 */
import { loadModuleIndex } from "./kernel/module_index.ts";
import { type ModuleRef, resolveModuleClosure } from "./kernel/module_closure.ts";
import {
  addTree,
  LAYOUT,
  planRootTree,
  type ProgramInput,
  seedPath,
} from "./initramfs/initramfs.ts";
import { BOOT_MODULES, planBootInitramfs, ROOT_FS_MODULES } from "./initramfs/boot_initramfs.ts";
import type { Rootfs } from "./initramfs/rootfs.ts";
import { resolveProgram } from "./program.ts";
import { warmDenoDirStored } from "./code_cache_store.ts";
import { MACHINED_V8_FLAGS } from "../layout/mod.ts";
import { formatBytes, type Progress } from "./progress.ts";
import type { LibrarySource } from "./initramfs/rootfs.ts";
import type { TargetInputs } from "./arch/target_inputs.ts";
import { sourceRevisionOf } from "./source_revision.ts";
import type { RootFsType } from "./root_image.ts";
import { DEFAULT_MODULES, type KernelPin } from "./versions.ts";
import type { ImageOptions } from "./image_options.ts";
import { UEFI_BOARD } from "../bundle/mod.ts";

const REPO_MAIN = new URL("../main.ts", import.meta.url).pathname;

/** Everything the build reads, resolved. */
export interface BuildInputs {
  program: ProgramInput;
  machinedMain: boolean;
  /** Host path of machined-edge for the target, when shipped. */
  edge?: string;
  kernel: { vmlinuz: string; modulesDir: string };
  /** Host path of systemd-boot's EFI binary for the target. */
  loader: string;
  /** Host path of the Deno binary the node runs (the target's). */
  deno: string;
  /** Where the shipped binaries' libraries come from. */
  libraries: LibrarySource;
  /** Loaded at boot by machined, shipped on demand, and loaded by machined-init. */
  modules: { load: ModuleRef[]; onDemand: ModuleRef[]; boot: ModuleRef[] };
  addon?: string;
  init: string;
  extras: { present: { source: string; dest: string }[] };
  release: Record<string, string>;
}

/** Resolve (and bundle, fetch, build) every input of the image. */
export async function resolveInputs(
  p: Progress,
  options: ImageOptions,
  ctx: ResolveContext,
): Promise<BuildInputs> {
  const target = ctx.target;
  const program = await resolveProgramStep(p, options, ctx);
  const machinedMain = !options.binary && await isMachinedMain(options.program ?? "main.ts");
  const kernel = await p.step(
    "kernel",
    () => target.kernel(),
    () => `${ctx.pin.package}=${ctx.pin.version}`,
  );
  const modules = await p.step(
    "modules",
    () => resolveModules(kernel.modulesDir, options, ctx.rootFs),
    (c) =>
      `${c.load.length + c.onDemand.length} in the root image (${c.onDemand.length} on demand), ` +
      `${c.boot.length} in the initramfs`,
  );
  const addon = await p.step(
    "addon",
    () => target.addon(options.nativeAddon ?? "auto"),
    (a) => a ?? "none",
  );
  const init = await p.step("init", () => target.init(), (path) => path);
  const edge = (options.edge ?? machinedMain)
    ? await p.step("edge", () => target.edge(), (path) => path)
    : undefined;
  const extras = options.nodeExtras === false
    ? { present: [], missing: [] }
    : await p.step("extras", () => target.extras(), (x) =>
      `${x.present.length} node binaries` +
      (x.missing.length ? `; missing: ${x.missing.join(", ")}` : ""));
  const deno = program.kind === "binary"
    ? { path: ctx.deno, version: "none" }
    : await p.step("deno", () => target.deno(ctx.deno), (d) => d.version);
  const loader = await target.loader();
  const release = await releaseOf(options, ctx, deno.version);
  return {
    program,
    machinedMain,
    edge,
    kernel,
    loader,
    deno: deno.path,
    libraries: target.libraries,
    modules,
    addon,
    init,
    extras,
    release,
  };
}

/** What {@link resolveInputs} resolves against: work directory, host Deno, kernel pin, target. */
export interface ResolveContext {
  workDir: string;
  deno: string;
  pin: KernelPin;
  rootFs: RootFsType;
  target: TargetInputs;
}

/** The program the node runs: main.ts (or `options.program`) bundled, or a prebuilt binary. */
function resolveProgramStep(
  p: Progress,
  options: ImageOptions,
  ctx: ResolveContext,
): Promise<ProgramInput> {
  return p.step(
    "program",
    () =>
      resolveProgram(
        {
          program: options.binary ? undefined : options.program ?? "main.ts",
          binary: options.binary,
        },
        `${ctx.workDir}/program`,
        ctx.deno,
      ),
    (r) => `${r.kind} ${"file" in r ? r.file : r.dir}`,
  );
}

/** The image's release fields (arch, board, kernel, Deno, source commit, image version). */
async function releaseOf(
  options: ImageOptions,
  ctx: ResolveContext,
  denoVersion: string,
): Promise<Record<string, string>> {
  const commit = await sourceRevisionOf();
  return {
    arch: ctx.target.profile.arch,
    // The node's slot layout follows it (upgrade/slot_layout.ts), and bundles are checked against it.
    board: options.board ?? UEFI_BOARD,
    kernel: `${ctx.pin.package}=${ctx.pin.version}`,
    deno: denoVersion,
    commit,
    "image-version": options.imageVersion ?? commit.slice(0, 12),
  };
}

/** The three module sets: machined's boot list, on-demand, and the initramfs' own. */
async function resolveModules(modulesDir: string, options: ImageOptions, rootFs: RootFsType) {
  const index = await loadModuleIndex(modulesDir);
  const atBoot = [...(options.modules ?? DEFAULT_MODULES)];
  const boot = resolveModuleClosure(index, atBoot);
  const all = resolveModuleClosure(index, [...atBoot, ...(options.onDemandModules ?? [])]);
  const loaded = new Set(boot.load.map((m) => m.name));
  const early = resolveModuleClosure(index, [
    ...(options.bootModules ?? BOOT_MODULES),
    ...ROOT_FS_MODULES[rootFs],
  ]);
  return {
    load: boot.load,
    onDemand: all.load.filter((m) => !loaded.has(m.name)),
    boot: early.load,
  };
}

/** The root image's tree and the boot initramfs' tree. */
export async function planTrees(
  p: Progress,
  inputs: BuildInputs,
  options: ImageOptions,
  ctx: { pin: KernelPin },
): Promise<{ root: Rootfs; initramfs: Rootfs }> {
  const modulesDir = inputs.kernel.modulesDir;
  const release = ctx.pin.release;
  const root = await p.step("layout root", () =>
    planRootTree({
      program: inputs.program,
      deno: inputs.deno,
      nativeAddon: inputs.addon,
      modules: {
        modulesDir,
        release,
        load: inputs.modules.load,
        onDemand: inputs.modules.onDemand,
      },
      edge: inputs.edge,
      config: options.config,
      pkiDir: options.pki,
      extraFiles: [...inputs.extras.present, ...(options.extraFiles ?? [])],
      release: inputs.release,
      libraries: inputs.libraries,
    }), (fs) => `${fs.entries().length} entries${inputs.addon ? ", with native addon" : ""}`);
  const initramfs = await p.step(
    "layout initramfs",
    () =>
      planBootInitramfs({
        init: inputs.init,
        modules: { modulesDir, release, load: inputs.modules.boot },
        libraries: inputs.libraries,
      }),
    (fs) => `${fs.entries().length} entries`,
  );
  return { root, initramfs };
}

/**
 * Warm Deno's caches for the program (or copy them from the store under the
 * cache directory, code_cache_store.ts) and add them to the root tree's /run
 * seed, where machined-init copies them from at boot.
 */
export async function addCodeCaches(
  p: Progress,
  root: Rootfs,
  inputs: BuildInputs,
  ctx: { deno: string; workDir: string; target: TargetInputs; cacheDir: string },
): Promise<void> {
  if (inputs.program.kind !== "js") return;
  const program = inputs.program.file;
  const runner = await ctx.target.denoRunner();
  if (!runner) {
    p.note(
      `no code cache: ${ctx.target.profile.qemu.user} (Debian qemu-user) runs the ` +
        `${ctx.target.profile.arch} Deno that warms it`,
    );
    return;
  }
  // Warmed with the V8 flags machined runs with (kernelCmdline).
  const r = await p.step(
    `code cache ${LAYOUT.programEntry}`,
    () =>
      warmDenoDirStored({
        deno: inputs.deno,
        runner,
        program,
        nodePath: LAYOUT.programEntry,
        denoDir: `${ctx.workDir}/cache${LAYOUT.denoDir}`,
        v8Flags: MACHINED_V8_FLAGS,
      }, `${ctx.cacheDir}/code-cache`),
    (r) =>
      `${r.codeCacheEntries} entries${r.programCached ? "" : " (program NOT cached)"}, ${
        formatBytes(r.bytes)
      }${r.reused ? " (stored from an earlier build)" : ""}`,
  );
  await addTree(root, r.denoDir, seedPath(LAYOUT.denoDir));
}

/** Whether `program` is this repository's main.ts (machined itself). */
async function isMachinedMain(program: string): Promise<boolean> {
  const real = await Deno.realPath(program).catch(() => undefined);
  return real !== undefined && real === await Deno.realPath(REPO_MAIN).catch(() => undefined);
}
