/**
 * Service cgroups: one directory per service under a root, with memory, CPU
 * and pids limits. {@link NativeCgroupBackend} writes the kernel's files;
 * {@link FakeCgroupBackend} keeps them in memory.
 *
 * @example
 * ```ts
 * import { NativeCgroupBackend } from "./platform/cgroup/mod.ts";
 * const cgroups = new NativeCgroupBackend("/sys/fs/cgroup/machined");
 * const dir = await cgroups.prepare("payload", { memoryMax: 256 << 20, pidsMax: 512 });
 * // spawn with ProcessSpec.cgroup = dir
 * ```
 * @module
 */
export { type CgroupBackend, CgroupError, type CgroupLimits, checkCgroupName } from "./backend.ts";
export { NativeCgroupBackend } from "./backend_native.ts";
export { FakeCgroupBackend } from "./backend_fake.ts";
export { cgroupBackendConformance, type CgroupFixture } from "./backend_conformance.ts";
