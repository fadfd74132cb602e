/**
 * Helpers for the crypt root tests: loop devices over sparse files, run
 * through the native process backend (its reaper owns waitid, so
 * `Deno.Command` is not used).
 * @module
 */
import { nativeProcessBackend } from "../process/mod.ts";
import { ToolsTpmBackend } from "./tpm_tools.ts";

const have = (p: string) => Deno.stat(p).then(() => true, () => false);

/** Why the crypt root tests cannot run here, or undefined when they can. */
export async function lacksCryptTools(): Promise<string | undefined> {
  if (Deno.uid() !== 0) return "root";
  for (const t of ["/usr/sbin/cryptsetup", "/usr/sbin/losetup"]) {
    if (!await have(t)) return t.split("/").at(-1);
  }
  const addon = new URL("../../native-ops/machined_native_ops.node", import.meta.url);
  if (!await have(addon.pathname)) return "the native-ops addon";
  return undefined;
}

async function text(s: ReadableStream<Uint8Array> | null): Promise<string> {
  return s ? await new Response(s).text() : "";
}

/** Run a tool, return its trimmed stdout. @throws Error with its stderr on failure. */
export async function tool(...argv: string[]): Promise<string> {
  const h = await nativeProcessBackend().spawn({
    argv,
    env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" },
  });
  const [out, err, exit] = await Promise.all([text(h.stdout), text(h.stderr), h.exited]);
  if (exit.code !== 0) throw new Error(`${argv.join(" ")} exited with ${exit.code}: ${err}`);
  return out.trim();
}

/** A loop device over a sparse file of `size` bytes; `release` detaches and removes both. */
export async function loopDevice(size: number) {
  const dir = await Deno.makeTempDir({ prefix: "crypt-loop-" });
  const file = `${dir}/disk.img`;
  {
    using f = await Deno.open(file, { create: true, write: true });
    await f.truncate(size);
  }
  const device = await tool("losetup", "-f", "--show", file);
  return {
    file,
    device,
    async release() {
      await tool("losetup", "-d", device);
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** Hex SHA-256 of a whole file. */
export async function sha256Of(path: string): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", await Deno.readFile(path));
  return Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Why the TPM root tests cannot run here (root, cryptsetup, swtpm, tpm2-tools), or undefined. */
export async function lacksTpmTools(): Promise<string | undefined> {
  const crypt = await lacksCryptTools();
  if (crypt) return crypt;
  for (const t of ["/usr/bin/swtpm", "/usr/bin/tpm2"]) {
    if (!await have(t)) return t.split("/").at(-1);
  }
  return undefined;
}

/** A free TCP port on 127.0.0.1 (nothing listens there: an absent TPM). */
export function freePort(): number {
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
export async function startSwtpm(keyDir: string) {
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
