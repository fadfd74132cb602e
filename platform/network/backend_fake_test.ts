import assert from "node:assert/strict";
import { isSysError } from "../../native-ops/mod.ts";
import { FakeNetworkBackend } from "./backend_fake.ts";
import { registerNetworkConformance, waitForEvent } from "./backend_conformance.ts";

registerNetworkConformance("fake network backend", {
  setup() {
    const backend = new FakeNetworkBackend({ kinds: ["vlan", "bond", "bridge", "wireguard"] });
    backend.addVethPair("mta0", "mtb0");
    return Promise.resolve({ backend, a: "mta0", b: "mtb0" });
  },
  teardown(env) {
    assert.equal((env.backend as FakeNetworkBackend).openSockets, 0, "sockets closed");
    return Promise.resolve();
  },
  kinds: new Set(["vlan", "bond", "bridge", "wireguard"]),
});

Deno.test("fake network: a kind the kernel lacks is EOPNOTSUPP; a VLAN follows its bond", async () => {
  const net = new FakeNetworkBackend({ kinds: ["bridge"] });
  await assert.rejects(
    net.createLink({ name: "bond0", kind: "bond" }),
    (e) => isSysError(e, "EOPNOTSUPP"),
  );
  const full = new FakeNetworkBackend();
  full.addVethPair("p0", "peer0");
  await full.createLink({ name: "bond0", kind: "bond", mode: "active-backup" });
  await full.createLink({ name: "bond0.7", kind: "vlan", parent: "bond0", vlanId: 7 });
  await full.setLinkMaster("p0", "bond0");
  await full.setLinkUp("peer0", true);
  await full.setLinkUp("bond0", true);
  await full.setLinkUp("bond0.7", true);
  const state = async () =>
    Object.fromEntries((await full.listLinks()).map((l) => [l.name, l.operstate]));
  assert.deepEqual(
    [(await state())["bond0"], (await state())["bond0.7"]],
    ["up", "up"],
  );
  await full.setLinkUp("peer0", false);
  assert.deepEqual(
    [(await state())["bond0"], (await state())["bond0.7"]],
    ["down", "lowerlayerdown"],
  );
});

Deno.test("fake network: injected faults surface as SysError and calls are recorded", async () => {
  const net = new FakeNetworkBackend();
  net.addLink({ name: "eth0", up: true });
  net.faults.failNext("addAddress", "EPERM");
  const spec = { link: "eth0", address: "192.0.2.1", prefixLen: 24 };
  await assert.rejects(net.addAddress(spec), (e) => isSysError(e, "EPERM"));
  await net.addAddress(spec);
  assert.equal(net.faults.callsOf("addAddress").length, 2);
});

Deno.test("fake network: removing a link emits its deletion and drops its state", async () => {
  const net = new FakeNetworkBackend();
  net.addVethPair("va", "vb");
  await net.setLinkUp("va", true);
  await net.addAddress({ link: "va", address: "10.1.0.1", prefixLen: 24 });
  const sub = net.subscribe(["link", "ipv4-address"]);
  try {
    net.removeLink("va");
    await waitForEvent(sub, (e) => e.kind === "address" && e.removed);
    await waitForEvent(sub, (e) => e.kind === "link" && e.removed && e.link.name === "vb");
    assert.deepEqual((await net.listLinks()).map((l) => l.name), ["lo"]);
    assert.deepEqual(await net.listAddresses(), []);
    assert.deepEqual(await net.listRoutes(), []);
  } finally {
    sub.close();
  }
});

Deno.test("fake network: a physical NIC comes up with an EUI-64 link-local address", async () => {
  const net = new FakeNetworkBackend();
  net.addLink({ name: "eth0", mac: "52:54:00:12:34:56" });
  await net.setLinkUp("eth0", true);
  const addrs = await net.listAddresses();
  assert.deepEqual(addrs.map((a) => a.address), ["fe80::5054:ff:fe12:3456"]);
  const links = await net.listLinks();
  assert.equal(links.find((l) => l.name === "eth0")?.operstate, "up");
});
