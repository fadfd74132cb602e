import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { authenticodeDigest } from "./digest.ts";
import { EFI_STUB, refusalOf as refusal, syntheticPe, winCertificate } from "./testing.ts";

const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);

/** The spec's hash for a layout without gaps: the file minus the three excluded ranges. */
function expectedDigest(pe: Uint8Array, magic = 0x20b): Uint8Array {
  const optional = 0x40 + 24;
  const dir = optional + (magic === 0x20b ? 112 : 96) + 32;
  const v = new DataView(pe.buffer, pe.byteOffset, pe.byteLength);
  const certAt = v.getUint32(dir, true);
  const end = certAt === 0 ? pe.length : certAt;
  const h = createHash("sha256");
  h.update(pe.subarray(0, optional + 64));
  h.update(pe.subarray(optional + 68, dir));
  h.update(pe.subarray(dir + 8, end));
  return new Uint8Array(h.digest());
}

Deno.test("the digest leaves out CheckSum, the Certificate Table entry and the table", () => {
  const plain = syntheticPe({ sections: [bytes(700, 1), bytes(100, 2)] });
  const signed = syntheticPe({
    sections: [bytes(700, 1), bytes(100, 2)],
    certTable: winCertificate(bytes(40, 9)),
  });
  new DataView(signed.buffer).setUint32(0x40 + 24 + 64, 0xdead_beef, true); // another CheckSum
  assert.deepEqual(authenticodeDigest(plain).sha256, expectedDigest(plain));
  assert.deepEqual(authenticodeDigest(signed).sha256, authenticodeDigest(plain).sha256);
});

Deno.test("PE32 images hash like PE32+ ones, their data directories 16 bytes earlier", () => {
  const pe = syntheticPe({ sections: [bytes(10, 3)], magic: 0x10b });
  assert.deepEqual(authenticodeDigest(pe).sha256, expectedDigest(pe, 0x10b));
});

Deno.test("data after the last section and before the certificate table is hashed", () => {
  const a = syntheticPe({ sections: [bytes(10, 3)], trailing: bytes(13, 4) });
  const b = syntheticPe({ sections: [bytes(10, 3)], trailing: bytes(13, 5) });
  assert.deepEqual(authenticodeDigest(a).sha256, expectedDigest(a));
  assert.ok(authenticodeDigest(a).sha256.some((x, i) => x !== authenticodeDigest(b).sha256[i]));
  const signed = syntheticPe({
    sections: [bytes(10, 3)],
    trailing: bytes(13, 4),
    certTable: winCertificate(bytes(3, 9)),
  });
  // The signed image pads the trailing data to 8 bytes before the table: those zeros count.
  const padded = syntheticPe({ sections: [bytes(10, 3)], trailing: bytes(16, 4).fill(0, 13) });
  assert.deepEqual(authenticodeDigest(signed).sha256, authenticodeDigest(padded).sha256);
});

Deno.test("sections are hashed in file order whatever their order in the table", () => {
  const pe = syntheticPe({ sections: [bytes(600, 1), bytes(600, 2)] });
  const swapped = pe.slice();
  const table = 0x40 + 24 + 112 + 128;
  swapped.copyWithin(table, table + 40, table + 80);
  swapped.set(pe.subarray(table, table + 40), table + 40);
  // In table order the second section's bytes would come first; in file order the hash is
  // the file's bytes in sequence, as for the unswapped image.
  assert.deepEqual(authenticodeDigest(swapped).sha256, expectedDigest(swapped));
});

Deno.test("malformed images are refused as bad-pe before they are hashed", () => {
  const pe = syntheticPe({ sections: [bytes(600, 1), bytes(600, 2)] });
  const v = (b: Uint8Array) => new DataView(b.buffer);
  const table = 0x40 + 24 + 112 + 128;
  assert.deepEqual(refusal(() => authenticodeDigest(new Uint8Array(100))), "bad-pe");
  const overlap = pe.slice();
  v(overlap).setUint32(table + 40 + 20, 0x400 + 8, true);
  assert.deepEqual(refusal(() => authenticodeDigest(overlap)), "bad-pe");
  const past = pe.slice();
  v(past).setUint32(table + 40 + 16, 0x10000, true);
  assert.deepEqual(refusal(() => authenticodeDigest(past)), "bad-pe");
  const noDirectory = pe.slice();
  v(noDirectory).setUint32(0x40 + 24 + 108, 4, true);
  assert.deepEqual(refusal(() => authenticodeDigest(noDirectory)), "bad-pe");
  const magic = pe.slice();
  v(magic).setUint16(0x40 + 24, 0x107, true);
  assert.deepEqual(refusal(() => authenticodeDigest(magic)), "bad-pe");
});

Deno.test("a certificate table that does not end the file, or runs past it, is bad-pe", () => {
  const signed = syntheticPe({ sections: [bytes(10, 3)], certTable: winCertificate(bytes(8, 9)) });
  const appended = new Uint8Array(signed.length + 8);
  appended.set(signed);
  assert.deepEqual(refusal(() => authenticodeDigest(appended)), "bad-pe");
  assert.deepEqual(
    refusal(() => authenticodeDigest(signed.subarray(0, signed.length - 8))),
    "bad-pe",
  );
});

Deno.test("an image past the caller's limit is refused as too-large", () => {
  const pe = syntheticPe({ sections: [bytes(10, 3)] });
  assert.equal(refusal(() => authenticodeDigest(pe, pe.length - 1)), "too-large");
  assert.deepEqual(authenticodeDigest(pe, pe.length).sha256.length, 32);
});

Deno.test({
  name: "systemd's stub hashes over its data after the sections (needs systemd-boot-efi)",
  ignore: !(() => {
    try {
      return Deno.statSync(EFI_STUB).isFile;
    } catch {
      return false;
    }
  })(),
  fn: async () => {
    const stub = await Deno.readFile(EFI_STUB);
    const changed = stub.slice();
    changed[changed.length - 1] ^= 0xff; // the stub carries data past its last section
    const a = authenticodeDigest(stub).sha256, b = authenticodeDigest(changed).sha256;
    assert.ok(a.some((x, i) => x !== b[i]));
  },
});
