/**
 * Privileged: the block conformance suite against real ioctls on a loop
 * device over a sparse file in a temp dir (needs root for losetup and BLKPG),
 * plus ext4 made on a partition and probed. Loop devices are detached after.
 */
import assert from "node:assert/strict";
import { NativeBlockBackend } from "./backend_native.ts";
import {
  type BlockEnv,
  DISK_SIZE,
  registerBlockConformance,
  sampleTable,
} from "./backend_conformance.ts";

const root = Deno.uid() === 0;
const addon = new URL("../../native-ops/machined_native_ops.node", import.meta.url);
const haveAddon = await Deno.stat(addon).then(() => true, () => false);
const haveLosetup = await Deno.stat("/usr/sbin/losetup").then(() => true, () => false) ||
  await Deno.stat("/sbin/losetup").then(() => true, () => false);
const skip = !root ? "not root" : !haveAddon ? "addon not built" : !haveLosetup ? "no losetup" : "";
if (skip) console.log(`skipping native block root tests: ${skip}`);

async function run(cmd: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  const err = new TextDecoder().decode(out.stderr);
  assert.ok(out.success, `${cmd} ${args.join(" ")}: ${err}`);
  return new TextDecoder().decode(out.stdout).trim();
}

/** Wait (bounded) for devtmpfs to create a partition node. */
async function node(path: string): Promise<void> {
  for (let i = 0; i < 50; i++) {
    if (await Deno.stat(path).then(() => true, () => false)) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${path} did not appear`);
}

const files = new Map<string, string>();
const backend = skip ? undefined : new NativeBlockBackend();

async function setup(): Promise<BlockEnv> {
  const dir = await Deno.makeTempDir({ prefix: "blk-" });
  const file = `${dir}/disk.img`;
  const f = await Deno.open(file, { create: true, write: true });
  await f.truncate(DISK_SIZE);
  f.close();
  const disk = await run("losetup", ["-f", "--show", "-P", file]);
  files.set(disk, dir);
  return {
    backend: backend!,
    disk,
    async hold(number) {
      await node(`${disk}p${number}`);
      const fh = await Deno.open(`${disk}p${number}`, { read: true });
      return () => fh.close();
    },
  };
}

async function teardown(env: BlockEnv): Promise<void> {
  await run("losetup", ["-d", env.disk]);
  await Deno.remove(files.get(env.disk)!, { recursive: true });
  files.delete(env.disk);
}

registerBlockConformance(
  "native block backend (loop device; needs root, the addon, losetup)",
  { setup, teardown },
  { ignore: skip !== "" },
);

Deno.test({
  name: "native block: probes ext4 made on a partition (needs root, the addon, losetup)",
  ignore: skip !== "",
}, async () => {
  const env = await setup();
  try {
    const table = sampleTable();
    await backend!.writeGpt(env.disk, table);
    await backend!.rereadPartitions(env.disk);
    const part = `${env.disk}p2`;
    await node(part);
    await run("mkfs.ext4", ["-q", "-L", "STATE", part]);
    const uuid = await run("blkid", ["-s", "UUID", "-o", "value", part]);
    const want = { type: "ext4", label: "STATE", uuid };
    assert.deepEqual(await backend!.probe(part), want);
    const offset = table.partitions[1].firstLba * 512;
    assert.deepEqual(await backend!.probe(env.disk, offset), want);
    const g = await backend!.geometry(part);
    assert.equal(g.size, (table.partitions[1].lastLba - table.partitions[1].firstLba + 1) * 512);
  } finally {
    await teardown(env);
  }
});
