/**
 * NativeCryptBackend against Debian's cryptsetup on a loop device. Needs root
 * (losetup, cryptsetup) and, for mapping, the kernel's device-mapper.
 */
import assert from "node:assert/strict";
import { nativeProcessBackend } from "../process/mod.ts";
import { NativeCryptBackend } from "./backend_native.ts";
import { cryptBackendConformance } from "./backend_conformance.ts";
import { lacksCryptTools, loopDevice } from "./testing_root.ts";

const missing = await lacksCryptTools();

const mapper = hasDeviceMapper() ? "" : ", mapping needs device-mapper";
cryptBackendConformance(
  `NativeCryptBackend${missing ? ` (needs ${missing})` : ""}${mapper}`,
  async () => {
    const loop = await loopDevice(40 << 20);
    const keyDir = await Deno.makeTempDir({ prefix: "crypt-keys-" });
    const backend = new NativeCryptBackend({ process: nativeProcessBackend(), keyDir });
    return {
      backend,
      device: loop.device,
      cleanup: async () => {
        await loop.release();
        const left = [...Deno.readDirSync(keyDir)];
        await Deno.remove(keyDir, { recursive: true });
        assert.deepEqual(left, [], "no key file outlives its command");
      },
    };
  },
  { ignore: missing !== undefined, ignoreMapping: !hasDeviceMapper() },
);

/** The kernel's device-mapper is registered (a /dev/mapper/control node alone is not enough). */
function hasDeviceMapper(): boolean {
  try {
    return Deno.readTextFileSync("/proc/misc").includes("device-mapper");
  } catch {
    return false;
  }
}
