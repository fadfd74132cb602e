/**
 * The filesystems PID 1 mounts before anything else, in order, and the
 * cgroup v2 controller delegation that services rely on.
 */
import type { MountBackend, MountRequest } from "../platform/mount/mod.ts";

/** One early mount: what to mount and the directory mode to create it with. */
export interface EarlyMount extends MountRequest {
  mode?: number;
}

/** The early mounts, in mount order (unmounted in reverse at shutdown). */
export const EARLY_MOUNTS: readonly EarlyMount[] = [
  { source: "proc", target: "/proc", fstype: "proc", flags: ["nosuid", "nodev", "noexec"] },
  { source: "sysfs", target: "/sys", fstype: "sysfs", flags: ["nosuid", "nodev", "noexec"] },
  { source: "devtmpfs", target: "/dev", fstype: "devtmpfs", flags: ["nosuid"], data: "mode=0755" },
  {
    source: "devpts",
    target: "/dev/pts",
    fstype: "devpts",
    flags: ["nosuid", "noexec"],
    data: "gid=5,mode=620,ptmxmode=666",
  },
  {
    source: "tmpfs",
    target: "/dev/shm",
    fstype: "tmpfs",
    flags: ["nosuid", "nodev"],
    mode: 0o1777,
  },
  {
    source: "tmpfs",
    target: "/run",
    fstype: "tmpfs",
    flags: ["nosuid", "nodev"],
    data: "mode=0755",
  },
  {
    source: "tmpfs",
    target: "/tmp",
    fstype: "tmpfs",
    flags: ["nosuid", "nodev"],
    data: "mode=1777",
  },
  {
    source: "cgroup2",
    target: "/sys/fs/cgroup",
    fstype: "cgroup2",
    flags: ["nosuid", "nodev", "noexec"],
    data: "nsdelegate",
  },
];

/**
 * Where the kernel shows how this boot was verified (read by the firmware
 * domain's SecureBootStatus): securityfs for the lockdown mode, and the EFI
 * variables, read-only, so no process on the node can change the Secure Boot
 * keys or the boot order. Each only where its parent directory exists (a BIOS
 * or a Pi boot has no `/sys/firmware/efi`).
 */
export const FIRMWARE_MOUNTS: readonly EarlyMount[] = [
  {
    source: "securityfs",
    target: "/sys/kernel/security",
    fstype: "securityfs",
    flags: ["nosuid", "nodev", "noexec"],
  },
  {
    source: "efivarfs",
    target: "/sys/firmware/efi/efivars",
    fstype: "efivarfs",
    flags: ["ro", "nosuid", "nodev", "noexec"],
  },
];

/**
 * Mounts each of {@link FIRMWARE_MOUNTS} whose directory exists and that is
 * not mounted yet. Returns the targets it mounted.
 */
export async function mountFirmwareFilesystems(
  backend: MountBackend,
  exists: (path: string) => Promise<boolean> = pathExists,
): Promise<string[]> {
  return await mountMissing(backend, FIRMWARE_MOUNTS, (m) => exists(m.target));
}

async function pathExists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

/**
 * Mounts each early filesystem that is not mounted yet (a second boot stage, or
 * an initramfs that mounted some, must not fail). Returns the targets it mounted.
 */
export async function mountEarly(
  backend: MountBackend,
  mkdir: (path: string, mode: number) => Promise<void> = defaultMkdir,
): Promise<string[]> {
  return await mountMissing(backend, EARLY_MOUNTS, async (m) => {
    await mkdir(m.target, m.mode ?? 0o755);
    return true;
  });
}

/**
 * Mount each of `mounts` that is not mounted yet and that `prepare` (called
 * just before) allows. Returns the targets it mounted.
 */
async function mountMissing(
  backend: MountBackend,
  mounts: readonly EarlyMount[],
  prepare: (m: EarlyMount) => Promise<boolean>,
): Promise<string[]> {
  const mounted: string[] = [];
  for (const m of mounts) {
    if (await isMounted(backend, m.target) || !await prepare(m)) continue;
    await backend.mount(m);
    mounted.push(m.target);
  }
  return mounted;
}

async function isMounted(backend: MountBackend, target: string): Promise<boolean> {
  try {
    return (await backend.mounts()).some((m) => m.mountPoint === target);
  } catch {
    // Before /proc is mounted there is no mount table to read.
    return false;
  }
}

async function defaultMkdir(path: string, mode: number): Promise<void> {
  await Deno.mkdir(path, { recursive: true, mode });
}

/**
 * Enables every available controller for child cgroups (cpu, memory, pids, io ...)
 * so each service can get its own limits. Returns the controllers enabled.
 */
export async function delegateCgroupControllers(root = "/sys/fs/cgroup"): Promise<string[]> {
  const available = (await Deno.readTextFile(`${root}/cgroup.controllers`)).trim().split(/\s+/)
    .filter(Boolean);
  if (available.length === 0) return [];
  await Deno.writeTextFile(
    `${root}/cgroup.subtree_control`,
    available.map((c) => `+${c}`).join(" "),
  );
  return available;
}
