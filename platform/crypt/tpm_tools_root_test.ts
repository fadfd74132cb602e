/**
 * ToolsTpmBackend (Debian's tpm2-tools) against swtpm, with real cryptsetup on
 * a loop device: the `tpm` key kind's conformance suite. Needs root (losetup),
 * cryptsetup, swtpm and tpm2-tools; swtpm is a TPM 2.0 on a local TCP port,
 * one fresh state directory per test.
 */
import { nativeProcessBackend } from "../process/mod.ts";
import { NativeCryptBackend } from "./backend_native.ts";
import { freePort, lacksTpmTools, loopDevice, startSwtpm, tool } from "./testing_root.ts";
import { tpmConformance } from "./tpm_conformance.ts";
import { ToolsTpmBackend } from "./tpm_tools.ts";

const missing = await lacksTpmTools();

tpmConformance(
  `ToolsTpmBackend with swtpm${missing ? ` (needs ${missing})` : ""}`,
  async () => {
    const loop = await loopDevice(40 << 20);
    const keyDir = await Deno.makeTempDir({ prefix: "tpm-keys-" });
    const swtpms = [await startSwtpm(keyDir)];
    const [first] = swtpms;
    return {
      tpm: first.tpm,
      crypt: new NativeCryptBackend({ process: nativeProcessBackend(), keyDir }),
      device: loop.device,
      extendPcr11: async () => {
        const digest = "5e".repeat(32);
        await tool("tpm2_pcrextend", "-T", first.tcti, `11:sha256=${digest}`);
      },
      freshTpm: async () => {
        const s = await startSwtpm(keyDir);
        swtpms.push(s);
        return s.tpm;
      },
      absentTpm: () =>
        new ToolsTpmBackend({
          process: nativeProcessBackend(),
          tcti: `swtpm:host=127.0.0.1,port=${freePort()}`,
          keyDir,
        }),
      cleanup: async () => {
        for (const s of swtpms) await s.stop();
        await loop.release();
        const left = [...Deno.readDirSync(keyDir)];
        await Deno.remove(keyDir, { recursive: true });
        if (left.length > 0) throw new Error(`key files outlived their operation: ${left}`);
      },
    };
  },
  { ignore: missing !== undefined },
);
