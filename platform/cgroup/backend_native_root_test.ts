/**
 * The native cgroup backend against the kernel's cgroup files. Needs root to
 * create cgroups. Runs under the v2 hierarchy when it has the memory and pids
 * controllers, else under the v1 memory hierarchy (hybrid hosts).
 */
import { cgroupBackendConformance } from "./backend_conformance.ts";
import { NativeCgroupBackend } from "./backend_native.ts";
import { scratchCgroupRoot } from "./scratch_root.ts";

const isRoot = Deno.uid() === 0;
const scratch = isRoot ? await scratchCgroupRoot("conformance") : undefined;
if (!isRoot) console.log("skipping native cgroup tests: creating cgroups needs root");
else if (!scratch) console.log("skipping native cgroup tests: no writable cgroup hierarchy");

cgroupBackendConformance(
  `NativeCgroupBackend (${scratch?.kind ?? "none"}; needs root, a writable cgroup hierarchy)`,
  () =>
    Promise.resolve({
      backend: new NativeCgroupBackend(scratch!.root),
      limits: scratch!.kind === "v2"
        ? [{ memoryMax: 64 << 20, cpuMax: "50000 100000", pidsMax: 64 }, { pidsMax: 8 }]
        : [{ memoryMax: 64 << 20 }, { memoryMax: 32 << 20 }],
      teardown: () => Deno.remove(scratch!.root).catch(() => {}),
    }),
  { ignore: !scratch },
);
