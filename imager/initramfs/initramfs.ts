/**
 * Decides what the node's root tree holds (Deno, the program, the native
 * addon, their libraries, kernel modules, /etc, empty mount points, extra
 * files): packed as the slot's read-only root image (../root_image.ts). The
 * boot initramfs (boot_initramfs.ts) holds only machined-init and the modules
 * that reach that image; both are written as compressed (lz4 or zstd) cpio
 * by {@link writeInitramfs}. The program to run is an input, so the same
 * imager boots machined or a test stand-in.
 */
import { type CpioOwner, writeCpio } from "../cpio.ts";
import { CommandError } from "../run.ts";
import type { ModuleRef } from "../kernel/module_closure.ts";
import { IMAGE_MODULE_PARAMS } from "../versions.ts";
import { type LibrarySource, Rootfs } from "./rootfs.ts";
import { etcFiles } from "./etc_files.ts";
import { IMAGE_EDGE_PATH } from "../../api/edge/mod.ts";

/**
 * The root image's tree copied into the fresh tmpfs of the same name at boot
 * (`seed/run` into /run, `seed/var` into /var) by machined-init: the root is
 * read-only, so what must be writable starts there.
 */
const SEED = "/usr/lib/machined/seed";

/** Where things live in the root image (and, for `init`, in the initramfs). */
export const LAYOUT = {
  deno: "/usr/bin/deno",
  programDir: "/machined",
  programEntry: "/machined/main.js",
  /**
   * What the kernel starts: mounts /proc, /sys and /dev, then execs Deno (or the
   * compiled binary), keeping PID 1 (native-ops/init). Deno panics in node
   * compatibility without /proc.
   */
  init: "/sbin/machined-init",
  binary: "/machined/machined",
  nativeAddon: "/machined/machined_native_ops.node",
  seed: SEED,
  /**
   * PID 1's DENO_DIR, on the /run tmpfs: Deno opens its caches read-write
   * (SQLite) and ignores a cache it cannot write, so the warmed cache is
   * shipped at `${SEED}/run/deno/machined` and copied here at boot.
   */
  denoDir: "/run/deno/machined",
  /**
   * machined-edge, the API's network edge (native-ops/edge), which PID 1
   * supervises as the machined-api user (api/edge/edge_process_spec.ts).
   */
  edge: IMAGE_EDGE_PATH,
  /** An empty resolv.conf machined rewrites; /etc/resolv.conf links to it. */
  resolvConf: "/run/resolv.conf",
  modulesList: "/etc/machined/modules",
  config: "/etc/machined/config.yaml",
  pki: "/etc/machined/pki",
  release: "/etc/machined/release",
} as const;

/** The program PID 1 runs: a JS file or directory run by Deno, or a compiled binary. */
export type ProgramInput =
  | { kind: "js"; file: string }
  | { kind: "dir"; dir: string }
  | { kind: "binary"; file: string };

/** An extra host file to ship (containerd, runc, mkfs tools, ...). */
export interface ExtraFile {
  /** Host path. Symlinks are followed. */
  source: string;
  /** Path inside the initramfs. */
  dest: string;
  /** @default 0o755 */
  mode?: number;
  /** Also ship the shared libraries `ldd` lists for it. @default true */
  withLibs?: boolean;
}

/** Everything {@link planRootTree} needs. */
export interface InitramfsSpec {
  program: ProgramInput;
  /** Host Deno binary (ignored for a compiled `binary` program). */
  deno?: string;
  /** Host path of machined_native_ops.node, if it should be shipped. */
  nativeAddon?: string;
  /**
   * Kernel modules to ship, with the host modules dir they come from: `load`
   * in boot load order, `onDemand` shipped but left for the config to load.
   */
  modules: { modulesDir: string; release: string; load: ModuleRef[]; onDemand?: ModuleRef[] };
  /** Machine config to bake in. */
  config?: string;
  /** PKI directory to bake in. */
  pkiDir?: string;
  extraFiles?: ExtraFile[];
  /** Host path of machined-edge, shipped at {@link LAYOUT.edge} with its libraries. */
  edge?: string;
  /** Lines written to /etc/machined/release (versions, for the record). */
  release: Record<string, string>;
  /** Where binaries' libraries come from: the host's (default) or the target's sysroot. */
  libraries?: LibrarySource;
}

/** The seed path of a /run or /var path: where the image ships its first contents. */
export function seedPath(path: string): string {
  return `${SEED}${path}`;
}

/**
 * Lay out the root image's tree for `spec`.
 * @throws Deno.errors.NotFound when an input path is missing.
 */
export async function planRootTree(spec: InitramfsSpec): Promise<Rootfs> {
  const fs = new Rootfs();
  fs.dir("/");
  for (const d of ["/proc", "/sys", "/dev", "/run", "/var", "/system/state", "/root"]) {
    fs.dir(d);
  }
  fs.dir("/tmp", 0o1777);
  // containerd's CRI plugin creates its CNI directories when they are missing,
  // which fails on the read-only root: they ship (empty) instead.
  fs.dir("/etc/cni/net.d");
  fs.dir("/opt/cni/bin");
  fs.dir(seedPath("/var/lib"));
  fs.dir(seedPath(LAYOUT.denoDir));
  for (const [path, text] of Object.entries(etcFiles())) fs.file(path, text);
  // The root is read-only: resolv.conf lives on /run, which machined rewrites.
  fs.symlink("/etc/resolv.conf", LAYOUT.resolvConf);
  fs.file(seedPath(LAYOUT.resolvConf), "");

  switch (spec.program.kind) {
    case "binary":
      await fs.binary(LAYOUT.binary, spec.program.file, 0o755, spec.libraries);
      break;
    case "js":
      await fs.binary(LAYOUT.deno, requireDeno(spec), 0o755, spec.libraries);
      fs.file(LAYOUT.programEntry, await Deno.readFile(spec.program.file));
      break;
    case "dir":
      await fs.binary(LAYOUT.deno, requireDeno(spec), 0o755, spec.libraries);
      await copyTree(fs, spec.program.dir, LAYOUT.programDir);
      break;
  }
  if (spec.edge) await fs.binary(LAYOUT.edge, spec.edge, 0o755, spec.libraries);
  if (spec.nativeAddon) {
    await fs.binary(LAYOUT.nativeAddon, spec.nativeAddon, 0o644, spec.libraries);
  }

  const { modulesDir, release, load } = spec.modules;
  const all = [...load, ...(spec.modules.onDemand ?? [])];
  const shipped = (m: ModuleRef) => `/usr/lib/modules/${release}/${m.path}`;
  for (const m of all) fs.copy(shipped(m), `${modulesDir}/${m.path}`);
  fs.file(
    LAYOUT.modulesList,
    "# Kernel modules to load at boot, in order (dependencies first), each with its parameters.\n" +
      load.map((m) => modulesListLine(shipped(m), IMAGE_MODULE_PARAMS[m.name]) + "\n").join(""),
  );
  // A modules.dep for what is shipped, so machined resolves dependencies of
  // modules the config asks for (Debian's package carries none; it is generated).
  fs.file(`/usr/lib/modules/${release}/modules.dep`, modulesDep(all));
  const builtin = await Deno.readTextFile(`${modulesDir}/modules.builtin`).catch(() => "");
  fs.file(`/usr/lib/modules/${release}/modules.builtin`, builtin);

  if (spec.config) fs.copy(LAYOUT.config, spec.config, 0o600);
  if (spec.pkiDir) await copyTree(fs, spec.pkiDir, LAYOUT.pki, 0o600);
  for (const x of spec.extraFiles ?? []) {
    if (x.withLibs ?? true) {
      await fs.binary(x.dest, x.source, x.mode ?? 0o755, spec.libraries);
    } else fs.copy(x.dest, await Deno.realPath(x.source), x.mode ?? 0o755);
  }
  fs.file(
    LAYOUT.release,
    Object.entries(spec.release).sort().map(([k, v]) => `${k}=${v}\n`).join(""),
  );
  return fs;
}

/**
 * Ship the host directory `hostDir` (a warmed DENO_DIR) at `nodeDir`,
 * owned by `owner` when given (files 0644, directories 0755).
 */
export async function addTree(
  fs: Rootfs,
  hostDir: string,
  nodeDir: string,
  owner?: CpioOwner,
): Promise<void> {
  await copyTree(fs, hostDir, nodeDir, 0o644);
  if (!owner) return;
  for (const e of fs.entries()) {
    const inside = e.path === nodeDir || e.path.startsWith(nodeDir + "/");
    if (inside && (e.type === "dir" || e.type === "file")) fs.chown(e.path, owner);
  }
}

/** modules.dep lines (`path: dep-path ...`) for the shipped modules. Pure. */
export function modulesDep(load: readonly ModuleRef[]): string {
  const pathOf = new Map(load.map((m) => [m.name, m.path]));
  return load.map((m) =>
    `${m.path}: ${m.deps.map((d) => pathOf.get(d)).filter(Boolean).join(" ")}`.trimEnd() + "\n"
  ).join("");
}

/** Sizes of a written initramfs. */
export interface InitramfsSizes {
  cpioBytes: number;
  compressedBytes: number;
  entries: number;
}

/**
 * How the initramfs is compressed. The kernel's lz4 unpacks about twice as
 * fast as its zstd (1.3 s against 2.7 s for machined's 180 MiB under TCG),
 * which outweighs reading a third more bytes from the ESP; zstd is smaller.
 */
export type InitramfsCompression = "lz4" | "zstd";

/**
 * The compression a build uses: zstd for a Secure Boot build, whose UKIs'
 * stub appends its own cpio archives (`/.extra`: the signed PCR policy) to
 * the initramfs, since the kernel cannot find the end of lz4's legacy frames
 * and fails on what follows ("Initramfs unpacking failed: Decoding failed",
 * the appended files lost); otherwise the choice, lz4 by default.
 * @throws TypeError for lz4 asked for with Secure Boot.
 */
export function initramfsCompression(
  o: { compression?: InitramfsCompression; secureBoot: boolean },
): InitramfsCompression {
  if (!o.secureBoot) return o.compression ?? "lz4";
  if (o.compression === "lz4") {
    throw new TypeError(
      "--compression lz4 cannot carry systemd-stub's appended archives: a Secure Boot image uses zstd",
    );
  }
  return "zstd";
}

/**
 * The compressor's command line, reading the cpio on stdin and writing `out`.
 * lz4 must use the legacy frame format (`-l`), the only one the kernel reads.
 * Both outputs depend only on the input (zstd's not on its thread count).
 */
export function compressorArgs(
  compression: InitramfsCompression,
  level: number,
  out: string,
): [string, string[]] {
  if (compression === "lz4") return ["lz4", ["-l", `-${level}`, "-q", "-f", "-", out]];
  const args = [`-${level}`, "-T0", "-q", "-f", "--no-progress", "-o", out];
  if (level > 19) args.unshift("--ultra");
  return ["zstd", args];
}

/**
 * Write the tree as a cpio archive piped through the compressor into `out`.
 * @throws CommandError when the compressor fails.
 */
export async function writeInitramfs(
  fs: Rootfs,
  out: string,
  opts: { compression?: InitramfsCompression; level?: number; zstdLevel?: number; mtime: number },
): Promise<InitramfsSizes> {
  const compression = opts.compression ?? "zstd";
  const level = opts.level ?? opts.zstdLevel ?? 9;
  const [command, args] = compressorArgs(compression, level, out);
  const child = new Deno.Command(command, { args, stdin: "piped", stderr: "piped" }).spawn();
  const writer = child.stdin.getWriter();
  const entries = fs.entries();
  let cpioBytes: number;
  try {
    cpioBytes = await writeCpio(entries, (c) => writer.write(c), opts.mtime);
  } finally {
    await writer.close().catch(() => {});
  }
  const status = await child.output();
  if (status.code !== 0) {
    throw new CommandError(command, args, status.code, new TextDecoder().decode(status.stderr));
  }
  return { cpioBytes, compressedBytes: (await Deno.stat(out)).size, entries: entries.length };
}

function requireDeno(spec: InitramfsSpec): string {
  if (!spec.deno) throw new TypeError("A JS program needs a Deno binary (spec.deno)");
  return spec.deno;
}

async function copyTree(fs: Rootfs, from: string, to: string, fileMode?: number): Promise<void> {
  fs.dir(to);
  const names: Deno.DirEntry[] = [];
  for await (const e of Deno.readDir(from)) names.push(e);
  names.sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const e of names) {
    const src = `${from}/${e.name}`;
    const dst = `${to}/${e.name}`;
    if (e.isDirectory) await copyTree(fs, src, dst, fileMode);
    else if (e.isSymlink) fs.symlink(dst, await Deno.readLink(src));
    else fs.copy(dst, src, fileMode ?? ((await Deno.stat(src)).mode ?? 0o644) & 0o7777);
  }
}

/** One line of the image's modules list: the module's path, then its parameters if any. Pure. */
export function modulesListLine(path: string, params?: string): string {
  return params ? `${path} ${params}` : path;
}
