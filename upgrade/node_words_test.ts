import assert from "node:assert/strict";
import { UpgradeRefusedError } from "../api/server/mod.ts";
import { EventBus } from "../events/mod.ts";
import { createLogger } from "../logs/mod.ts";
import { NodeUpgrade } from "./node_upgrade.ts";
import { bootedSlot } from "./entries.ts";
import type { FakeEspBackend } from "../platform/esp/mod.ts";
import { bootFake, chunked, imagedEsp, testBundle, testKeys } from "./testing.ts";

// Issue 28, holes 1 and 2: the node owns every word that says which slot booted and which
// root it mounts, and the loader entry's structure; a signed bundle supplies data only.

const admin = { name: "admin", role: "os:admin" };
const VERITY = `machined.root.verity=${"ab".repeat(32)},${"cd".repeat(32)},1`;

async function nodeOn(cmdline: string) {
  const k = await testKeys();
  const esp = imagedEsp();
  const upgrade = new NodeUpgrade({
    esp,
    events: new EventBus(),
    logger: createLogger({ console: false }),
    cmdline: () => Promise.resolve(cmdline),
    trustedKeys: () => [k.publicPem],
    bootId: () => Promise.resolve("b1"),
    reboot: () => {},
  });
  return { k, esp, upgrade };
}

function snapshot(esp: FakeEspBackend): Map<string, string> {
  return new Map([...esp.files].map(([p, b]) => [p, new TextDecoder().decode(b)]));
}

async function refusal(p: Promise<unknown>): Promise<UpgradeRefusedError> {
  const e = await p.then(() => undefined, (e) => e);
  assert.ok(e instanceof UpgradeRefusedError, `refused as an UpgradeRefusedError: ${e}`);
  return e;
}

Deno.test("a signed bundle whose command line names a slot is refused before a byte is written, and never makes the node write its booted slot", async () => {
  for (
    const word of ["machined.slot=A", "machined.slot=B", "machined.root.sha256=" + "0".repeat(64)]
  ) {
    const n = await nodeOn("console=ttyS0 machined.slot=B");
    const before = snapshot(n.esp);
    const b = await testBundle({
      key: n.k.signing,
      cmdline: `console=ttyS0 ${word} -- /usr/bin/deno run /machined/main.js`,
      unchecked: true,
    });
    const e = await refusal(n.upgrade.upgrade(chunked(b.bytes), { stage: true }, admin));
    assert.equal(e.code, "invalid-argument");
    assert.match(e.message, /bad-cmdline/);
    assert.match(e.message, /the node's to write/);
    assert.deepEqual(snapshot(n.esp), before, `${word}: the ESP is unchanged`);
  }
});

Deno.test("a newline or any control character in a signed command line cannot add loader-entry lines", async () => {
  for (
    const cmdline of [
      "console=ttyS0\nlinux /B/evil",
      "console=ttyS0\rx",
      "a\tb",
      "caf\u00e9",
      "x\u007f",
    ]
  ) {
    const n = await nodeOn("machined.slot=A");
    const before = snapshot(n.esp);
    const b = await testBundle({ key: n.k.signing, cmdline, unchecked: true });
    const e = await refusal(n.upgrade.upgrade(chunked(b.bytes), { stage: true }, admin));
    assert.equal(e.code, "invalid-argument", JSON.stringify(cmdline));
    assert.match(e.message, /printable ASCII/);
    assert.deepEqual(snapshot(n.esp), before);
  }
});

Deno.test("the builder refuses what the node would refuse: no bundle is signed with a slot word", async () => {
  const k = await testKeys();
  await assert.rejects(
    testBundle({ key: k.signing, cmdline: "console=ttyS0 machined.slot=B" }),
    /bad-cmdline/,
  );
});

Deno.test("the entry an upgrade writes carries the node's slot and root words once, the bundle's verity tree and tunables as data", async () => {
  const n = await nodeOn("machined.slot=A");
  const b = await testBundle({
    key: n.k.signing,
    cmdline: `console=ttyS0 machined.watchdog=30 ${VERITY} -- /usr/bin/deno run machined.slot=A`,
    files: [new Uint8Array(100).fill(1), new Uint8Array(100).fill(2), new Uint8Array(8192).fill(3)],
  });
  await n.upgrade.upgrade(chunked(b.bytes), { stage: true }, admin);
  const entry = n.esp.text("/loader/entries/machined-b+3.conf")!;
  const options = /^options (.*)$/m.exec(entry)![1];
  assert.equal(entry.split("\n").filter((l) => l.startsWith("linux ")).length, 1);
  assert.equal(bootedSlot(options), "B");
  const before = options.slice(0, options.indexOf(" -- ")).split(" ");
  assert.equal(before.filter((w) => w.startsWith("machined.slot=")).length, 1);
  assert.equal(before.filter((w) => w.startsWith("machined.root.verity=")).length, 1);
  assert.ok(before.includes(VERITY) && before.includes("machined.watchdog=30"), options);
  assert.equal(bootFake(n.esp)!.slot, "B");
});

Deno.test("a verity word that is malformed, repeated, or names more blocks than the root image holds is refused", async () => {
  for (
    const word of [
      "machined.root.verity=ab,cd,1",
      `${VERITY} ${VERITY}`,
      `machined.root.verity=${"ab".repeat(32)},${"cd".repeat(32)},100000`,
    ]
  ) {
    const n = await nodeOn("machined.slot=A");
    const before = snapshot(n.esp);
    const b = await testBundle({
      key: n.k.signing,
      cmdline: `console=ttyS0 ${word}`,
      unchecked: true,
    });
    const e = await refusal(n.upgrade.upgrade(chunked(b.bytes), { stage: true }, admin));
    assert.equal(e.code, "invalid-argument", word);
    assert.match(e.message, /bad-cmdline/);
    assert.deepEqual(snapshot(n.esp), before);
  }
});

Deno.test("a node whose command line names two slots does not know which it booted: upgrades are refused, nothing written", async () => {
  const n = await nodeOn(
    "console=ttyS0 machined.slot=B machined.root.sha256=" + "0".repeat(64) + " machined.slot=A",
  );
  assert.equal(await n.upgrade.booted(), undefined);
  const before = snapshot(n.esp);
  const b = await testBundle({ key: n.k.signing });
  const e = await refusal(n.upgrade.upgrade(chunked(b.bytes), { stage: true }, admin));
  assert.equal(e.code, "failed-precondition");
  assert.deepEqual(snapshot(n.esp), before);
});
