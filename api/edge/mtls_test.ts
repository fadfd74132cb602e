/**
 * The mTLS matrix: which client certificates reach a handler, how each refusal
 * reaches the client, and the one line machinectl prints for it.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import {
  addContext,
  contextFromPem,
  emptyClientConfig,
  type KeyedCertificate,
  writeClientConfig,
} from "../../pki/mod.ts";
import { type ApiFixture, outcome, startApiFixture, withTimeout } from "../testing.ts";
import { createMachineClient } from "../client/mod.ts";
import { bufferIo, runMachinectl } from "../../machinectl/mod.ts";

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
        return await withTimeout(outcomeAndText(() => c.api.reboot({})), 5000, "reboot");
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
      caCert: await attempt({ ...f.pki.ca, cert: f.pki.ca.cert }),
    };
    const handshake = ["Internal", "Canceled", "Unavailable"];
    // machined-edge refuses every one in the handshake, with the alert that names it.
    const alerts: Record<keyof typeof results, string> = {
      none: "CertificateRequired",
      otherCa: "UnknownCA",
      expired: "CertificateExpired",
      serverAuthOnly: "UnsupportedCertificate",
      noEku: "UnsupportedCertificate",
      noDigitalSignature: "UnsupportedCertificate",
      caCert: "BadCertificate",
    };
    for (const [k, alert] of Object.entries(alerts) as [keyof typeof results, string][]) {
      ok(handshake.includes(results[k].code), `${k}: ${results[k].code}`);
      ok(results[k].text.includes(`received fatal alert: ${alert}`), `${k}: ${results[k].text}`);
    }
    deepEqual(f.actions.calls, []);
    equal((await attempt(f.pki.clients["os:admin"])).code, "ok");
    equal(f.actions.calls.length, 1);
  } finally {
    await f.close();
  }
});

/** The Connect code of a failed call ("ok" when it succeeds) and its whole text, causes included. */
async function outcomeAndText(
  call: () => Promise<unknown>,
): Promise<{ code: string; text: string }> {
  try {
    await call();
    return { code: "ok", text: "" };
  } catch (e) {
    const parts: string[] = [];
    for (let c: unknown = e, i = 0; c && i < 5; i++, c = (c as { cause?: unknown }).cause) {
      parts.push(c instanceof Error ? c.message : String(c));
    }
    return { code: await outcome(() => Promise.reject(e)), text: parts.join(" ") };
  }
}

/** machinectl `version` with a client config holding `cert` (and the node's CA). */
async function machinectlWith(f: ApiFixture, cert: { certPem: string; keyPem: string }) {
  const path = join(f.pki.dir, `ctl-${crypto.randomUUID()}.yaml`);
  const ctx = contextFromPem([f.endpoint], { caPem: f.pki.ca.certPem, ...cert });
  await writeClientConfig(path, addContext(emptyClientConfig(), "test", ctx));
  const io = bufferIo();
  const code = await withTimeout(runMachinectl(["--config", path, "version"], io), 10_000, "cli");
  return { code, err: io.stderr.join("\n") };
}

Deno.test("mTLS: machinectl names why the node refused its certificate, in one line", async () => {
  const f = await startApiFixture();
  try {
    const where = "the node"; // machinectl names the endpoint only when given with -e
    // machined-edge's alert, named after machinectl's own diagnosis.
    const alert = (name: string) => ` \\(TLS alert ${name}\\)`;
    const expected: [string, { certPem: string; keyPem: string }, RegExp][] = [
      [
        "expired",
        f.pki.expired,
        new RegExp(
          `^error: ${where} refused this client certificate: it expired on ` +
            f.pki.expired.cert.notAfter.toISOString().replace(/[.]/g, "\\.") +
            alert("certificate_expired") + "$",
        ),
      ],
      [
        "foreign CA",
        f.pki.otherCa,
        new RegExp(
          `^error: ${where} refused this client certificate: it is not signed by this context's CA.*` +
            alert("unknown_ca") + "$",
        ),
      ],
      [
        "serverAuth only",
        f.pki.serverOnly,
        new RegExp(
          `^error: ${where} refused this client certificate: it lacks the clientAuth extended key usage \\(it has serverAuth\\)` +
            alert("unsupported_certificate") + "$",
        ),
      ],
      [
        "the CA certificate",
        { certPem: f.pki.ca.certPem, keyPem: f.pki.ca.keyPem },
        /^error: the node (refused this client certificate: it is a CA certificate|did not accept this client: .*is a CA certificate)/,
      ],
      [
        "no EKU",
        f.pki.noEku,
        /^error: the node (refused this client certificate: it lacks the clientAuth|did not accept this client: .*lacks the clientAuth)/,
      ],
      [
        "no digitalSignature",
        f.pki.noDigitalSignature,
        /^error: the node refused this client certificate: its key usage does not allow digitalSignature \(TLS alert unsupported_certificate\)$/,
      ],
    ];
    for (const [what, cert, message] of expected) {
      const r = await machinectlWith(f, cert);
      equal(r.code, 1, what);
      equal(r.err.split("\n").length, 1, `${what}: one line: ${r.err}`);
      match(r.err, message, `${what}: ${r.err}`);
    }
    deepEqual(f.actions.calls, []);
  } finally {
    await f.close();
  }
});
