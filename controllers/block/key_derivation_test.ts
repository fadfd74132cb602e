import assert from "node:assert/strict";
import { DEFAULT_PBKDF, MACHINE_KEY_PBKDF, TEST_PBKDF } from "../../platform/crypt/mod.ts";
import { slotPbkdf } from "./key_derivation.ts";

Deno.test("key derivation: a passphrase keeps argon2id; machine-made keys get PBKDF2 at its least", () => {
  assert.deepEqual(slotPbkdf("static"), DEFAULT_PBKDF);
  assert.equal(DEFAULT_PBKDF.algorithm ?? "argon2id", "argon2id");
  assert.deepEqual(slotPbkdf("static", TEST_PBKDF), TEST_PBKDF);
  for (const kind of ["nodeid", "tpm"] as const) {
    assert.deepEqual(slotPbkdf(kind), { algorithm: "pbkdf2", iterations: 1000 });
    assert.deepEqual(
      slotPbkdf(kind, TEST_PBKDF),
      MACHINE_KEY_PBKDF,
      "the test cost is a passphrase's",
    );
  }
});
