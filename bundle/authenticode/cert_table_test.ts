import assert from "node:assert/strict";
import { readAuthenticodeSignatures } from "./cert_table.ts";
import { refusalOf as refusal, syntheticPe, winCertificate } from "./testing.ts";

const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, (at += p.length) - p.length);
  return out;
}

Deno.test("an image without a certificate table has no signatures", () => {
  assert.deepEqual(readAuthenticodeSignatures(syntheticPe({ sections: [bytes(4, 1)] })), []);
});

Deno.test("entries are read in order, each at the next 8-byte boundary", () => {
  const table = concat(winCertificate(bytes(5, 1)), winCertificate(bytes(9, 2), 0x0100, 0x0001));
  const pe = syntheticPe({ sections: [bytes(4, 1)], certTable: table });
  const found = readAuthenticodeSignatures(pe);
  assert.deepEqual(found.map((s) => [s.revision, s.type, [...s.data]]), [
    [0x0200, 0x0002, [1, 1, 1, 1, 1]],
    [0x0100, 0x0001, [2, 2, 2, 2, 2, 2, 2, 2, 2]],
  ]);
  assert.equal(found[1].offset - found[0].offset, 16);
});

Deno.test("an entry that overruns the table, or a header cut short, is bad-pe", () => {
  const entry = winCertificate(bytes(8, 1));
  new DataView(entry.buffer).setUint32(0, 64, true);
  const overrun = syntheticPe({ sections: [bytes(4, 1)], certTable: entry });
  assert.equal(refusal(() => readAuthenticodeSignatures(overrun)), "bad-pe");
  const short = winCertificate(bytes(8, 1));
  new DataView(short.buffer).setUint32(0, 4, true);
  const tooShort = syntheticPe({ sections: [bytes(4, 1)], certTable: short });
  assert.equal(refusal(() => readAuthenticodeSignatures(tooShort)), "bad-pe");
  const cut = syntheticPe({
    sections: [bytes(4, 1)],
    certTable: concat(winCertificate(bytes(8, 1)), bytes(4, 0)),
  });
  assert.equal(refusal(() => readAuthenticodeSignatures(cut)), "bad-pe");
});

Deno.test("more than 8 entries are refused", () => {
  const entries = Array.from({ length: 9 }, () => winCertificate(bytes(8, 1)));
  const pe = syntheticPe({ sections: [bytes(4, 1)], certTable: concat(...entries) });
  assert.equal(refusal(() => readAuthenticodeSignatures(pe)), "bad-pe");
  const eight = syntheticPe({ sections: [bytes(4, 1)], certTable: concat(...entries.slice(1)) });
  assert.equal(readAuthenticodeSignatures(eight).length, 8);
});

Deno.test("a table past 64 KiB, or an image past the limit, is too-large before parsing", () => {
  const big = winCertificate(bytes(64 * 1024, 1)); // 8 bytes over
  const pe = syntheticPe({ sections: [bytes(4, 1)], certTable: big });
  assert.equal(refusal(() => readAuthenticodeSignatures(pe)), "too-large");
  assert.equal(readAuthenticodeSignatures(pe, { maxCertTableBytes: big.length }).length, 1);
  assert.equal(
    refusal(() => readAuthenticodeSignatures(pe, { maxPeBytes: pe.length - 1 })),
    "too-large",
  );
});
