/**
 * PullImage against Debian's real containerd, from a registry behind a
 * private CA (cri/testing_oci.ts on loopback): refused while containerd does
 * not trust the CA (an x509 error, nothing stored), pulled once containerd
 * runs with `SSL_CERT_FILE` naming a bundle that holds it, as machined starts
 * it when `machine.trusted_roots` is set (docs/hardening.md). containerd
 * speaks plain HTTP to a loopback registry, so it runs in its own mount
 * namespace whose /etc/hosts names the registry `registry.e2e.test` (on
 * 127.0.0.1): the host's /etc/hosts is never touched. Needs root, containerd
 * and unshare.
 */
import assert from "node:assert/strict";
import { createCriClient, type CriClient } from "./cri_client.ts";
import { containerdConfigToml } from "./containerd_config.ts";
import { ociImage, startOciRegistry } from "./testing_oci.ts";
import { tar } from "../machinectl/mod.ts";
import { createCertificateAuthority, issueServerCertificate } from "../pki/mod.ts";
import { parseMachineConfig } from "../config/mod.ts";

const hasContainerd = await Deno.stat("/usr/bin/containerd").then(() => true, () => false);
const isRoot = Deno.uid() === 0;
const hasOpenssl = await Deno.stat("/usr/bin/openssl").then(() => true, () => false);

const REGISTRY_HOST = "registry.e2e.test";

/**
 * containerd on its own root and socket under `dir`, with exactly `env`, in a
 * mount namespace where /etc/hosts names {@link REGISTRY_HOST}.
 */
async function startContainerd(dir: string, env: Record<string, string>) {
  const socket = `${dir}/run/containerd.sock`;
  await Deno.writeTextFile(
    `${dir}/config.toml`,
    containerdConfigToml({ root: `${dir}/root`, state: `${dir}/state` }, socket),
  );
  await Deno.writeTextFile(`${dir}/hosts`, `127.0.0.1 localhost\n127.0.0.1 ${REGISTRY_HOST}\n`);
  const script =
    'mount --bind "$1/hosts" /etc/hosts && exec /usr/bin/containerd --config "$1/config.toml"';
  const child = new Deno.Command("unshare", {
    args: ["--mount", "--propagation", "private", "sh", "-c", script, "sh", dir],
    clearEnv: true,
    env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin", ...env },
    stdout: "null",
    stderr: "null",
    stdin: "null",
  }).spawn();
  const client = createCriClient(socket, { timeoutMs: 5000 });
  const deadline = performance.now() + 30_000;
  while (!(await client.version().then(() => true, () => false))) {
    assert.ok(performance.now() < deadline, "containerd's CRI did not answer in 30 s");
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    client,
    async stop() {
      client.close();
      child.kill("SIGTERM");
      await child.status;
    },
  };
}

async function pullError(client: CriClient, ref: string): Promise<string> {
  try {
    await client.pullImage(ref, { timeoutMs: 60_000 });
  } catch (e) {
    return (e as Error).message;
  }
  return "";
}

/** What a pull through a TLS registry left to check. */
interface Pulled {
  id: string;
  ref: string;
  image: Awaited<ReturnType<typeof ociImage>>;
  registry: ReturnType<typeof startOciRegistry>;
  client: CriClient;
}

/**
 * A registry serving `e2e/hello:1` (holding `text`) with `cert`: containerd refuses the pull
 * while it trusts nothing but the system's roots, then pulls it with `bundlePem` as its
 * SSL_CERT_FILE; `check` sees the pull before everything is stopped.
 */
async function refusedThenPulled(
  dir: string,
  cert: { certPem: string; keyPem: string },
  bundlePem: string,
  text: string,
  check: (p: Pulled) => Promise<void> = () => Promise.resolve(),
) {
  const image = await ociImage(tar([{ name: "hello", data: new TextEncoder().encode(text) }]));
  const registry = startOciRegistry({
    hostname: "127.0.0.1",
    certPem: cert.certPem,
    keyPem: cert.keyPem,
    images: new Map([["e2e/hello:1", image]]),
  });
  const ref = `${REGISTRY_HOST}:${registry.port}/e2e/hello:1`;
  let ctd = await startContainerd(dir, {});
  try {
    const refused = await pullError(ctd.client, ref);
    assert.match(refused, /x509|certificate signed by unknown authority/, refused);
    assert.ok(!(await ctd.client.listImages()).some((i) => i.tags.includes(ref)));
    await ctd.stop();
    await Deno.writeTextFile(`${dir}/bundle.pem`, bundlePem);
    ctd = await startContainerd(dir, { SSL_CERT_FILE: `${dir}/bundle.pem` });
    const id = await ctd.client.pullImage(ref, { timeoutMs: 60_000 });
    assert.equal(id, image.config.digest, "the CRI's image id is the config's digest");
    await check({ id, ref, image, registry, client: ctd.client });
  } finally {
    await ctd.stop();
    await registry.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

Deno.test({
  name: "PullImage from a private-CA registry: refused untrusted, pulled with SSL_CERT_FILE " +
    "(needs root and containerd)",
  ignore: !isRoot || !hasContainerd,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "ctd-pull-" });
    const ca = await createCertificateAuthority({ commonName: "e2e private registry CA" });
    const server = await issueServerCertificate({ ca, hostnames: [REGISTRY_HOST], addresses: [] });
    await refusedThenPulled(dir, server, ca.certPem, "pulled\n", async (p) => {
      const pulled = (await p.client.listImages()).find((i) => i.tags.includes(p.ref));
      assert.ok(pulled, JSON.stringify(await p.client.listImages()));
      assert.deepEqual(pulled.digests, [
        `${REGISTRY_HOST}:${p.registry.port}/e2e/hello@${p.image.manifest.digest}`,
      ]);
      assert.ok(
        p.registry.requests.some((r) => /^GET \/v2\/e2e\/hello\/blobs\/sha256:\S+ 200$/.test(r)),
      );
    });
  },
});

/**
 * A self-signed certificate as `openssl req -x509` makes one (basicConstraints CA:TRUE by
 * default, or CA:FALSE; the registry's name in its SAN): the server's certificate is its own root.
 */
async function selfSignedCertificate(dir: string, host: string, ca: boolean) {
  const r = await new Deno.Command("openssl", {
    args: [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-days",
      "2",
      "-subj",
      `/CN=${host}`,
      "-addext",
      `subjectAltName=DNS:${host}`,
      "-addext",
      `basicConstraints=critical,CA:${ca ? "TRUE" : "FALSE"}`,
      "-keyout",
      `${dir}/self.key`,
      "-out",
      `${dir}/self.crt`,
    ],
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.ok(r.success, new TextDecoder().decode(r.stderr));
  return {
    certPem: await Deno.readTextFile(`${dir}/self.crt`),
    keyPem: await Deno.readTextFile(`${dir}/self.key`),
  };
}

Deno.test({
  name: "Talos failure mode: a self-signed registry failing with its certificate configured " +
    "(machine.trusted_roots accepts it, CA:TRUE or CA:FALSE; containerd pulls with the bundle) " +
    "(needs root, containerd and openssl)",
  ignore: !isRoot || !hasContainerd || !hasOpenssl,
  fn: async () => {
    for (const ca of [true, false]) await pullSelfSigned(ca);
  },
});

/** One self-signed registry: refused, then pulled with its certificate as the only root. */
async function pullSelfSigned(ca: boolean) {
  const dir = await Deno.makeTempDir({ prefix: "ctd-self-" });
  const self = await selfSignedCertificate(dir, REGISTRY_HOST, ca);
  const pem = self.certPem.trim().split("\n").map((l) => `        ${l}`).join("\n");
  const parsed = parseMachineConfig(
    `version: v1alpha1\nmachine:\n  hostname: n\n  trusted_roots:\n    - name: registry\n` +
      `      pem: |\n${pem}\n`,
    "t.yaml",
  );
  assert.ok(parsed.ok, parsed.ok ? "" : parsed.errors.map((e) => e.format()).join("\n"));
  await refusedThenPulled(dir, self, parsed.config.machine.trusted_roots[0].pem, "self\n");
}
