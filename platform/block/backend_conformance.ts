/**
 * One suite both block backends must pass: the fake always, the native backend
 * as root on a loop device over a sparse file. Each case gets a fresh, zeroed
 * 64 MiB disk with 512-byte sectors and no partitions.
 * @module
 */
import assert from "node:assert/strict";
import { isSysError } from "../../native-ops/mod.ts";
import type { BlockBackend } from "./backend.ts";
import { GPT_ATTR, GPT_TYPE, type GptTable, randomGuid } from "./gpt.ts";

/** What each case receives. */
export interface BlockEnv {
  backend: BlockBackend;
  /** A block device path. */
  disk: string;
  /** Keep partition `number` open, as a mount would; returns the release. */
  hold(number: number): Promise<() => void>;
}

/** Harness hooks. */
export interface BlockHarness {
  setup(): Promise<BlockEnv>;
  teardown(env: BlockEnv): Promise<void>;
}

/** The size every harness provides. */
export const DISK_SIZE = 64 << 20;

const MIB = 2048; // sectors

/** A two-partition table used by the cases. */
export function sampleTable(): GptTable {
  return {
    diskGuid: randomGuid(),
    partitions: [
      {
        number: 1,
        type: GPT_TYPE.EFI_SYSTEM,
        uuid: randomGuid(),
        firstLba: MIB,
        lastLba: 9 * MIB - 1,
        name: "EFI",
        attributes: GPT_ATTR.REQUIRED,
      },
      {
        number: 2,
        type: GPT_TYPE.LINUX_FILESYSTEM,
        uuid: randomGuid(),
        firstLba: 9 * MIB,
        lastLba: 40 * MIB - 1,
        name: "STATE ✓",
        attributes: 0n,
      },
    ],
  };
}

/** A minimal ext4 superblock at 1024 with a label and UUID. */
export function syntheticExt4(label: string, uuid: Uint8Array): Uint8Array {
  const head = new Uint8Array(4096);
  const v = new DataView(head.buffer);
  v.setUint16(1024 + 56, 0xef53, true);
  v.setUint32(1024 + 96, 0x40 | 0x200, true);
  head.set(uuid, 1024 + 104);
  head.set(new TextEncoder().encode(label), 1024 + 120);
  return head;
}

type Case = [string, (env: BlockEnv) => Promise<void>];

/** The cases, in order. */
export const blockCases: Case[] = [
  ["reports geometry", async (env) => {
    const g = await env.backend.geometry(env.disk);
    assert.equal(g.size, DISK_SIZE);
    assert.equal(g.logicalSectorSize, 512);
    assert.ok(g.physicalSectorSize >= 512);
    assert.equal(g.readOnly, false);
    await assert.rejects(
      env.backend.geometry("/nonexistent/disk"),
      (e) => isSysError(e, "ENOENT"),
    );
  }],

  ["writes and reads back a GPT with both copies valid", async (env) => {
    assert.equal(await env.backend.readGpt(env.disk), undefined);
    const table = sampleTable();
    await env.backend.writeGpt(env.disk, table);
    await env.backend.writeGpt(env.disk, table);
    const got = await env.backend.readGpt(env.disk);
    assert.ok(got);
    assert.ok(got.primaryValid && got.backupValid);
    assert.deepEqual(got.table, table);
    assert.equal(got.geometry.firstUsableLba, 34);
    assert.equal(got.geometry.lastUsableLba, DISK_SIZE / 512 - 34);
    const mbr = await env.backend.read(env.disk, 446, 66);
    assert.equal(mbr[4], 0xee);
    assert.deepEqual([mbr[64], mbr[65]], [0x55, 0xaa]);
  }],

  ["falls back to the backup GPT when the primary is damaged", async (env) => {
    const table = sampleTable();
    await env.backend.writeGpt(env.disk, table);
    await env.backend.write(env.disk, 512 + 20, new Uint8Array([1, 2, 3]));
    const got = await env.backend.readGpt(env.disk);
    assert.ok(got);
    assert.equal(got.primaryValid, false);
    assert.equal(got.backupValid, true);
    assert.deepEqual(got.table, table);
  }],

  ["re-reads the partition table into the kernel", async (env) => {
    const table = sampleTable();
    await env.backend.writeGpt(env.disk, table);
    // BLKPG when the kernel lacks a GPT parser (CONFIG_EFI_PARTITION=n).
    assert.match(await env.backend.rereadPartitions(env.disk), /^BLK(RRPART|PG)$/);
    assert.deepEqual(await env.backend.kernelPartitions(env.disk), [
      { number: 1, start: MIB * 512, size: 8 * MIB * 512 },
      { number: 2, start: 9 * MIB * 512, size: 31 * MIB * 512 },
    ]);
  }],

  ["falls back to BLKPG while a partition is in use", async (env) => {
    const table = sampleTable();
    await env.backend.writeGpt(env.disk, table);
    await env.backend.rereadPartitions(env.disk);
    const release = await env.hold(1);
    try {
      table.partitions.push({
        number: 3,
        type: GPT_TYPE.LINUX_SWAP,
        uuid: randomGuid(),
        firstLba: 40 * MIB,
        lastLba: 48 * MIB - 1,
        name: "SWAP",
        attributes: 0n,
      });
      table.partitions[1].lastLba = 30 * MIB - 1;
      await env.backend.writeGpt(env.disk, table);
      assert.equal(await env.backend.rereadPartitions(env.disk), "BLKPG");
      assert.deepEqual((await env.backend.kernelPartitions(env.disk)).map((p) => p.size), [
        8 * MIB * 512,
        21 * MIB * 512,
        8 * MIB * 512,
      ]);
      table.partitions[0].lastLba = 5 * MIB - 1;
      await env.backend.writeGpt(env.disk, table);
      await assert.rejects(
        env.backend.rereadPartitions(env.disk),
        (e) => isSysError(e, "EBUSY") && e.op === "BLKPG_DEL_PARTITION",
      );
    } finally {
      release();
    }
  }],

  ["discards a range", async (env) => {
    await env.backend.write(env.disk, MIB * 512, new Uint8Array(4096).fill(0xab));
    await env.backend.discard(env.disk, MIB * 512, MIB * 512);
    const back = await env.backend.read(env.disk, MIB * 512, 4096);
    assert.ok(back.every((b) => b === 0));
    await assert.rejects(env.backend.discard(env.disk, 1, 512), (e) => isSysError(e, "EINVAL"));
  }],

  ["probes a superblock at an offset", async (env) => {
    const uuid = crypto.getRandomValues(new Uint8Array(16));
    await env.backend.write(env.disk, 9 * MIB * 512, syntheticExt4("STATE", uuid));
    const fs = await env.backend.probe(env.disk, 9 * MIB * 512);
    assert.equal(fs?.type, "ext4");
    assert.equal(fs?.label, "STATE");
    assert.equal(
      fs?.uuid.replaceAll("-", ""),
      Array.from(uuid, (b) => b.toString(16).padStart(2, "0")).join(""),
    );
    assert.equal(await env.backend.probe(env.disk, 0), undefined);
  }],
];

/**
 * Register every case as a Deno test named `<prefix>: <case>`. With `ignore`
 * the cases are still registered, and counted as ignored: the prefix should
 * say what they need.
 */
export function registerBlockConformance(
  prefix: string,
  harness: BlockHarness,
  options: { ignore?: boolean } = {},
): void {
  for (const [name, run] of blockCases) {
    Deno.test({ name: `${prefix}: ${name}`, ignore: options.ignore }, async () => {
      const env = await harness.setup();
      try {
        await run(env);
      } finally {
        await harness.teardown(env);
      }
    });
  }
}
