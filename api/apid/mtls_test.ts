import { deepEqual, equal, ok } from "node:assert/strict";
import type { KeyedCertificate } from "../../pki/mod.ts";
import { outcome, startApiFixture, withTimeout } from "../testing.ts";
import { createMachineClient } from "../client/mod.ts";

Deno.test("mTLS: only a good client certificate from the node CA reaches a handler", async () => {
  const f = await startApiFixture();
  try {
    const attempt = async (cert: KeyedCertificate | undefined) => {
      const c = createMachineClient({
        endpoint: f.endpoint,
        caPem: f.pki.ca.certPem,
        certPem: cert?.certPem ?? "",
        keyPem: cert?.keyPem ?? "",
      });
      try {
        return await withTimeout(outcome(() => c.api.reboot({})), 5000, "reboot");
      } finally {
        c.close();
      }
    };
    const results = {
      none: await attempt(undefined),
      otherCa: await attempt(f.pki.otherCa),
      expired: await attempt(f.pki.expired),
      serverAuthOnly: await attempt(f.pki.serverOnly),
      noEku: await attempt(f.pki.noEku),
      noDigitalSignature: await attempt(f.pki.noDigitalSignature),
    };
    // Refused in the TLS handshake: with TLS 1.3 the client learns it as a fatal
    // alert (no certificate) or as its first stream being reset (a bad one) ...
    for (const k of ["none", "otherCa", "expired", "serverAuthOnly"] as const) {
      ok(["Internal", "Canceled", "Unavailable"].includes(results[k]), `${k}: ${results[k]}`);
    }
    // ... or, where rustls lets it through, by verifyClientCertificate before any handler.
    equal(results.noEku, "Unauthenticated");
    // A KeyUsage without digitalSignature: rustls does not look; apid does.
    equal(results.noDigitalSignature, "Unauthenticated");
    deepEqual(f.actions.calls, []);
    equal(await attempt(f.pki.clients["os:admin"]), "ok");
    equal(f.actions.calls.length, 1);
  } finally {
    await f.close();
  }
});
