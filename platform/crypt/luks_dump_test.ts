import assert from "node:assert/strict";
import { parseLuksDump } from "./luks_dump.ts";

Deno.test("luksDump JSON: active slots with their token kinds, cipher, sector size, data offset", () => {
  const info = parseLuksDump(JSON.stringify({
    keyslots: { "0": { type: "luks2" }, "3": { type: "luks2" } },
    tokens: {
      "0": { type: "machined-nodeid", keyslots: ["3"] },
      "1": { type: "systemd-tpm2", keyslots: ["0"] },
    },
    segments: { "0": { offset: "16777216", encryption: "aes-xts-plain64", sector_size: 4096 } },
  }));
  assert.deepEqual(info.slots, [{ slot: 0 }, { slot: 3, kind: "nodeid" }]);
  assert.equal(info.tokens.get(1)?.type, "systemd-tpm2");
  assert.equal(info.dataOffset, 16777216);
  assert.equal(info.sectorSize, 4096);
});

Deno.test("luksDump JSON: a malformed number is a TypeError, not a silent zero", () => {
  assert.throws(() => parseLuksDump('{"keyslots": {"x": {}}}'), TypeError);
  assert.throws(() => parseLuksDump("{"), SyntaxError);
});
