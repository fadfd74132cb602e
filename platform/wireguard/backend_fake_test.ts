import assert from "node:assert/strict";
import { FakeWireguardBackend } from "./backend_fake.ts";
import { WIREGUARD_CONFORMANCE } from "./backend_conformance.ts";
import { generatePrivateKey, publicKeyOf } from "./keys.ts";

for (const [name, run] of Object.entries(WIREGUARD_CONFORMANCE)) {
  Deno.test(`fake conformance: ${name}`, async () => {
    const backend = new FakeWireguardBackend();
    backend.addDevice("wgt0");
    await run({ backend, device: "wgt0" });
  });
}

Deno.test("an injected fault fails that call once, and records the device name only", async () => {
  const b = new FakeWireguardBackend();
  b.addDevice("wg0");
  b.faults.failNext("show", "EIO");
  await assert.rejects(() => b.show("wg0"), /EIO/);
  assert.ok(await b.show("wg0"));
  assert.deepEqual(b.faults.calls.map((c) => c.args), [["wg0"], ["wg0"]]);
});

Deno.test("a kept peer keeps its handshake and counters across a reconfigure", async () => {
  const b = new FakeWireguardBackend();
  b.addDevice("wg0");
  const peer = await publicKeyOf(generatePrivateKey());
  const s = { privateKey: generatePrivateKey(), peers: [{ publicKey: peer, allowedIps: [] }] };
  await b.configure("wg0", s);
  b.handshake("wg0", peer, 1_800_000_000);
  await b.configure("wg0", { ...s, listenPort: 51820 });
  const [p] = (await b.show("wg0"))!.peers;
  assert.deepEqual([p.lastHandshake, p.rxBytes, p.txBytes], [1_800_000_000, 148, 92]);
});
