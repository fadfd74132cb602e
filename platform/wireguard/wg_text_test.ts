import assert from "node:assert/strict";
import { configText, parseDump } from "./wg_text.ts";

Deno.test("the syncconf text lists the interface and each peer, wg-quick keys left out", () => {
  assert.equal(
    configText({
      privateKey: "K",
      listenPort: 51820,
      peers: [
        {
          publicKey: "P",
          presharedKey: "S",
          endpoint: "e:1",
          allowedIps: ["10.0.0.2/32", "fd00::/64"],
          persistentKeepalive: 25,
        },
        { publicKey: "Q", allowedIps: [] },
      ],
    }),
    "[Interface]\nPrivateKey = K\nListenPort = 51820\n\n[Peer]\nPublicKey = P\nPresharedKey = S\n" +
      "Endpoint = e:1\nAllowedIPs = 10.0.0.2/32, fd00::/64\nPersistentKeepalive = 25\n\n" +
      "[Peer]\nPublicKey = Q\n",
  );
});

Deno.test("a dump parses with its secret columns dropped", () => {
  const dump = "PRIVATE\tPUB\t51820\toff\n" +
    "PA\tPSK\t10.0.0.2:51820\t10.8.0.2/32,192.168.50.0/24\t1800000000\t1024\t2048\t25\n" +
    "PB\t(none)\t(none)\t(none)\t0\t0\t0\toff\n";
  const s = parseDump(dump);
  assert.deepEqual(s, {
    publicKey: "PUB",
    listenPort: 51820,
    peers: [
      {
        publicKey: "PA",
        endpoint: "10.0.0.2:51820",
        allowedIps: ["10.8.0.2/32", "192.168.50.0/24"],
        lastHandshake: 1_800_000_000,
        rxBytes: 1024,
        txBytes: 2048,
        persistentKeepalive: 25,
      },
      { publicKey: "PB", allowedIps: [], lastHandshake: 0, rxBytes: 0, txBytes: 0 },
    ],
  });
  assert.ok(!JSON.stringify(s).includes("PRIVATE") && !JSON.stringify(s).includes("PSK"));
});

Deno.test("garbage is a TypeError that quotes nothing of the input", () => {
  assert.throws(() => parseDump(""), TypeError);
  assert.throws(() => parseDump("SECRET\tx\n"), (e) => !String(e).includes("SECRET"));
  assert.throws(
    () => parseDump("a\tb\t1\toff\nSECRET\tx\ty\tz\tnan\t0\t0\toff\n"),
    (e) => !String(e).includes("SECRET"),
  );
});
