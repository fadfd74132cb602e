/**
 * Shared setup of the privileged block tests (block_root_test.ts,
 * reset_root_test.ts): which tools are missing, the outer test that re-runs
 * a file in a private mount namespace, sparse images on loop devices, and one
 * "boot" of the block controllers on real backends. Kept in one place so the
 * two tiers cannot drift apart in how they isolate the host.
 */
import assert from "node:assert/strict";
import { parseMachineConfig } from "../../config/mod.ts";
import { EventBus } from "../../events/mod.ts";
import { NativeBlockBackend } from "../../platform/block/mod.ts";
import { NativeMountBackend } from "../../platform/mount/mod.ts";
import { nativeProcessBackend } from "../../platform/process/mod.ts";
import { rerunInNamespace } from "../../platform/testing.ts";
import {
  isStateMounted,
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  MOUNT_STATUS,
  type ResourceSpecs,
} from "../../resources/mod.ts";
import { ControllerRuntime, Store } from "../../runtime/mod.ts";
import { waitForResource } from "../../runtime/testing.ts";
import { blockControllers } from "./mod.ts";
import { runCommand } from "./run_command.ts";

/** How long a root test waits for one resource. */
export const WAIT_MS = 60_000;

/** Whether `p` exists. */
export const have = async (p: string) => await Deno.stat(p).then(() => true, () => false);
const addon = new URL("../../native-ops/machined_native_ops.node", import.meta.url);

/** Why the root tests cannot run here ("" when they can): not root, or `tools`/the addon missing. */
export async function rootSkipReason(tools: string[]): Promise<string> {
  const missing = [];
  for (const t of tools) if (!await have(t)) missing.push(t);
  if (!await have(addon.pathname)) missing.push("native-ops addon");
  return Deno.uid() !== 0 ? "not root" : missing.length ? `missing ${missing.join(", ")}` : "";
}

/**
 * The outer test: re-run `fileUrl` in a private mount namespace `ns` and
 * require exactly `passed` inner tests to pass (none failed or ignored).
 */
export function registerNamespacedRun(
  o: { ns: string; name: string; skip: string; fileUrl: string; passed: number },
): void {
  if (o.skip) console.log(`skipping ${o.ns} root tests: ${o.skip}`);
  Deno.test({
    name: o.name,
    ignore: o.skip !== "",
    fn: async () => {
      const r = await rerunInNamespace(o.ns, ["--mount", "--propagation", "private"], o.fileUrl, {
        timeoutMs: 300_000,
      });
      console.log(
        r.output.split("\n").filter((l) => / \.\.\. |passed|measured/.test(l)).join("\n"),
      );
      assert.equal(r.code, 0, r.output);
      assert.match(
        r.output,
        new RegExp(`\\| ${o.passed} passed \\| 0 failed \\(`),
        "all ran: none failed or ignored",
      );
    },
  });
}

/** The native process backend the root tests run commands through. */
export const proc = () => nativeProcessBackend();
/** Run a command, return its trimmed stdout (throws on a non-zero exit). */
export const run = async (...argv: string[]) => (await runCommand(proc(), argv)).stdout.trim();

/** `length` bytes of `path` from `offset` (default: to the end). */
export async function readAt(
  path: string,
  offset = 0,
  length?: number,
): Promise<Uint8Array<ArrayBuffer>> {
  using f = await Deno.open(path, { read: true });
  await f.seek(offset, Deno.SeekMode.Start);
  const size = length ?? (await f.stat()).size - offset;
  const buf = new Uint8Array(size);
  for (let got = 0; got < size;) got += (await f.read(buf.subarray(got))) ?? size;
  return buf;
}

/** Hex SHA-256 of `length` bytes of `path` from `offset` (default: the whole file). */
export async function sha256File(path: string, offset = 0, length?: number): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", await readAt(path, offset, length));
  return Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Write all of `data` at the file's position. */
export async function writeAll(f: Deno.FsFile, data: Uint8Array): Promise<void> {
  for (let off = 0; off < data.length;) off += await f.write(data.subarray(off));
}

/** A sparse image in a temp dir, attached as a loop device; `close` detaches and removes. */
export async function loopDisk(
  size: number,
  prefix: string,
  prepare?: (file: string) => Promise<void>,
) {
  const dir = await Deno.makeTempDir({ prefix });
  const file = `${dir}/disk.img`;
  {
    using f = await Deno.open(file, { create: true, write: true });
    await f.truncate(size);
  }
  await prepare?.(file);
  const dev = await run("losetup", "-f", "--show", "-P", file);
  return {
    dir,
    file,
    dev,
    async close() {
      await run("losetup", "-d", dev).catch((e) => console.error(e));
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** Options of one test "boot"; `wipe` is written to the config only when given. */
export type BootOptions = {
  wipe?: boolean;
  ephemeralFilesystem?: "ext4" | "xfs";
  /** Lazy-unmount on shutdown (a reset test may leave a busy mount). */
  detachOnShutdown?: boolean;
};

/** One "boot": a store and runtime with the block controllers on real backends. */
export function bootBlock(disk: string, dir: string, o: BootOptions = {}) {
  const store = new Store<ResourceSpecs>();
  const events = new EventBus();
  const runtime = new ControllerRuntime(store);
  const mounts = new NativeMountBackend();
  const controllers = blockControllers({
    block: new NativeBlockBackend(),
    mounts,
    process: proc(),
    events,
    resyncInterval: 2_000,
    stateMountPoint: `${dir}/system/state`,
    ephemeralMountPoint: `${dir}/var`,
    ephemeralFilesystem: o.ephemeralFilesystem,
  });
  for (const c of controllers) runtime.register(c);
  const yaml = `version: v1alpha1\nmachine:\n  hostname: n1\n  install:\n    disk: ${disk}\n` +
    (o.wipe === undefined ? "" : `    wipe: ${o.wipe}\n`);
  const parsed = parseMachineConfig(yaml, "t.yaml");
  if (!parsed.ok) throw new Error("bad test config");
  store.create({
    type: MACHINE_CONFIG,
    namespace: "config",
    id: MACHINE_CONFIG_ID,
    spec: { source: "test", config: parsed.config },
    owner: "test",
  });
  runtime.start();
  return {
    store,
    events,
    /** Wait until STATE and EPHEMERAL are mounted. */
    async mounted() {
      await waitForResource(store, MOUNT_STATUS, (r) => isStateMounted(r.spec), WAIT_MS);
      await waitForResource(
        store,
        MOUNT_STATUS,
        (r) => r.metadata.id === "EPHEMERAL" && r.spec.mounted,
        WAIT_MS,
      );
    },
    /** Stop the controllers and unmount what they mounted. */
    async shutdown() {
      await runtime.stop();
      for (const target of [`${dir}/var`, `${dir}/system/state`]) {
        if ((await mounts.mounts()).some((m) => m.mountPoint === target)) {
          await mounts.unmount(target, o.detachOnShutdown ? { detach: true } : undefined);
        }
      }
    },
  };
}
