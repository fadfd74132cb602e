/**
 * A node that boots signed UKIs (an image built with `--secure-boot-keys`)
 * refuses bundles before reading them: a bundle carries a kernel and an
 * initramfs, not a UKI signed with the owner's db key, so the slot it wrote
 * would be refused by the firmware (issue 28). The refusal is typed, maps to
 * FailedPrecondition, and leaves the ESP as it was without a write session.
 */
import assert from "node:assert/strict";
import { hostCompatible, SlotError } from "../bundle/mod.ts";
import { entryBootsUki, loaderEntry, ukiLoaderEntry } from "../layout/mod.ts";
import type { FakeEspBackend } from "../platform/esp/mod.ts";
import { installBundle } from "./slot_writer.ts";
import { toRefusal } from "./refusal.ts";
import { chunked, imagedEsp, testBundle, testKeys, ukiEsp } from "./testing.ts";

function snapshot(esp: FakeEspBackend): Map<string, string> {
  return new Map([...esp.files].map(([p, b]) => [p, new TextDecoder().decode(b)]));
}

Deno.test("a UKI entry is told from a linux + initrd one", () => {
  assert.equal(entryBootsUki(ukiLoaderEntry("A", { generation: 1 })), true);
  assert.equal(
    entryBootsUki(loaderEntry("A", "machined.slot=A", { generation: 1 })),
    false,
  );
  assert.equal(entryBootsUki("title efi x\noptions efi=debug\n"), false, "efi only as a key");
});

Deno.test("a node booted from a signed UKI refuses a trusted bundle (signed-boot) before any write", async () => {
  const k = await testKeys();
  const esp = ukiEsp();
  const before = snapshot(esp);
  const bundle = await testBundle({ key: k.signing, version: "2.0.0" });
  const refused = await installBundle(chunked(bundle.bytes, 4096), {
    esp,
    booted: "A",
    keys: [k.trusted],
    machine: hostCompatible(),
  }).catch((e) => e);
  assert.ok(refused instanceof SlotError && refused.reason === "signed-boot", String(refused));
  assert.match(refused.message, /slot A boots a signed UKI/);
  assert.match(refused.message, /--secure-boot-keys/);
  assert.equal(toRefusal(refused)?.code, "failed-precondition");
  assert.equal(esp.writeSessions, 0, "no write session was opened");
  assert.deepEqual(snapshot(esp), before);
});

Deno.test("the same bundle still installs on a node booted from linux + initrd", async () => {
  const k = await testKeys();
  const esp = imagedEsp("1.0.0");
  const bundle = await testBundle({ key: k.signing, version: "2.0.0" });
  const done = await installBundle(chunked(bundle.bytes, 4096), {
    esp,
    booted: "A",
    keys: [k.trusted],
    machine: hostCompatible(),
  });
  assert.equal(done.plan.target, "B");
});
