import assert from "node:assert/strict";
import { createCertificateAuthority } from "./certificate_authority.ts";
import { issueClientCertificate } from "./client_certificate.ts";
import { DAY_MS } from "./keyed_certificate.ts";
import { issueLeafCertificate } from "./leaf_certificate.ts";
import {
  ClientCertificateError,
  type ClientCertificateProblem,
  verifyClientCertificate,
} from "./verify_client_certificate.ts";
import { x509 } from "./x509_provider.ts";

const now = new Date("2030-03-01T00:00:00Z");

async function rejectsWith(
  promise: Promise<unknown>,
  problem: ClientCertificateProblem,
): Promise<void> {
  await assert.rejects(
    promise,
    (e) => e instanceof ClientCertificateError && e.problem === problem,
    `expected ${problem}`,
  );
}

Deno.test("verifyClientCertificate accepts a good client and returns its identity", async () => {
  const ca = await createCertificateAuthority({ now });
  const c = await issueClientCertificate({ ca, name: "alice", role: "os:operator", now });
  for (const input of [c.certPem, { raw: new Uint8Array(c.cert.rawData) }]) {
    const id = await verifyClientCertificate(input, ca, now);
    assert.equal(id.name, "alice");
    assert.equal(id.role, "os:operator");
    assert.equal(id.serialNumber, c.cert.serialNumber);
  }
});

Deno.test("verifyClientCertificate refuses each bad case with its own reason", async () => {
  const ca = await createCertificateAuthority({ now });
  const other = await createCertificateAuthority({ now });
  const leaf = (eku: string[], subject: x509.JsonName = [{ O: ["os:admin"] }, { CN: ["x"] }]) =>
    issueLeafCertificate({ ca, subject, extendedKeyUsages: eku, now });

  await rejectsWith(verifyClientCertificate({}, ca, now), "missing");
  await rejectsWith(verifyClientCertificate(undefined, ca, now), "missing");
  await rejectsWith(verifyClientCertificate("garbage", ca, now), "malformed");
  const foreign = await issueClientCertificate({ ca: other, name: "eve", role: "os:admin", now });
  await rejectsWith(verifyClientCertificate(foreign.certPem, ca, now), "untrusted");
  const good = await issueClientCertificate({ ca, name: "a", role: "os:admin", now });
  await rejectsWith(
    verifyClientCertificate(good.certPem, ca, new Date(now.getTime() + 366 * DAY_MS)),
    "expired",
  );
  await rejectsWith(
    verifyClientCertificate(good.certPem, ca, new Date(now.getTime() - DAY_MS)),
    "not_yet_valid",
  );
  await rejectsWith(verifyClientCertificate(ca.certPem, ca, now), "is_ca");
  const serverOnly = await leaf([x509.ExtendedKeyUsage.serverAuth]);
  await rejectsWith(verifyClientCertificate(serverOnly.certPem, ca, now), "not_client_auth");
  const noEku = await leaf([]);
  await rejectsWith(verifyClientCertificate(noEku.certPem, ca, now), "not_client_auth");
  const noRole = await leaf([x509.ExtendedKeyUsage.clientAuth], [{ O: ["acme"] }, { CN: ["y"] }]);
  await rejectsWith(verifyClientCertificate(noRole.certPem, ca, now), "no_role");
});
