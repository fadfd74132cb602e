import { join } from "node:path";
import { firmwareBackendConformance } from "./backend_conformance.ts";
import { FakeFirmwareBackend } from "./backend_fake.ts";
import { FIRMWARE_PATHS, NativeFirmwareBackend } from "./backend_native.ts";

firmwareBackendConformance("fake", () => {
  const backend = new FakeFirmwareBackend();
  return Promise.resolve({
    backend,
    setVariable: (name, guid, data) => Promise.resolve(void backend.setVariable(name, guid, data)),
    setLockdown: (text) => Promise.resolve(void (backend.lockdownText = text)),
    setTpm: (pcrs) => {
      backend.hasTpm = true;
      for (const [i, v] of pcrs) backend.pcrs.set(i, v);
      return Promise.resolve();
    },
    close: () => Promise.resolve(),
  });
});

firmwareBackendConformance("native over a temporary sysfs", async () => {
  const root = await Deno.makeTempDir({ prefix: "firmware-" });
  const write = async (rel: string, data: Uint8Array | string) => {
    const path = join(root, rel);
    await Deno.mkdir(join(path, ".."), { recursive: true });
    if (typeof data === "string") await Deno.writeTextFile(path, data);
    else await Deno.writeFile(path, data);
  };
  return {
    backend: new NativeFirmwareBackend(root),
    setVariable: (name, guid, data) => {
      const bytes = new Uint8Array(4 + data.length);
      bytes.set([0x06, 0, 0, 0]);
      bytes.set(data, 4);
      return write(`${FIRMWARE_PATHS.efivars}/${name}-${guid}`, bytes);
    },
    setLockdown: (text) => write(FIRMWARE_PATHS.lockdown, text),
    setTpm: async (pcrs) => {
      await Deno.mkdir(join(root, FIRMWARE_PATHS.tpm, "pcr-sha256"), { recursive: true });
      for (const [i, v] of pcrs) {
        await write(`${FIRMWARE_PATHS.tpm}/pcr-sha256/${i}`, `${v.toUpperCase()}\n`);
      }
    },
    close: () => Deno.remove(root, { recursive: true }),
  };
});
