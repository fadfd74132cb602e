import { equal } from "node:assert/strict";
import { scrubPrivateKeys } from "./bundle.ts";

Deno.test("scrubPrivateKeys replaces every PEM private key block, of any kind", () => {
  const text = "a\n-----BEGIN EC PRIVATE KEY-----\nMHc\nAAA\n-----END EC PRIVATE KEY-----\nb\n" +
    "-----BEGIN PRIVATE KEY-----\nxyz\n-----END PRIVATE KEY-----\n" +
    "-----BEGIN CERTIFICATE-----\ncert\n-----END CERTIFICATE-----\n";
  equal(
    scrubPrivateKeys(text),
    "a\n(redacted)\nb\n(redacted)\n-----BEGIN CERTIFICATE-----\ncert\n-----END CERTIFICATE-----\n",
  );
});
