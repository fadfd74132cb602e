/**
 * Where an image's architecture-specific inputs come from, behind one
 * interface: the kernel, systemd-boot, Deno, machined-init, the native addon,
 * machined-edge (the API's network edge), containerd/runc/mkfs.ext4 and the libraries each binary needs. For the
 * build host's own architecture they are the host's files (as before); for a
 * foreign one (arm64 on x86_64) they come from the target's Debian packages
 * unpacked into a sysroot through a private apt, Deno's npm package and the
 * cross-compiled Rust (native-ops/cross). The build steps call this and
 * never branch on the architecture.
 */
import { type FetchedKernel, fetchKernel } from "../kernel/kernel_fetch.ts";
import { buildInit } from "../init_binary.ts";
import { extrasFor, nodeExtras } from "../node_extras.ts";
import { HOST_LIBRARIES, type LibrarySource } from "../initramfs/rootfs.ts";
import type { ExtraFile } from "../initramfs/initramfs.ts";
import { run } from "../run.ts";
import { checkElfMachine, crossBuild, sysrootLibraries } from "../../native-ops/cross/mod.ts";
import { type ArchProfile, hostArch } from "./profiles.ts";
import { PrivateApt } from "./private_apt.ts";
import { buildEdge, EDGE_BINARY, edgeNeedsBuild } from "../../native-ops/build.ts";

const REPO_ADDON = new URL("../../native-ops/machined_native_ops.node", import.meta.url).pathname;

/** The architecture-specific inputs of one build. */
export interface TargetInputs {
  profile: ArchProfile;
  /** Whether the build host can run the target's binaries (and so warm Deno's caches). */
  native: boolean;
  libraries: LibrarySource;
  kernel(): Promise<FetchedKernel>;
  /** Host path of systemd-boot's EFI binary. */
  loader(): Promise<string>;
  /** Host path of the Deno binary to ship, and its version line. */
  deno(hostDeno: string): Promise<{ path: string; version: string }>;
  /** Host path of machined-init. */
  init(): Promise<string>;
  /** Host path of the native addon to ship, if any. */
  addon(choice: string): Promise<string | undefined>;
  /** Host path of machined-edge, built (or cross-built) when missing or stale. */
  edge(): Promise<string>;
  extras(): Promise<{ present: ExtraFile[]; missing: string[] }>;
  /**
   * The command prefix that runs the node's Deno on the build host (to warm
   * its caches): none for the host's own architecture, QEMU user mode with
   * the sysroot for a foreign one; undefined when that is not installed.
   */
  denoRunner(): Promise<string[] | undefined>;
}

/** The inputs for `profile`: the host's own, or a foreign sysroot under `cacheDir`. */
export function targetInputs(profile: ArchProfile, cacheDir: string): TargetInputs {
  return profile.arch === hostArch() ? hostInputs(profile, cacheDir) : foreign(profile, cacheDir);
}

function hostInputs(profile: ArchProfile, cacheDir: string): TargetInputs {
  return {
    profile,
    native: true,
    libraries: HOST_LIBRARIES,
    kernel: () => fetchKernel(profile.kernel, cacheDir),
    loader: () => Promise.resolve(profile.loader),
    deno: async (hostDeno) => ({
      path: hostDeno,
      version: (await run(hostDeno, ["--version"])).split("\n")[0],
    }),
    init: () => buildInit(),
    addon: async (choice) => {
      if (choice === "none") return undefined;
      if (choice !== "auto") return choice;
      return (await exists(REPO_ADDON)) ? REPO_ADDON : undefined;
    },
    edge: async () => {
      if (edgeNeedsBuild()) await buildEdge();
      return EDGE_BINARY.pathname;
    },
    extras: () => nodeExtras(profile.arch),
    denoRunner: () => Promise.resolve([]),
  };
}

function foreign(profile: ArchProfile, cacheDir: string): TargetInputs {
  const dir = `${cacheDir}/${profile.arch}`;
  const apt = new PrivateApt(profile.arch, `${dir}/apt`);
  const sysroot = `${dir}/root`;
  let ready: Promise<void> | undefined;
  const root = () => ready ??= unpackSysroot(profile, apt, dir, sysroot);
  const libraries: LibrarySource = {
    root: sysroot,
    libraries: async (binary) => {
      await root();
      return await sysrootLibraries(binary, sysroot, profile.libDirs, profile.elfMachine);
    },
  };
  return {
    profile,
    native: false,
    libraries,
    kernel: () =>
      fetchKernel(profile.kernel, dir, { download: (p, v, o) => apt.download(p, v, o) }),
    loader: async () => (await root(), `${sysroot}${profile.loader}`),
    deno: (hostDeno) => fetchNpmDeno(profile, hostDeno, dir),
    init: async () => await checked(profile, await crossBuild("init", profile.rustTarget)),
    addon: async (choice) => {
      if (choice === "none") return undefined;
      if (choice !== "auto") return await checked(profile, choice);
      return await checked(profile, await crossBuild("addon", profile.rustTarget));
    },
    edge: async () => await checked(profile, await crossBuild("edge", profile.rustTarget)),
    extras: async () => {
      await root();
      // A data file (the CA bundle, withLibs false) is the same for every architecture, and
      // the sysroot's .debs do not run the postinst that writes it: the host's is taken.
      const present = extrasFor(profile.arch).map(({ package: _, arches: __, ...x }) => ({
        ...x,
        source: x.withLibs === false ? x.source : `${sysroot}${x.source}`,
      }));
      return { present, missing: [] };
    },
    denoRunner: async () => {
      const user = profile.qemu.user;
      if (!user || !(await exists(user))) return undefined;
      await root();
      return [user, "-L", sysroot];
    },
  };
}

async function checked(profile: ArchProfile, path: string): Promise<string> {
  await checkElfMachine(path, profile.elfMachine);
  return path;
}

/** Download the profile's packages with the private apt and unpack them into `sysroot`. */
async function unpackSysroot(
  profile: ArchProfile,
  apt: PrivateApt,
  dir: string,
  sysroot: string,
): Promise<void> {
  const want = "usrmerge\n" + profile.packages.map((p) => `${p.package}=${p.version}\n`).join("");
  const have = await Deno.readTextFile(`${sysroot}/.complete`).catch(() => "");
  if (have === want) return;
  await Deno.remove(sysroot, { recursive: true }).catch(() => {});
  for (const p of profile.packages) {
    const deb = await apt.download(p.package, p.version, `${dir}/debs`);
    await run("dpkg-deb", ["-x", deb, sysroot]);
  }
  await mergeUsr(sysroot);
  await Deno.writeTextFile(`${sysroot}/.complete`, want);
}

/**
 * bookworm's packages still ship /bin, /sbin and /lib; an installed system is
 * merged into /usr (usrmerge), as the build host is. The sysroot is merged
 * the same way, so paths (/usr/sbin/mke2fs, /lib -> usr/lib) mean the same on
 * both architectures.
 */
async function mergeUsr(sysroot: string): Promise<void> {
  for (const d of ["bin", "sbin", "lib"]) {
    const st = await Deno.lstat(`${sysroot}/${d}`).catch(() => undefined);
    if (!st?.isDirectory) continue;
    await Deno.mkdir(`${sysroot}/usr/${d}`, { recursive: true });
    await run("cp", ["-a", `${sysroot}/${d}/.`, `${sysroot}/usr/${d}/`]);
    await Deno.remove(`${sysroot}/${d}`, { recursive: true });
    await Deno.symlink(`usr/${d}`, `${sysroot}/${d}`);
  }
}

/**
 * The target's Deno from npm (`npm pack @deno/linux-arm64-glibc@<version>`),
 * the same version as the build host's Deno, whose npm package is the same
 * release built for the other architecture.
 */
async function fetchNpmDeno(
  profile: ArchProfile,
  hostDeno: string,
  dir: string,
): Promise<{ path: string; version: string }> {
  const line = (await run(hostDeno, ["--version"])).split("\n")[0];
  const version = line.split(" ")[1];
  const out = `${dir}/deno-${version}`;
  const path = `${out}/package/deno`;
  if (!(await exists(path))) {
    await Deno.mkdir(out, { recursive: true });
    const tgz = (await run("npm", [
      "pack",
      "--silent",
      "--pack-destination",
      out,
      `${profile.denoNpm}@${version}`,
    ])).trim().split("\n").pop()!;
    await run("tar", ["-xzf", `${out}/${tgz}`, "-C", out]);
  }
  await checkElfMachine(path, profile.elfMachine);
  return { path, version: `deno ${version} (${profile.denoNpm}, npm)` };
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}
