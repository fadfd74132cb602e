/**
 * Issue 28 (holes 4 and 5): a bundle refused at its head never opens the ESP
 * read-write; a stalled or overdue stream is refused at its deadline and the
 * ESP released clean; a full ESP and a non-string kid are typed refusals.
 * Deadlines are injected (a stream that never resolves, a fake clock): no
 * test depends on the wall clock's speed.
 */
import assert from "node:assert/strict";
import { CompactSign } from "jose";
import { BundleError, encodeBundleHead, hostCompatible, SlotError } from "../bundle/mod.ts";
import { blessBooted, installBundle } from "./slot_writer.ts";
import { isNoSpace } from "./install_guards.ts";
import { toRefusal } from "./refusal.ts";
import { bootFake, chunked, concat, imagedEsp, testBundle, testKeys } from "./testing.ts";

const machine = hostCompatible();

async function setup(version = "2.0.0") {
  const k = await testKeys();
  const esp = imagedEsp("1.0.0");
  const bundle = await testBundle({ key: k.signing, version });
  return { k, esp, bundle, deps: { esp, booted: "A" as const, keys: [k.trusted], machine } };
}

/** No file named `*.new` is left on the medium. */
function noLeftovers(esp: ReturnType<typeof imagedEsp>): void {
  assert.deepEqual([...esp.files.keys()].filter((p) => p.endsWith(".new")), []);
}

/** `bytes`, then a read that never settles (a sender that stopped sending). */
async function* stallAfter(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
  await new Promise<never>(() => {});
}

Deno.test("a bundle refused at its head (compatible, key, floor) never opens the ESP read-write", async () => {
  const { k, esp, deps } = await setup();
  const other = await testBundle({
    key: k.signing,
    compatible: { arch: machine.arch === "x86_64" ? "aarch64" : "x86_64", board: "generic" },
  });
  await assert.rejects(
    installBundle(chunked(other.bytes, 500), deps),
    (e) => e instanceof BundleError && e.reason === "wrong-compatible",
  );
  const stranger = await testKeys();
  const unsigned = await testBundle({ key: stranger.signing });
  await assert.rejects(
    installBundle(chunked(unsigned.bytes, 500), deps),
    (e) => e instanceof BundleError && e.reason === "unknown-key",
  );
  const old = await testBundle({ key: k.signing, version: "0.9.0" });
  await assert.rejects(
    installBundle(chunked(old.bytes, 500), deps),
    (e) => e instanceof SlotError && e.reason === "downgrade",
  );
  assert.equal(esp.writeSessions, 0, "no write session was opened");
  assert.equal(esp.ops, 0);
});

Deno.test("a sender that stalls after the head is refused at the idle deadline; the ESP is released clean", async () => {
  const { esp, bundle, deps } = await setup();
  const head = bundle.bytes.length - bundle.files.reduce((n, f) => n + f.length, 0);
  const source = stallAfter(bundle.bytes.slice(0, head + 12));
  const refused = await installBundle(source, { ...deps, idleMs: 1 }).catch((e) => e);
  assert.ok(refused instanceof BundleError && refused.reason === "stalled", String(refused));
  assert.match(refused.message, /idle deadline/);
  assert.equal(toRefusal(refused)?.code, "deadline-exceeded");
  noLeftovers(esp);
  assert.equal(bootFake(esp)!.slot, "A", "nothing armed");
  // The ESP is free again: bless (here a no-op on a blessed slot) runs at once.
  assert.equal(await blessBooted(esp, "A"), false);
});

Deno.test("a sender that trickles past the overall deadline is refused at it (fake clock)", async () => {
  const { esp, bundle, deps } = await setup();
  let clock = 0;
  async function* trickle() {
    for (let at = 0; at < bundle.bytes.length; at += 100) {
      clock += 1_000; // every chunk "takes" a second
      yield bundle.bytes.slice(at, at + 100);
    }
  }
  const limit = 5_000;
  const refused = await installBundle(trickle(), {
    ...deps,
    deadlineMs: limit,
    now: () => clock,
  }).catch((e) => e);
  assert.ok(refused instanceof BundleError && refused.reason === "stalled", String(refused));
  assert.match(refused.message, /overall deadline/);
  assert.equal(clock, limit, "refused at the limit, not one chunk later");
  noLeftovers(esp);
  // The same stream under a deadline it meets installs.
  clock = 0;
  const ok = await installBundle(trickle(), {
    ...deps,
    esp: imagedEsp("1.0.0"),
    deadlineMs: 1e9,
    now: () => clock,
  });
  assert.equal(ok.plan.target, "B");
});

Deno.test("a full ESP is SlotError no-space (resource-exhausted), its *.new removed", async () => {
  const { esp, bundle, deps } = await setup();
  let used = 0;
  for (const b of esp.files.values()) used += b.length;
  esp.capacity = used + bundle.files[0].length + 10; // room for the first file only
  const refused = await installBundle(chunked(bundle.bytes, 500), deps).catch((e) => e);
  assert.ok(refused instanceof SlotError && refused.reason === "no-space", String(refused));
  assert.equal(toRefusal(refused)?.code, "resource-exhausted");
  noLeftovers(esp);
  assert.equal(bootFake(esp)!.slot, "A");
});

Deno.test("isNoSpace: ENOSPC and EDQUOT by code or by the OS error number", () => {
  assert.ok(isNoSpace(Object.assign(new Error("x"), { code: "EDQUOT" })));
  assert.ok(isNoSpace(new Error("No space left on device (os error 28)")));
  assert.ok(isNoSpace(new Error("Disk quota exceeded (os error 122)")));
  assert.ok(!isNoSpace(new Error("Input/output error (os error 5)")));
  assert.ok(!isNoSpace("ENOSPC"));
});

Deno.test("a signature header whose kid is not a string is unknown-key, never a TypeError", async () => {
  const { k, esp, bundle, deps } = await setup();
  for (const kid of [7, { a: 1 }, null, undefined]) {
    const jws = await new CompactSign(new TextEncoder().encode(JSON.stringify(bundle.manifest)))
      .setProtectedHeader({ alg: "EdDSA", typ: "machined-bundle+jws", ...{ kid } } as never)
      .sign(k.signing.privateKey);
    const bytes = concat([encodeBundleHead(jws), ...bundle.files]);
    const refused = await installBundle(chunked(bytes, 500), deps).catch((e) => e);
    assert.ok(refused instanceof BundleError && refused.reason === "unknown-key", String(refused));
    assert.match(refused.message, /key id string is required/);
    assert.equal(toRefusal(refused)?.code, "permission-denied");
  }
  assert.equal(esp.writeSessions, 0);
});

Deno.test("a sender announcing another size than the head promises is refused before any write", async () => {
  const { esp, bundle, deps } = await setup();
  for (
    const [announced, reason] of [[bundle.bytes.length - 1, "truncated"], [
      bundle.bytes.length + 1,
      "trailing-bytes",
    ]] as const
  ) {
    const refused = await installBundle(chunked(bundle.bytes, 500), {
      ...deps,
      expectedSize: announced,
    })
      .catch((e) => e);
    assert.ok(refused instanceof BundleError && refused.reason === reason, String(refused));
    assert.match(refused.message, /announced/);
  }
  assert.equal(esp.writeSessions, 0);
  const ok = await installBundle(chunked(bundle.bytes, 500), {
    ...deps,
    expectedSize: bundle.bytes.length,
  });
  assert.equal(ok.plan.target, "B");
});
