import assert from "node:assert/strict";
import {
  ecdsaSignatureToDer,
  explicit,
  hexBytes,
  oid,
  sequence,
  smallInteger,
  time,
  tlv,
  unsignedInteger,
} from "./der.ts";

const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");

Deno.test("der: lengths in short form below 128, long form from 128", () => {
  assert.equal(hex(tlv(0x04, new Uint8Array(127)).subarray(0, 2)), "047f");
  assert.equal(hex(tlv(0x04, new Uint8Array(128)).subarray(0, 3)), "048180");
  assert.equal(hex(tlv(0x04, new Uint8Array(256)).subarray(0, 4)), "04820100");
  assert.equal(hex(tlv(0x04, new Uint8Array(65536)).subarray(0, 5)), "0483010000");
  assert.equal(tlv(0x04, new Uint8Array(65536)).length, 65536 + 5);
});

Deno.test("der: integers are minimal and never negative", () => {
  assert.equal(hex(unsignedInteger(Uint8Array.of())), "020100");
  assert.equal(hex(unsignedInteger(Uint8Array.of(0, 0, 0))), "020100");
  assert.equal(hex(unsignedInteger(Uint8Array.of(0, 0, 0x7f))), "02017f");
  assert.equal(hex(unsignedInteger(Uint8Array.of(0x80))), "02020080");
  assert.equal(hex(unsignedInteger(Uint8Array.of(0, 0xff, 1))), "020300ff01");
  assert.equal(hex(smallInteger(2)), "020102");
  assert.equal(hex(smallInteger(300)), "0202012c");
  assert.throws(() => smallInteger(-1), RangeError);
});

Deno.test("der: object identifiers, including multi-octet arcs", () => {
  assert.equal(hex(oid("1.2.840.10045.4.3.2")), "06082a8648ce3d040302");
  assert.equal(hex(oid("2.5.29.17")), "0603551d11");
  assert.equal(hex(oid("1.3.6.1.5.5.7.3.1")), "06082b06010505070301");
  assert.equal(hex(oid("2.999")), "06028837");
  for (const bad of ["", "1", "3.1", "1.02", "1.x", "1..2"]) {
    assert.throws(() => oid(bad), RangeError, bad);
  }
});

Deno.test("der: UTCTime through 2049, GeneralizedTime from 2050, whole seconds", () => {
  const utc = time(new Date("2049-12-31T23:59:59.999Z"));
  assert.equal(new TextDecoder().decode(utc.subarray(2)), "491231235959Z");
  assert.equal(utc[0], 0x17);
  const general = time(new Date("2050-01-01T00:00:00Z"));
  assert.equal(new TextDecoder().decode(general.subarray(2)), "20500101000000Z");
  assert.equal(general[0], 0x18);
  assert.throws(() => time(new Date("1949-12-31T23:59:59Z")), RangeError);
});

Deno.test("der: ECDSA r || s becomes SEQUENCE { INTEGER r, INTEGER s }", () => {
  const r = new Uint8Array(32).fill(0x11);
  r[0] = 0x80; // top bit: one zero octet in front
  const s = new Uint8Array(32);
  s[31] = 5; // leading zeros: dropped
  const der = ecdsaSignatureToDer(new Uint8Array([...r, ...s]));
  assert.equal(hex(der), "3026" + "022100" + hex(r) + "020105");
  assert.throws(() => ecdsaSignatureToDer(new Uint8Array(63)), RangeError);
});

Deno.test("der: explicit tags wrap constructed content", () => {
  assert.equal(hex(explicit(0, smallInteger(2))), "a003020102");
  assert.equal(hex(sequence([])), "3000");
});

Deno.test("der: hex octets to bytes, anything else refused", () => {
  assert.deepEqual(hexBytes("00ff7F"), Uint8Array.of(0, 0xff, 0x7f));
  for (const bad of ["", "0", "0g", "0x01"]) assert.throws(() => hexBytes(bad), RangeError, bad);
});
