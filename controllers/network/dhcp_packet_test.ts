import assert from "node:assert/strict";
import {
  classfulPrefix,
  decodeDhcp,
  DhcpDecodeError,
  type DhcpMessage,
  encodeDhcp,
  maskToPrefix,
} from "./dhcp_packet.ts";

const hex = (s: string) =>
  new Uint8Array(s.replace(/\s+/g, "").match(/../g)!.map((x) => parseInt(x, 16)));
const toHex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");

/** A BOOTP header written out field by field, independently of the encoder. */
function header(fields: {
  op: number;
  xid: string;
  flags: string;
  ciaddr?: string;
  yiaddr?: string;
  siaddr?: string;
  mac: string;
}): string {
  const z = (n: number) => "00".repeat(n);
  return fields.op.toString(16).padStart(2, "0") + "0106" + "00" + fields.xid + "0000" +
    fields.flags + (fields.ciaddr ?? z(4)) + (fields.yiaddr ?? z(4)) + (fields.siaddr ?? z(4)) +
    z(4) + fields.mac + z(10) + z(64) + z(128) + "63825363";
}

const MAC = "02:00:00:00:01:02";
const MAC_HEX = "020000000102";

Deno.test("DISCOVER encodes to the golden bytes (padded to 300)", () => {
  const m: DhcpMessage = {
    op: 1,
    type: "discover",
    xid: 0x12345678,
    secs: 0,
    broadcast: true,
    ciaddr: "0.0.0.0",
    yiaddr: "0.0.0.0",
    siaddr: "0.0.0.0",
    giaddr: "0.0.0.0",
    chaddr: MAC,
    options: { parameterList: [1, 3, 6, 12, 15, 51, 54, 58, 59], maxMessageSize: 1500 },
  };
  const golden = header({ op: 1, xid: "12345678", flags: "8000", mac: MAC_HEX }) +
    "350101" + // 53: discover
    "390205dc" + // 57: 1500
    "3709010306 0c0f33363a3b".replace(/ /g, "") + // 55: 1 3 6 12 15 51 54 58 59
    "ff";
  const bytes = encodeDhcp(m);
  assert.equal(bytes.length, 300);
  assert.equal(toHex(bytes.subarray(0, golden.length / 2)), golden);
  assert.ok(bytes.subarray(golden.length / 2).every((x) => x === 0), "zero padding");
});

Deno.test("an ACK from the golden bytes decodes every option the client uses", () => {
  const ack = hex(
    header({
      op: 2,
      xid: "cafef00d",
      flags: "0000",
      yiaddr: "0a000032",
      siaddr: "0a000001",
      mac: MAC_HEX,
    }) +
      "350105" + // 53 ack
      "3604 0a000001" + // 54 server id
      "3304 00000e10" + // 51 lease 3600
      "3a04 00000708" + // 58 T1 1800
      "3b04 00000c4e" + // 59 T2 3150
      "0104 ffffff00" + // 1 mask
      "0308 0a000001 0a000002" + // 3 routers
      "0608 01010101 08080808" + // 6 dns
      "0c06 6e6f64652d31" + // 12 "node-1"
      "0f08 6578616d706c6500" + // 15 "example\0" (trailing NUL dropped)
      "0000" + // pads
      "e0 02 abcd" + // 224: unknown, kept raw
      "ff",
  );
  const m = decodeDhcp(ack);
  assert.equal(m.op, 2);
  assert.equal(m.type, "ack");
  assert.equal(m.xid, 0xcafef00d);
  assert.equal(m.broadcast, false);
  assert.equal(m.yiaddr, "10.0.0.50");
  assert.equal(m.siaddr, "10.0.0.1");
  assert.equal(m.chaddr, MAC);
  const { other, ...typed } = m.options;
  assert.deepEqual(typed, {
    serverId: "10.0.0.1",
    leaseTime: 3600,
    renewalTime: 1800,
    rebindingTime: 3150,
    subnetMask: "255.255.255.0",
    routers: ["10.0.0.1", "10.0.0.2"],
    dnsServers: ["1.1.1.1", "8.8.8.8"],
    hostname: "node-1",
    domainName: "example",
  });
  assert.deepEqual([...other!], [[224, new Uint8Array([0xab, 0xcd])]]);
});

Deno.test("encode then decode is the identity for every typed option", () => {
  const m: DhcpMessage = {
    op: 2,
    type: "offer",
    xid: 7,
    secs: 3,
    broadcast: true,
    ciaddr: "0.0.0.0",
    yiaddr: "192.168.1.9",
    siaddr: "192.168.1.1",
    giaddr: "0.0.0.0",
    chaddr: MAC,
    options: {
      subnetMask: "255.255.252.0",
      routers: ["192.168.1.1"],
      dnsServers: ["192.168.1.1"],
      hostname: "h",
      domainName: "lan",
      leaseTime: 0xffffffff,
      serverId: "192.168.1.1",
      renewalTime: 10,
      rebindingTime: 20,
      requestedIp: "192.168.1.9",
      message: "hello",
      clientId: new Uint8Array([1, 2, 0, 0, 0, 1, 2]),
      other: new Map([[250, new Uint8Array(300).fill(7)]]),
    },
  };
  assert.deepEqual(decodeDhcp(encodeDhcp(m)), m);
});

Deno.test("malformed packets are typed decode errors with the offset", () => {
  assert.throws(() => decodeDhcp(new Uint8Array(100)), DhcpDecodeError);
  const good = encodeDhcp({
    op: 2,
    type: "nak",
    xid: 1,
    secs: 0,
    broadcast: false,
    ciaddr: "0.0.0.0",
    yiaddr: "0.0.0.0",
    siaddr: "0.0.0.0",
    giaddr: "0.0.0.0",
    chaddr: MAC,
    options: {},
  });
  const noMagic = good.slice();
  noMagic[236] = 0;
  assert.throws(() => decodeDhcp(noMagic), (e: unknown) => {
    assert.ok(e instanceof DhcpDecodeError);
    assert.equal(e.offset, 236);
    return true;
  });
  const noType = good.slice();
  noType[240] = 0xff; // END before option 53
  assert.throws(() => decodeDhcp(noType), /message type/);
  const overrun = good.slice(0, 243);
  overrun[241] = 9;
  assert.throws(() => decodeDhcp(overrun), /overruns/);
});

Deno.test("netmask and classful prefix lengths", () => {
  assert.equal(maskToPrefix("255.255.255.0"), 24);
  assert.equal(maskToPrefix("255.255.240.0"), 20);
  assert.equal(maskToPrefix("0.0.0.0"), 0);
  assert.equal(maskToPrefix("255.255.255.255"), 32);
  assert.equal(maskToPrefix("255.0.255.0"), undefined);
  assert.equal(classfulPrefix("10.1.2.3"), 8);
  assert.equal(classfulPrefix("172.16.0.1"), 16);
  assert.equal(classfulPrefix("192.168.0.1"), 24);
});
