import assert from "node:assert/strict";
import { UpgradeRefusedError } from "../api/server/mod.ts";
import { EventBus } from "../events/mod.ts";
import { createLogger } from "../logs/mod.ts";
import { type KernelArgs, readKernelArgsRecord } from "../config/mod.ts";
import { NodeUpgrade } from "./node_upgrade.ts";
import { bootFake, chunked, imagedEsp, testBundle, testKeys } from "./testing.ts";

// Issue 32: machine.kernel.args lands in the entry an upgrade writes; the node's words do not move.

const admin = { name: "admin", role: "os:admin" };
const VERITY = `machined.root.verity=${"ab".repeat(32)},${"cd".repeat(32)},1`;
const LINE = `console=ttyS0 quiet loglevel=3 ${VERITY} -- /usr/bin/deno run /machined/main.js`;

async function upgradeWith(args: KernelArgs | undefined, cmdline = LINE) {
  const k = await testKeys();
  const esp = imagedEsp();
  const upgrade = new NodeUpgrade({
    esp,
    events: new EventBus(),
    logger: createLogger({ console: false }),
    cmdline: () => Promise.resolve("machined.slot=A"),
    trustedKeys: () => [k.publicPem],
    bootId: () => Promise.resolve("b1"),
    reboot: () => {},
    kernelArgs: () => args,
  });
  const b = await testBundle({
    key: k.signing,
    cmdline,
    files: [new Uint8Array(100).fill(1), new Uint8Array(100).fill(2), new Uint8Array(8192).fill(3)],
  });
  const done = upgrade.upgrade(chunked(b.bytes), { stage: true }, admin);
  return { esp, done };
}

function options(entry: string): string {
  return /^options (.*)$/m.exec(entry)![1];
}

Deno.test("an upgrade's entry carries machine.kernel.args before --, and the node's words unchanged", async () => {
  const plain = await upgradeWith(undefined);
  await plain.done;
  const base = options(plain.esp.text("/loader/entries/machined-b+3.conf")!);
  const args = { add: ["mitigations=auto,nosmt", "console=tty0"], remove: ["quiet", "loglevel"] };
  const n = await upgradeWith(args);
  await n.done;
  const line = options(n.esp.text("/loader/entries/machined-b+3.conf")!);
  const head = (l: string) => l.slice(0, l.indexOf(" -- ")).split(" ");
  const nodeWords = (l: string) =>
    head(l).filter((w) => w.startsWith("machined.") && !w.startsWith("machined.args="));
  assert.deepEqual(nodeWords(line), nodeWords(base));
  // What the args changed is recorded, so a later config change on the running node undoes it.
  assert.deepEqual(readKernelArgsRecord(line), {
    add: ["mitigations=auto,nosmt", "console=tty0"],
    remove: ["quiet", "loglevel=3"],
  });
  assert.equal(readKernelArgsRecord(base), undefined, "no args, no record");
  assert.equal(nodeWords(line).length, 3, "slot, root hash and verity");
  assert.equal(line.slice(line.indexOf(" -- ")), base.slice(base.indexOf(" -- ")), "init's argv");
  assert.ok(head(line).includes("mitigations=auto,nosmt") && head(line).includes("console=tty0"));
  assert.ok(head(line).includes("console=ttyS0"), "the image's console stays");
  assert.ok(!head(line).includes("quiet") && !head(line).some((w) => w.startsWith("loglevel=")));
  assert.deepEqual(
    head(line).filter((w) => !w.startsWith("machined.")),
    ["console=ttyS0", "mitigations=auto,nosmt", "console=tty0"],
  );
  assert.equal(bootFake(n.esp)!.slot, "B");
});

Deno.test("args that would push the line past COMMAND_LINE_SIZE refuse the upgrade before a byte is written", async () => {
  const add = Array.from({ length: 10 }, (_, i) => `x${i}=${"y".repeat(240)}`);
  const n = await upgradeWith({ add, remove: [] });
  const before = new Map(n.esp.files);
  const e = await n.done.then(() => undefined, (e) => e);
  assert.ok(e instanceof UpgradeRefusedError, String(e));
  assert.equal(e.code, "failed-precondition");
  assert.match(e.message, /COMMAND_LINE_SIZE/);
  assert.match(e.message, /kernel-args/);
  assert.deepEqual([...n.esp.files.keys()].sort(), [...before.keys()].sort());
});
