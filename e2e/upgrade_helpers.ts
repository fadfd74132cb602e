/**
 * What the upgrade QEMU tests (x86_64 and arm64) share: Version over the
 * API, the node's `upgrade` events, and a fingerprint of the ESP read from
 * the host's image file (so a test can show a refused bundle changed
 * nothing on it).
 *
 * @module
 */
import { createHash } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { join } from "node:path";
import { connectToNode } from "../machinectl/mod.ts";
import type { SlotFileName } from "../bundle/mod.ts";

/**
 * Version over mutual TLS (slot, image version, arch), retried for 30 s while
 * the connection is refused or cut: right after a boot machined restarts apid
 * once the DHCP address is in the server certificate, and a call that opens
 * its connection in that gap is refused.
 */
export async function nodeVersion(config: string, port: number) {
  const until = performance.now() + 30_000;
  for (;;) {
    try {
      using conn = await connectToNode({ config, endpoints: [`127.0.0.1:${port}`] });
      return await conn.client.version({}, { timeoutMs: 10_000 });
    } catch (e) {
      const transient = e instanceof ConnectError &&
        [Code.Unavailable, Code.Canceled, Code.Internal].includes(e.code);
      if (!transient || performance.now() > until) throw e;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

/** One `upgrade` event as the tests look at it. */
export interface UpgradeEvent {
  subject: string;
  action: string;
  message: string;
  fields: Record<string, string>;
}

/**
 * The node's `upgrade` events: its history (the last `tail` of it, when
 * given; 0 for live ones only), then live ones until `pred` matches one
 * (returned) or `ms` pass or `signal` aborts (undefined). `all` gets every
 * event seen.
 */
export async function findUpgradeEvent(
  config: string,
  port: number,
  pred: (e: UpgradeEvent) => boolean,
  opts: { ms?: number; all?: UpgradeEvent[]; tail?: number; signal?: AbortSignal } = {},
): Promise<UpgradeEvent | undefined> {
  using conn = await connectToNode({ config, endpoints: [`127.0.0.1:${port}`] });
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), opts.ms ?? 60_000);
  opts.signal?.addEventListener("abort", () => ac.abort(), { once: true });
  try {
    const request = { kinds: ["upgrade"], tail: opts.tail };
    for await (const r of conn.client.events(request, { signal: ac.signal })) {
      if (!r.event) continue;
      const e = {
        subject: r.event.subject,
        action: r.event.action,
        message: r.event.message,
        fields: r.event.fields,
      };
      opts.all?.push(e);
      if (pred(e)) return e;
    }
  } catch {
    /* timed out */
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
  return undefined;
}

/** Whether the node's event history (or the next minute) has an `upgrade` event `subject action`. */
export async function hasEvent(
  config: string,
  port: number,
  subject: string,
  action: string,
): Promise<boolean> {
  const e = await findUpgradeEvent(
    config,
    port,
    (e) => e.subject === subject && e.action === action,
  );
  return e !== undefined;
}

/**
 * The ESP of the raw disk image `image` (a VM running without `snapshot`
 * writes through to it) at byte `offset`: every file's path, size and time
 * (mtools' `mdir -/`) and the loader entries' text, hashed. Any write to
 * the ESP changes it.
 */
export async function espFingerprint(
  image: string,
  offset: bigint,
): Promise<{ sha256: string; entries: string[] }> {
  const drive = `${image}@@${offset}`;
  const mtools = async (cmd: string, ...args: string[]) => {
    const out = await new Deno.Command(cmd, {
      args: ["-i", drive, ...args],
      env: { MTOOLS_SKIP_CHECK: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    if (!out.success) {
      throw new Error(`${cmd} ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
    }
    return text;
  };
  const h = createHash("sha256");
  h.update(await mtools("mdir", "-/", "::/"));
  const entries = (await mtools("mdir", "-b", "::/loader/entries"))
    .split("\n").map((l) => l.trim().replace(/^.*\//, "")).filter((l) => l.endsWith(".conf"))
    .sort();
  for (const e of entries) h.update(e + "\n" + await mtools("mtype", `::/loader/entries/${e}`));
  return { sha256: h.digest("hex"), entries };
}

/**
 * Three small slot files in `dir` whose text names `what`: the files of a
 * bundle whose contents do not matter (one refused on its manifest, or one
 * only written to a slot and read back).
 */
export async function smallSlotFiles(
  dir: string,
  what: string,
): Promise<Record<SlotFileName, string>> {
  await Deno.mkdir(dir, { recursive: true });
  const files = { "vmlinuz": "", "initramfs.img": "", "root.img": "" };
  for (const name of Object.keys(files) as SlotFileName[]) {
    files[name] = join(dir, name);
    await Deno.writeTextFile(files[name], `${name} of a ${what}\n`.repeat(64));
  }
  return files;
}
