import assert from "node:assert/strict";
import { planPartitionSync } from "./partition_sync.ts";
import { GPT_TYPE, type GptPartition } from "./gpt.ts";

const part = (number: number, firstLba: number, lastLba: number): GptPartition => ({
  number,
  firstLba,
  lastLba,
  type: GPT_TYPE.LINUX_FILESYSTEM,
  uuid: crypto.randomUUID(),
  name: "",
  attributes: 0n,
});

Deno.test("partition sync: keeps matches, deletes changes before adding", () => {
  const kernel = [
    { number: 1, start: 2048 * 512, size: 2048 * 512 },
    { number: 2, start: 4096 * 512, size: 2048 * 512 },
    { number: 4, start: 9000 * 512, size: 10 * 512 },
  ];
  const table = [part(1, 2048, 4095), part(2, 4096, 8191), part(3, 8192, 8999)];
  assert.deepEqual(planPartitionSync(kernel, table, 512), [
    { op: "delete", number: 2 },
    { op: "delete", number: 4 },
    { op: "add", number: 2, start: 4096 * 512, size: 4096 * 512 },
    { op: "add", number: 3, start: 8192 * 512, size: 808 * 512 },
  ]);
  assert.deepEqual(planPartitionSync(kernel.slice(0, 1), table.slice(0, 1), 512), []);
});
