/**
 * The operator's path end to end, root-free on loopback: an HTTPS server whose certificate a
 * private CA issued is refused by machined's own clients (a config URL fetch and an `upgrade
 * --from` fetch) until the CA is added to `machine.trusted_roots`, accepted once the
 * controller has rewritten the bundle, with no restart in between, and refused again once the
 * CA is removed. A self-signed server certificate (CA:FALSE) configured as the root is accepted
 * the same way.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parseMachineConfig } from "../../config/mod.ts";
import { ConfigFetchError, fetchConfigOnce } from "../../config/keeper/mod.ts";
import {
  createCertificateAuthority,
  createTrustedFetch,
  issueServerCertificate,
  x509,
} from "../../pki/mod.ts";
import {
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  type ResourceSpecs,
  TRUSTED_ROOTS_STATUS,
} from "../../resources/mod.ts";
import { ControllerRuntime, Store } from "../../runtime/mod.ts";
import { waitForResource } from "../../runtime/testing.ts";
import { fetchBundle } from "../../upgrade/mod.ts";
import { DiskBundleFiles } from "./bundle_files.ts";
import { trustedRootsController } from "./trusted_roots_controller.ts";

const CONFIG = "version: v1alpha1\nmachine:\n  hostname: fetched\n";

function configWithRoot(pem?: string) {
  const roots = pem
    ? `\n    - name: private\n      pem: |\n${
      pem.trimEnd().split("\n").map((l) => `        ${l}`).join("\n")
    }\n`
    : " []\n";
  const r = parseMachineConfig(`${CONFIG}  trusted_roots:${roots}`, "t");
  if (!r.ok) throw new Error(r.errors.map((e) => e.format()).join("\n"));
  return r.config;
}

async function drain(body: AsyncIterable<Uint8Array>): Promise<string> {
  const parts: Uint8Array[] = [];
  for await (const c of body) parts.push(c);
  return new TextDecoder().decode(
    new Uint8Array(await new Blob(parts as BlobPart[]).arrayBuffer()),
  );
}

/** What a test drives: a loopback HTTPS server, machined's trusted fetch, and the config. */
interface TrustedServer {
  url: string;
  trusted: typeof fetch;
  setConfig(pem?: string): Promise<unknown>;
  rootsWritten(n: number): Promise<unknown>;
}

/**
 * Serves CONFIG over HTTPS with `cert`/`key` on 127.0.0.1, runs the trusted roots controller
 * over a bundle in a temporary directory, and gives `f` the fetch that reads that bundle.
 */
async function withTrustedServer(
  cert: { certPem: string; keyPem: string },
  f: (s: TrustedServer) => Promise<void>,
) {
  const dir = await Deno.makeTempDir({ prefix: "machined-trust-" });
  const http = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert: cert.certPem, key: cert.keyPem, onListen() {} },
    () => new Response(CONFIG),
  );
  const bundlePath = join(dir, "trust", "ca-certificates.crt");
  const store = new Store<ResourceSpecs>();
  const runtime = new ControllerRuntime(store);
  runtime.register(trustedRootsController({ files: new DiskBundleFiles(), bundlePath }));
  runtime.start();
  try {
    await f({
      url: `https://127.0.0.1:${http.addr.port}/config.yaml`,
      trusted: createTrustedFetch({ bundlePath }),
      setConfig: (pem) =>
        store.modify(
          { type: MACHINE_CONFIG, namespace: "config", id: MACHINE_CONFIG_ID },
          "test",
          () => ({ source: "test", config: configWithRoot(pem) }),
        ),
      rootsWritten: (n) =>
        waitForResource(store, TRUSTED_ROOTS_STATUS, (r) => r.spec.roots.length === n),
    });
  } finally {
    await runtime.stop();
    await http.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a private CA is trusted by machined's config and upgrade fetches once configured, without a restart", async () => {
  const ca = await createCertificateAuthority({ commonName: "private registry CA" });
  const server = await issueServerCertificate({
    ca,
    hostnames: ["localhost"],
    addresses: ["127.0.0.1"],
  });
  await withTrustedServer(server, async ({ url, trusted, setConfig, rootsWritten }) => {
    await setConfig();
    await rootsWritten(0);
    await assert.rejects(fetchConfigOnce(url, { fetch: trusted }), (e) => {
      assert.ok(e instanceof ConfigFetchError);
      assert.match(e.message, /invalid peer certificate: UnknownIssuer/);
      return true;
    });
    await assert.rejects(fetchBundle(url, trusted), /invalid peer certificate: UnknownIssuer/);

    await setConfig(ca.certPem);
    await rootsWritten(1);
    assert.equal(await fetchConfigOnce(url, { fetch: trusted }), CONFIG);
    const fetched = await fetchBundle(url, trusted);
    assert.equal(await drain(fetched.body), CONFIG);

    await setConfig();
    await rootsWritten(0);
    await assert.rejects(fetchConfigOnce(url, { fetch: trusted }), ConfigFetchError);
  });
});

/** A self-signed server certificate for 127.0.0.1 (CA:FALSE) and its key, PEM. */
async function selfSignedServer() {
  const alg = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };
  const keys = await crypto.subtle.generateKey(alg, true, ["sign", "verify"]) as CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: "01",
    name: "CN=self-signed registry",
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 86_400_000),
    keys,
    signingAlgorithm: alg,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.SubjectAlternativeNameExtension([{ type: "ip", value: "127.0.0.1" }]),
    ],
  });
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", keys.privateKey));
  const b64 = btoa(String.fromCharCode(...pkcs8)).replace(/.{64}/g, "$&\n");
  return {
    certPem: cert.toString("pem"),
    keyPem: `-----BEGIN PRIVATE KEY-----\n${b64}\n-----END PRIVATE KEY-----\n`,
  };
}

Deno.test("Talos failure mode: a self-signed server refused even when configured (its own certificate as the root is trusted)", async () => {
  const self = await selfSignedServer();
  await withTrustedServer(self, async ({ url, trusted, setConfig, rootsWritten }) => {
    await setConfig();
    await rootsWritten(0);
    await assert.rejects(fetchConfigOnce(url, { fetch: trusted }), ConfigFetchError);
    await setConfig(self.certPem);
    await rootsWritten(1);
    assert.equal(await fetchConfigOnce(url, { fetch: trusted }), CONFIG);
  });
});
