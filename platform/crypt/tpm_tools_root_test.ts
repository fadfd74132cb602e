/**
 * ToolsTpmBackend (Debian's tpm2-tools) against swtpm, with real cryptsetup on
 * a loop device: the `tpm` key kind's conformance suite. Needs root (losetup),
 * cryptsetup, swtpm and tpm2-tools; swtpm is a TPM 2.0 on a local TCP port,
 * one fresh state directory per test.
 */
import { nativeProcessBackend } from "../process/mod.ts";
import { NativeCryptBackend } from "./backend_native.ts";
import { lacksCryptTools, loopDevice, tool } from "./testing_root.ts";
import { tpmConformance } from "./tpm_conformance.ts";
import { ToolsTpmBackend } from "./tpm_tools.ts";

const have = (p: string) => Deno.stat(p).then(() => true, () => false);

async function lacksTpmTools(): Promise<string | undefined> {
  const crypt = await lacksCryptTools();
  if (crypt) return crypt;
  for (const t of ["/usr/bin/swtpm", "/usr/bin/tpm2_unseal"]) {
    if (!await have(t)) return t.split("/").at(-1);
  }
  return undefined;
}

const missing = await lacksTpmTools();

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = l.addr as Deno.NetAddr;
  l.close();
  return port;
}

/** A free port whose next port is free too (the swtpm TCTI's control channel). */
function freePortPair(): number {
  for (;;) {
    const port = freePort();
    try {
      Deno.listen({ hostname: "127.0.0.1", port: port + 1 }).close();
      return port;
    } catch {
      // taken: try another
    }
  }
}

/** A swtpm on fresh state; `stop` ends it and removes the state. */
async function startSwtpm(keyDir: string) {
  const state = await Deno.makeTempDir({ prefix: "swtpm-" });
  const port = freePortPair();
  const ctrl = port + 1; // the swtpm TCTI finds the control channel on the next port
  const process = nativeProcessBackend();
  const h = await process.spawn({
    argv: [
      "/usr/bin/swtpm",
      "socket",
      "--tpm2",
      "--tpmstate",
      `dir=${state}`,
      "--server",
      `type=tcp,port=${port},bindaddr=127.0.0.1`,
      "--ctrl",
      `type=tcp,port=${ctrl},bindaddr=127.0.0.1`,
      "--flags",
      "not-need-init,startup-clear",
    ],
    env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" },
  });
  const tcti = `swtpm:host=127.0.0.1,port=${port}`;
  const tpm = new ToolsTpmBackend({ process, tcti, keyDir });
  for (let i = 0;; i++) {
    try {
      await tpm.readPcr(11);
      break;
    } catch (e) {
      if (i >= 50) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    tpm,
    tcti,
    async stop() {
      await process.signal({ pid: h.pid }, "SIGTERM").catch(() => {});
      await h.exited;
      await Deno.remove(state, { recursive: true });
    },
  };
}

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
