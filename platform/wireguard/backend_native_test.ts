import assert from "node:assert/strict";
import { scrubKeys } from "./backend_native.ts";

Deno.test("wg's stderr loses the value it quotes and every key it was given", () => {
  const s = {
    privateKey: "PRIV",
    peers: [{ publicKey: "PUB", presharedKey: "PSK", allowedIps: [] }],
  };
  assert.equal(
    scrubKeys("Key is not the correct length or format: `PRIV'\nConfiguration parsing error\n", s),
    "Key is not the correct length or format: `(redacted)'\nConfiguration parsing error\n",
  );
  assert.equal(scrubKeys("bad PSK near PRIV for PUB", s), "bad (redacted) near (redacted) for PUB");
});
