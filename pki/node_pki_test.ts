import assert from "node:assert/strict";
import { join } from "node:path";
import { createCertificateAuthority } from "./certificate_authority.ts";
import { DAY_MS } from "./keyed_certificate.ts";
import { loadOrCreateNodePki, PKI_FILES } from "./node_pki.ts";
import { isPkiError } from "./pki_error.ts";
import { subjectAltNamesOf } from "./server_certificate.ts";

const names = { hostnames: ["node-1"], addresses: ["10.0.0.5", "fd00::5"] };

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function listDir(dir: string): Promise<string[]> {
  return (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name).sort();
}

Deno.test("a missing directory gets a full PKI with private keys at 0600", async () => {
  await withDir(async (root) => {
    const dir = join(root, "state", "pki");
    const pki = await loadOrCreateNodePki(dir, names);
    assert.deepEqual(await listDir(dir), ["ca.crt", "ca.key", "server.crt", "server.key"]);
    assert.deepEqual([...pki.written].sort(), ["ca.crt", "ca.key", "server.crt", "server.key"]);
    assert.equal((await Deno.stat(join(dir, "ca.key"))).mode! & 0o777, 0o600);
    assert.equal((await Deno.stat(join(dir, "server.key"))).mode! & 0o777, 0o600);
    assert.equal((await Deno.stat(dir)).mode! & 0o777, 0o700);
    assert.ok(await pki.server.cert.verify({ publicKey: pki.ca.cert.publicKey }));
  });
});

Deno.test("a complete directory is loaded as is", async () => {
  await withDir(async (dir) => {
    const first = await loadOrCreateNodePki(dir, names);
    const second = await loadOrCreateNodePki(dir, names);
    assert.deepEqual(second.written, []);
    assert.equal(second.ca.cert.serialNumber, first.ca.cert.serialNumber);
    assert.equal(second.server.cert.serialNumber, first.server.cert.serialNumber);
  });
});

Deno.test("a partial directory is a PkiError naming what is missing, and nothing is written", async () => {
  const cases: [string[], string[]][] = [
    [[PKI_FILES.caKey, PKI_FILES.serverCert, PKI_FILES.serverKey], ["ca.key"]],
    [[PKI_FILES.caCert], ["ca.crt"]],
    [[PKI_FILES.serverKey], ["server.key"]],
    [[PKI_FILES.caCert, PKI_FILES.caKey], ["ca.crt", "ca.key"]],
  ];
  for (const [remove, missing] of cases) {
    await withDir(async (dir) => {
      await loadOrCreateNodePki(dir, names);
      for (const f of remove) await Deno.remove(join(dir, f));
      const before = await listDir(dir);
      await assert.rejects(
        loadOrCreateNodePki(dir, names),
        (e) =>
          isPkiError(e, "partial") && e.details.path === dir &&
          JSON.stringify(e.details.missing) === JSON.stringify(missing) &&
          missing.every((m) => e.message.includes(`"${m}"`)),
        `removing ${remove.join(",")}`,
      );
      assert.deepEqual(await listDir(dir), before, "no file created or replaced");
    });
  }
});

Deno.test("a CA without server files gets a new server certificate from that CA", async () => {
  await withDir(async (dir) => {
    const first = await loadOrCreateNodePki(dir, names);
    await Deno.remove(join(dir, PKI_FILES.serverCert));
    await Deno.remove(join(dir, PKI_FILES.serverKey));
    const second = await loadOrCreateNodePki(dir, names);
    assert.deepEqual([...second.written].sort(), ["server.crt", "server.key"]);
    assert.equal(second.ca.cert.serialNumber, first.ca.cert.serialNumber);
  });
});

Deno.test("a server key that does not match its certificate is refused", async () => {
  await withDir(async (dir) => {
    await loadOrCreateNodePki(dir, names);
    await Deno.copyFile(join(dir, PKI_FILES.caKey), join(dir, PKI_FILES.serverKey));
    await assert.rejects(loadOrCreateNodePki(dir, names), (e) => isPkiError(e, "key_mismatch"));
  });
});

Deno.test("the server certificate is re-issued for new names and when due", async () => {
  await withDir(async (dir) => {
    const now = new Date("2030-01-01T00:00:00Z");
    const first = await loadOrCreateNodePki(dir, { ...names, now });
    const moved = await loadOrCreateNodePki(dir, {
      hostnames: ["node-1"],
      addresses: ["10.0.0.9"],
      now,
    });
    assert.deepEqual([...moved.written].sort(), ["server.crt", "server.key"]);
    assert.ok(subjectAltNamesOf(moved.server.cert).ip.includes("10.0.0.9"));
    assert.equal(moved.ca.cert.serialNumber, first.ca.cert.serialNumber);

    const later = new Date(now.getTime() + 340 * DAY_MS);
    const renewed = await loadOrCreateNodePki(dir, { ...names, now: later });
    assert.notEqual(renewed.server.cert.serialNumber, moved.server.cert.serialNumber);
    assert.ok(renewed.server.cert.notAfter > moved.server.cert.notAfter);
  });
});

Deno.test("a CA from the machine config is adopted and the server re-issued under it", async () => {
  await withDir(async (dir) => {
    await loadOrCreateNodePki(dir, names);
    const given = await createCertificateAuthority();
    const pki = await loadOrCreateNodePki(dir, { ...names, ca: given });
    assert.equal(pki.ca.cert.serialNumber, given.cert.serialNumber);
    assert.equal(await Deno.readTextFile(join(dir, PKI_FILES.caCert)), given.certPem);
    assert.ok(await pki.server.cert.verify({ publicKey: given.cert.publicKey }));
    const again = await loadOrCreateNodePki(dir, { ...names, ca: given });
    assert.deepEqual(again.written, []);
  });
});
