import assert from "node:assert/strict";
import {
  decodeDhcp6,
  DHCP6_MAX_OPTIONS,
  DHCP6_MAX_PACKET,
  DHCP6_OPT,
  DHCP6_TYPE,
  Dhcp6PacketError,
  duidLl,
  encodeDhcp6,
} from "./dhcp6_packet.ts";

const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
const bytes = (h: string) =>
  Uint8Array.from(h.replace(/\s/g, "").match(/../g)!, (x) => parseInt(x, 16));
const opt = (code: number, body: string) =>
  code.toString(16).padStart(4, "0") +
  (body.replace(/\s/g, "").length / 2).toString(16).padStart(4, "0") +
  body.replace(/\s/g, "");

const CLIENT = duidLl("52:54:00:12:34:56");

Deno.test("SOLICIT: header, client id (DUID-LL), elapsed time, ORO for DNS, an empty IA_NA", () => {
  const m = encodeDhcp6({
    type: DHCP6_TYPE.SOLICIT,
    transactionId: 0xabcdef,
    clientId: CLIENT,
    elapsed: 0,
    oro: [DHCP6_OPT.DNS_SERVERS],
    iaNa: { iaid: 1, t1: 0, t2: 0, addresses: [] },
    dnsServers: [],
  });
  assert.equal(
    hex(m),
    "01abcdef" + opt(1, "0003 0001 525400123456") + opt(8, "0000") + opt(6, "0017") +
      opt(3, "00000001 00000000 00000000"),
  );
});

Deno.test("REQUEST/RENEW carry the server id and the leased address in IAADDR", () => {
  const m = encodeDhcp6({
    type: DHCP6_TYPE.RENEW,
    transactionId: 1,
    clientId: CLIENT,
    serverId: bytes("00010001aabbccdd"),
    iaNa: { iaid: 1, t1: 0, t2: 0, addresses: [{ address: "fd77::10", preferred: 0, valid: 0 }] },
    dnsServers: [],
  });
  assert.equal(
    hex(m),
    "05000001" + opt(1, "0003 0001 525400123456") + opt(2, "00010001aabbccdd") +
      opt(
        3,
        "00000001 00000000 00000000" +
          opt(5, "fd770000000000000000000000000010 00000000 00000000"),
      ),
  );
  assert.throws(
    () =>
      encodeDhcp6({
        type: DHCP6_TYPE.RENEW,
        transactionId: 1,
        iaNa: {
          iaid: 1,
          t1: 0,
          t2: 0,
          addresses: [{ address: "10.0.0.1", preferred: 0, valid: 0 }],
        },
        dnsServers: [],
      }),
    TypeError,
  );
});

const REPLY = "07abcdef" + opt(1, "0003 0001 525400123456") + opt(2, "00010001aabbccdd") +
  opt(
    3,
    "00000001 0000003c 00000069" +
      opt(5, "fd770000000000000000000000000010 00000078 000000b4"),
  ) +
  opt(23, "fd770000000000000000000000000001 20014860486000000000000000008888") +
  opt(13, "0000" + "616c6c20676f6f64") + opt(99, "ff");

Deno.test("REPLY: IA_NA with T1/T2 and one address, DNS servers (option 23), status, unknown options skipped", () => {
  const m = decodeDhcp6(bytes(REPLY));
  assert.equal(m.type, DHCP6_TYPE.REPLY);
  assert.equal(m.transactionId, 0xabcdef);
  assert.equal(hex(m.clientId!), hex(CLIENT));
  assert.equal(hex(m.serverId!), "00010001aabbccdd");
  assert.deepEqual(m.iaNa, {
    iaid: 1,
    t1: 60,
    t2: 105,
    addresses: [{ address: "fd77::10", preferred: 120, valid: 180 }],
  });
  assert.deepEqual(m.dnsServers, ["fd77::1", "2001:4860:4860::8888"]);
  assert.deepEqual(m.status, { code: 0, message: "all good" });
});

Deno.test("an address the server refuses (IAADDR status NoBinding) is not kept; an IA status is", () => {
  const m = decodeDhcp6(bytes(
    "07000001" +
      opt(
        3,
        "00000001 00000000 00000000" +
          opt(5, "fd770000000000000000000000000010 00000000 00000000" + opt(13, "0003")) +
          opt(13, "0002" + "6e6f2061646472"),
      ),
  ));
  assert.deepEqual(m.iaNa?.addresses, []);
  assert.deepEqual(m.iaNa?.status, { code: 2, message: "no addr" });
});

Deno.test("malformed packets are refused with the offset and reason", () => {
  const cases: Array<[string, Uint8Array, RegExp]> = [
    ["short header", bytes("0700"), /byte 0: shorter than the 4-byte header/],
    ["oversized", new Uint8Array(DHCP6_MAX_PACKET + 1), /4097 bytes, more than 4096/],
    ["truncated option header", bytes("07000001 0001"), /byte 4: truncated option header/],
    [
      "option past the end",
      bytes("07000001 0017 0020 fd77"),
      /byte 4: option 23 of 32 bytes runs past/,
    ],
    ["DNS not 16-byte multiple", bytes("07000001" + opt(23, "fd77")), /multiple of 16/],
    ["short IA_NA", bytes("07000001" + opt(3, "00000001")), /IA_NA shorter than 12/],
    [
      "IAADDR past its IA_NA",
      bytes("07000001" + "0003 0010 00000001 00000000 00000000 0005 0018"),
      /option 5 of 24 bytes runs past/,
    ],
    [
      "short IAADDR",
      bytes("07000001" + opt(3, "00000001 00000000 00000000" + opt(5, "fd77"))),
      /IAADDR shorter/,
    ],
    ["short status", bytes("07000001" + opt(13, "00")), /status code shorter/],
    ["bad preference", bytes("07000001" + opt(7, "0102")), /preference is not 1 byte/],
  ];
  for (const [what, data, reason] of cases) {
    assert.throws(() => decodeDhcp6(data), (e: unknown) => {
      assert.ok(e instanceof Dhcp6PacketError, what);
      assert.match(e.message, reason, what);
      return true;
    });
  }
});

Deno.test("option counts are bounded per level, so a packet of empty options costs little", () => {
  const many = "07000001" + opt(99, "").repeat(DHCP6_MAX_OPTIONS);
  assert.equal(decodeDhcp6(bytes(many)).type, 7);
  assert.throws(() => decodeDhcp6(bytes(many + opt(99, ""))), /more than 64 options/);
  // The worst packet within the cap (4096 bytes of nested IA_NA content) decodes in bounded time.
  const ia = "00000001 00000000 00000000" +
    opt(5, "fd770000000000000000000000000010 00000078 000000b4").repeat(60);
  const worst = bytes("07000001" + opt(3, ia.replace(/\s/g, "")));
  assert.ok(worst.length <= DHCP6_MAX_PACKET);
  const start = performance.now();
  for (let i = 0; i < 1000; i++) decodeDhcp6(worst);
  const perPacketUs = performance.now() - start; // ms for 1000 packets = µs for one
  console.log(
    `decode of a ${worst.length}-byte IA_NA with 60 addresses: ${perPacketUs.toFixed(1)} µs`,
  );
  assert.equal(decodeDhcp6(worst).iaNa?.addresses.length, 8, "addresses kept up to the cap");
});

Deno.test("duidLl refuses a malformed MAC", () => {
  assert.throws(() => duidLl("52:54:00"), /Cannot build a DUID from MAC "52:54:00"/);
});
