import assert from "node:assert/strict";
import {
  clientRequest,
  decodeNtp,
  encodeNtp,
  NtpDecodeError,
  ntpToUnixNs,
  referenceIdFromText,
  referenceIdText,
  unixNsToNtp,
} from "./sntp_packet.ts";

const hex = (s: string) =>
  new Uint8Array(s.replace(/\s+/g, "").match(/../g)!.map((x) => parseInt(x, 16)));
const toHex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");

/** 2026-01-01T00:00:00.5Z: NTP seconds 0xed003780 (1767225600 + 2208988800), fraction ½. */
const T1_UNIX_NS = 1_767_225_600_500_000_000n;
const T1_NTP = 0xed003780_80000000n;

Deno.test("a client request encodes to the golden bytes", () => {
  const golden = "23 00 00 00" + // LI 0, VN 4, mode 3; stratum, poll, precision 0
    "00000000 00000000 00000000" + // root delay, root dispersion, reference id
    "0000000000000000 0000000000000000 0000000000000000" + // reference, origin, receive
    "ed003780 80000000"; // transmit
  assert.equal(toHex(encodeNtp(clientRequest(T1_NTP))), golden.replace(/\s+/g, ""));
});

Deno.test("a server reply decodes from the golden bytes", () => {
  const bytes = hex(
    "24 02 06 ec" + // LI 0, VN 4, mode 4; stratum 2; poll 6; precision -20
      "00008000" + // root delay 0.5 s
      "00014000" + // root dispersion 1.25 s
      "c0000201" + // reference id 192.0.2.1
      "ed003700 00000000" + // reference
      "ed003780 80000000" + // origin = our transmit
      "ed003781 40000000" + // receive: .25 s into second 1767225601
      "ed003781 80000000", // transmit: .5 s
  );
  const p = decodeNtp(bytes);
  assert.deepEqual(p, {
    leap: 0,
    version: 4,
    mode: 4,
    stratum: 2,
    poll: 6,
    precision: -20,
    rootDelay: 0.5,
    rootDispersion: 1.25,
    referenceId: 0xc0000201,
    referenceTimestamp: 0xed003700_00000000n,
    originTimestamp: T1_NTP,
    receiveTimestamp: 0xed003781_40000000n,
    transmitTimestamp: 0xed003781_80000000n,
  });
  assert.equal(ntpToUnixNs(p.receiveTimestamp), 1_767_225_601_250_000_000n);
  assert.deepEqual(encodeNtp(p), bytes, "re-encodes to the same bytes");
});

Deno.test("a kiss-of-death packet decodes its code; extension bytes are ignored", () => {
  const bytes = hex(
    "e4 00 00 00 00000000 00000000 52415445" + // LI 3, VN 4, mode 4, stratum 0, "RATE"
      "0000000000000000 ed00378080000000 0000000000000000 0000000000000000" +
      "deadbeef", // trailing extension/MAC bytes
  );
  const p = decodeNtp(bytes);
  assert.equal(p.leap, 3);
  assert.equal(p.stratum, 0);
  assert.equal(referenceIdText(p.referenceId), "RATE");
  assert.equal(p.originTimestamp, T1_NTP);
});

Deno.test("encode and decode round-trip every field", () => {
  const p = {
    leap: 2,
    version: 3,
    mode: 4,
    stratum: 15,
    poll: -6,
    precision: -29,
    rootDelay: -0.25,
    rootDispersion: 65535.5,
    referenceId: referenceIdFromText("GPS"),
    referenceTimestamp: 1n,
    originTimestamp: 0xffff_ffff_ffff_ffffn,
    receiveTimestamp: 0x8000_0000_0000_0000n,
    transmitTimestamp: 42n,
  };
  assert.deepEqual(decodeNtp(encodeNtp(p)), p);
  assert.equal(referenceIdText(p.referenceId), "GPS");
});

Deno.test("short packets and out-of-range fields are refused with context", () => {
  assert.throws(() => decodeNtp(new Uint8Array(47)), (e) => {
    assert.ok(e instanceof NtpDecodeError);
    assert.equal(e.length, 47);
    return true;
  });
  assert.throws(() => encodeNtp({ ...clientRequest(0n), version: 8 }), RangeError);
  assert.throws(() => encodeNtp({ ...clientRequest(0n), rootDispersion: -1 }), RangeError);
  assert.throws(() => referenceIdFromText("TOOLONG"), RangeError);
});

Deno.test("timestamps convert exactly at the golden points", () => {
  assert.equal(unixNsToNtp(T1_UNIX_NS), T1_NTP);
  assert.equal(ntpToUnixNs(T1_NTP), T1_UNIX_NS);
  assert.equal(unixNsToNtp(0n), 2_208_988_800n << 32n, "Unix epoch");
  // 2040-01-01 lies in NTP era 1: seconds wrapped to 0x0754fd00.
  const y2040 = 2_208_988_800n * 1_000_000_000n;
  assert.equal(unixNsToNtp(y2040), 0x0754fd00n << 32n);
  assert.equal(ntpToUnixNs(0x0754fd00n << 32n), y2040);
  assert.throws(() => unixNsToNtp(-2_300_000_000n * 1_000_000_000n), RangeError);
});

Deno.test("conversion is within a nanosecond both ways across a range of times", () => {
  for (let i = 0; i < 200; i++) {
    const ns = BigInt(Math.floor(Math.random() * 4e9)) * 1_000_000_000n +
      BigInt(Math.floor(Math.random() * 1e9));
    const back = ntpToUnixNs(unixNsToNtp(ns));
    assert.ok(back - ns <= 1n && ns - back <= 1n, `${ns} → ${back}`);
  }
});
