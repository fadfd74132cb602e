/**
 * `machinectl get wireguardstatus` and `get dhcp6lease` against the real apid and machined-side
 * server, for every role: the two resources issue 30 added that only QEMU steps read before. The
 * resources are published straight into the store (their controllers have tests of their own).
 */
import assert from "node:assert/strict";
import { startApiFixture } from "../api/testing.ts";
import type { Role } from "../pki/mod.ts";
import { DHCP6_LEASE, WIREGUARD_STATUS } from "../resources/mod.ts";
import { clientConfig, runCli } from "./testing.ts";

const PEER = "o3J57xUecL0vEvUGqoqsZ+PebZbccn1X0/Xs/ayZvWQ=";
const NODE = "NSKu4v6eIlwESax3RYYHbxaI98QxxYV4QC6utr5zW1c=";

Deno.test("machinectl get wireguardstatus and dhcp6lease: table and json, for every role", async () => {
  const f = await startApiFixture();
  try {
    f.store.create({
      type: WIREGUARD_STATUS,
      namespace: "network",
      id: "wg0",
      owner: "test",
      spec: {
        name: "wg0",
        publicKey: NODE,
        listenPort: 51820,
        configured: true,
        peers: [{
          publicKey: PEER,
          endpoint: "198.51.100.7:51820",
          allowedIps: ["10.98.0.2/32"],
          lastHandshake: "2026-12-06T16:58:49Z",
          rxBytes: 4364,
          txBytes: 4452,
        }],
        error: "",
        driftReapplies: 0,
      },
    });
    f.store.create({
      type: DHCP6_LEASE,
      namespace: "network",
      id: "bond0",
      owner: "test",
      spec: {
        link: "bond0",
        state: "bound",
        address: "fd98::1a2",
        prefixLen: 128,
        server: "00:03:00:01:02:00:00:00:00:01",
        dnsServers: ["fd99::1"],
        validSeconds: 3600,
        expiresAt: "2026-12-06T18:00:00Z",
      },
    });
    for (const role of ["os:reader", "os:operator", "os:admin"] as Role[]) {
      const config = await clientConfig(f, role);
      const wg = await runCli(config, "get", "wg");
      assert.equal(wg.code, 0, `${role}: ${wg.err}`);
      const [head, row] = wg.out.trim().split("\n");
      assert.match(head, /PUBLIC KEY\s+PORT\s+CONFIGURED\s+PEERS\s+HANDSHAKES\s+RX\s+TX/);
      assert.ok(row.includes(NODE) && /\s51820\s+true\s+1\s+o3J57xUe:2026-12-06/.test(row), row);
      assert.match(row, /\s4364\s+4452\s+0/);
      const lease = await runCli(config, "get", "dhcp6lease");
      assert.equal(lease.code, 0, `${role}: ${lease.err}`);
      assert.match(lease.out, /bond0\s.*bound\s+fd98::1a2\/128\s+fd99::1\s/);
    }
    const config = await clientConfig(f, "os:reader");
    const j = await runCli(config, "get", "wireguardstatus", "wg0", "-o", "json");
    assert.equal(j.code, 0, j.err);
    const json = JSON.parse(j.out);
    const spec = (Array.isArray(json) ? json[0] : json).spec;
    assert.deepEqual(spec.peers[0].allowedIps, ["10.98.0.2/32"]);
    assert.doesNotMatch(j.out, /private|preshared/i, "only public keys are ever in the status");
  } finally {
    await f.close();
  }
});
