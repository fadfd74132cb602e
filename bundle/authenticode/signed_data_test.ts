import assert from "node:assert/strict";
import { refusalOf as reason } from "./testing.ts";
import { parseSignedData } from "./signed_data.ts";
import { AuthenticodeError } from "./authenticode_error.ts";

/** `content` wrapped in a DER element of `tag`. */
function tlv(tag: number, content: Uint8Array): Uint8Array {
  const n = content.length;
  const head = n < 0x80 ? [tag, n] : n < 0x100 ? [tag, 0x81, n] : [tag, 0x82, n >> 8, n & 0xff];
  const out = new Uint8Array(head.length + n);
  out.set(head);
  out.set(content, head.length);
  return out;
}

const SIGNED_DATA_OID = Uint8Array.of(0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 1, 7, 2);

function contentInfo(signedData: Uint8Array): Uint8Array {
  const body = new Uint8Array([...SIGNED_DATA_OID, ...tlv(0xa0, signedData)]);
  return tlv(0x30, body);
}

Deno.test("malformed PKCS#7 is bad-signature", () => {
  assert.equal(reason(() => parseSignedData(Uint8Array.of(0x30, 0x80, 0, 0))), "bad-signature");
  assert.equal(
    reason(() => parseSignedData(contentInfo(tlv(0x30, Uint8Array.of(2, 1, 1))))),
    "bad-signature",
  );
  const padded = new Uint8Array([...contentInfo(tlv(0x30, new Uint8Array())), 0, 0, 7]);
  assert.match(
    (() => {
      try {
        parseSignedData(padded);
      } catch (e) {
        return (e as Error).message;
      }
      return "";
    })(),
    /not padding/,
  );
});

Deno.test("deep nesting inside 64 KiB is refused, not a crash, in bounded time", () => {
  let deep: Uint8Array = new Uint8Array();
  for (let i = 0; i < 15_000 && deep.length < 60_000; i++) deep = tlv(0x30, deep);
  // Well-formed where the verifier cuts raw bytes (the shape of SignedData and of one SignerInfo
  // with signed attributes), so the typed parse meets the nesting in the certificates.
  const spc = Uint8Array.of(0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x01, 0x04);
  const encap = tlv(0x30, new Uint8Array([...spc, ...tlv(0xa0, Uint8Array.of(0x30, 0))]));
  const attribute = [0x30, 7, 0x06, 1, 0, 0x31, 2, 0x05, 0];
  const signer = Uint8Array.of(2, 1, 1, 0x30, 0, 0x30, 0, 0xa0, 9, ...attribute, 0x30, 0, 0x04, 0);
  const signerInfos = tlv(0x31, tlv(0x30, signer));
  const version = Uint8Array.of(2, 1, 1);
  const body = [
    ...version,
    ...tlv(0x31, new Uint8Array()),
    ...encap,
    ...tlv(0xa0, deep),
    ...signerInfos,
  ];
  const blob = contentInfo(tlv(0x30, new Uint8Array(body)));
  const started = performance.now();
  let message = "";
  try {
    parseSignedData(blob);
  } catch (e) {
    assert.ok(e instanceof AuthenticodeError);
    assert.equal(e.reason, "bad-signature");
    message = e.message;
  }
  assert.match(message, /cannot parse the PKCS#7 SignedData/);
  assert.ok(performance.now() - started < 2000);
});
