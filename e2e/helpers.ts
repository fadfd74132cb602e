/**
 * What the QEMU tests share: a free host port, machinectl run in-process
 * against the VM (or as a process inside a network namespace), and `get -o json`
 * parsed into documents. (Whether QEMU still
 * runs is imager/qemu/vm.ts's `isRunning`.)
 */
import { bufferIo, runMachinectl } from "../machinectl/mod.ts";

/**
 * Removes a passed test's scratch directory (its images, bundles and VM
 * state: hundreds of MiB each). CI's disk can be small and the tier builds a
 * dozen images, so a test frees its space at the end of its body: one that
 * threw never gets there and keeps its scratch for a post-mortem (a failed
 * `t.step` does not throw, so its test still removes it).
 * `E2E_KEEP_SCRATCH=1` keeps every test's.
 */
export async function removeScratch(work: string): Promise<void> {
  if (Deno.env.get("E2E_KEEP_SCRATCH")) return;
  await Deno.remove(work, { recursive: true }).catch(() => {});
}

/**
 * Polls `machinectl get ARGS -o json` every `intervalMs` (a second) until `pred` holds for
 * the documents (the node's API answers and the state has come about);
 * throws with the last output after `timeoutMs` on the monotonic clock.
 */
export async function waitForDocs(
  config: string,
  port: number,
  args: string[],
  pred: (docs: ResourceDoc[]) => boolean,
  timeoutMs = 300_000,
  intervalMs = 1000,
): Promise<ResourceDoc[]> {
  const deadline = performance.now() + timeoutMs;
  let last = "";
  while (performance.now() < deadline) {
    const r = await machinectl(config, port, "get", ...args, "-o", "json");
    last = r.out + r.err;
    if (r.code === 0 && r.out.trim()) {
      const docs = parseDocs(r.out);
      if (pred(docs)) return docs;
    }
    await new Promise((res) => setTimeout(res, intervalMs));
  }
  throw new Error(`timed out waiting for ${args.join(" ")}; last output: ${last}`);
}

/** A TCP port on 127.0.0.1 nobody listens on right now. */
export function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** Runs machinectl against the VM's forwarded port; returns exit code and output. */
export async function machinectl(config: string, port: number, ...args: string[]) {
  const io = bufferIo();
  const code = await runMachinectl(["--config", config, "-e", `127.0.0.1:${port}`, ...args], io);
  return { code, out: io.stdout.join("\n"), err: io.stderr.join("\n") };
}

/** One resource as `get -o json` prints it. */
export interface ResourceDoc {
  metadata: { id: string };
  spec: Record<string, unknown>;
}

/** Parses the concatenated JSON documents of `get -o json`. */
export function parseDocs(out: string): ResourceDoc[] {
  return out.trim() ? JSON.parse(`[${out.replace(/\}\n\{/g, "},{")}]`) : [];
}

/**
 * Runs machinectl (its own entry point, machinectl/main.ts, so the same client
 * config, connection and TLS verification code) as a process inside the
 * network namespace `netns`, dialing `endpoint` with no port forward between.
 */
export function machinectlInNetns(
  netns: string,
  config: string,
  endpoint: string,
  ...args: string[]
) {
  return machinectlNs(netns, "--config", config, "-e", endpoint, ...args);
}

/** machinectl/main.ts as a process inside `netns`, with `args` as they are. */
export async function machinectlNs(netns: string, ...args: string[]) {
  const main = new URL("../machinectl/main.ts", import.meta.url).pathname;
  const out = await new Deno.Command("ip", {
    args: ["netns", "exec", netns, Deno.execPath(), "run", "-A", "--cached-only", main, ...args],
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, out: text(out.stdout), err: text(out.stderr) };
}
