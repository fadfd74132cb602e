/**
 * Mounts: mount, unmount with a lazy-detach fallback, read-only remounts,
 * bind mounts, and the parsed mount table. {@link NativeMountBackend} is the
 * real thing; {@link FakeMountBackend} keeps a table in memory.
 *
 * @example
 * ```ts
 * import { NativeMountBackend } from "./platform/mount/mod.ts";
 * const mounts = new NativeMountBackend();
 * await mounts.mount({ source: "tmpfs", target: "/run", fstype: "tmpfs", flags: ["nosuid", "nodev"] });
 * await mounts.unmount("/run", { detach: true });
 * ```
 * @module
 */
export type { MountBackend, MountFlag, MountRequest, UnmountResult } from "./backend.ts";
export { NativeMountBackend } from "./backend_native.ts";
export { FakeMountBackend } from "./backend_fake.ts";
export { mountBackendConformance, type MountFixture } from "./backend_conformance.ts";
export { escapeMountPath, type MountInfo, parseMountInfo, unescapeMountPath } from "./mountinfo.ts";
