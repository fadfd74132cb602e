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

Deno.test("fake network: DHCPv6 to ff02::1:2 reaches the peer's port 547; the reply to the link-local source comes back", async () => {
  const net = new FakeNetworkBackend();
  net.addVethPair("c0", "s0");
  const client = net.openDhcp6Socket("c0");
  const server = net.openDhcp6Socket("s0", 547);
  const v4 = net.openDhcpSocket("s0", 547);
  const otherPort = net.openDhcp6Socket("s0", 548);
  try {
    await net.setLinkUp("c0", true);
    await assert.rejects(
      client.send(Uint8Array.of(1), "ff02::1:2", 547),
      (e) => isSysError(e, "EADDRNOTAVAIL"),
      "the peer is down: no carrier, so no link-local address yet",
    );
    await net.setLinkUp("s0", true);
    const ll = async (link: string) => {
      const index = (await net.listLinks()).find((l) => l.name === link)!.index;
      return (await net.listAddresses()).find((a) => a.index === index && a.scope === 253)!.address;
    };
    const [cll, sll] = [await ll("c0"), await ll("s0")];
    assert.ok(cll.startsWith("fe80::") && sll.startsWith("fe80::") && cll !== sll);

    await client.send(Uint8Array.of(1, 2, 3), "ff02::1:2", 547);
    const got = await server.receive(1000);
    assert.deepEqual(got, { data: Uint8Array.of(1, 2, 3), from: cll, port: 546 });
    assert.equal(await v4.receive(20), undefined, "an IPv4 socket on the same port sees nothing");
    assert.equal(await otherPort.receive(20), undefined, "nor does another port");

    await server.send(Uint8Array.of(7), got!.from, got!.port);
    assert.deepEqual(await client.receive(1000), { data: Uint8Array.of(7), from: sll, port: 547 });
    await server.send(Uint8Array.of(8), "fe80::dead", 546);
    await server.send(Uint8Array.of(9), "ff05::1:3", 546);
    assert.equal(await client.receive(20), undefined, "a stranger's address and a site group drop");
    await assert.rejects(
      server.send(Uint8Array.of(1), "10.0.0.1", 546),
      (e) => isSysError(e, "EAFNOSUPPORT"),
    );
    await assert.rejects(
      v4.send(Uint8Array.of(1), "ff02::1:2", 547),
      (e) => isSysError(e, "EAFNOSUPPORT"),
    );

    await net.deleteAddress({ link: "c0", address: cll, prefixLen: 64 });
    await assert.rejects(
      client.send(Uint8Array.of(1), "ff02::1:2", 547),
      (e) => isSysError(e, "EADDRNOTAVAIL"),
    );
  } finally {
    for (const s of [client, server, v4, otherPort]) s.close();
  }
  assert.equal(net.openSockets, 0);
});
