import assert from "node:assert/strict";
import { join } from "node:path";
import { resolveCredentials } from "./client_config.ts";
import { generateClientConfig } from "./generate_client_config.ts";
import { BUNDLE_FILES, generateNodeBundle, type MachineConfigInput } from "./node_bundle.ts";
import { isPkiError } from "./pki_error.ts";
import { roleFromCertificate } from "./role.ts";
import { loadSecretsBundle } from "./secrets_bundle.ts";
import { readClientConfig } from "./client_config.ts";
import { verifyClientCertificate } from "./verify_client_certificate.ts";

Deno.test("generateNodeBundle writes machine config, secrets and an admin client config", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const outDir = join(dir, "out");
    let seen: MachineConfigInput | undefined;
    const bundle = await generateNodeBundle({
      name: "node-1",
      endpoint: "10.0.0.5",
      outDir,
      renderMachineConfig: (input) => {
        seen = input;
        return `hostname: ${input.name}\n`;
      },
    });
    const files = (await Array.fromAsync(Deno.readDir(outDir))).map((e) => e.name).sort();
    assert.deepEqual(files, Object.values(BUNDLE_FILES).sort());
    for (const f of files) assert.equal((await Deno.stat(join(outDir, f))).mode! & 0o777, 0o600);
    assert.equal(await Deno.readTextFile(bundle.paths.machineConfig), "hostname: node-1\n");
    assert.equal(seen?.ca.certPem, bundle.secrets.ca.certPem);

    const secrets = await loadSecretsBundle(bundle.paths.secrets);
    const client = await readClientConfig(bundle.paths.clientConfig);
    const creds = resolveCredentials(client);
    assert.equal(creds.name, "node-1");
    assert.deepEqual(creds.endpoints, ["10.0.0.5:50000"]);
    assert.equal(creds.caPem, secrets.ca.certPem);
    assert.equal(roleFromCertificate(creds.certPem), "os:admin");
    const id = await verifyClientCertificate(creds.certPem, secrets.ca);
    assert.equal(id.name, "admin");

    // a second run refuses to overwrite, naming the files; force overwrites
    await assert.rejects(
      generateNodeBundle({ name: "node-1", endpoint: "x", outDir, renderMachineConfig: "a: 1\n" }),
      (e) => isPkiError(e, "exists") && e.details.present?.length === 3,
    );
    const again = await generateNodeBundle({
      name: "node-1",
      endpoint: "x",
      outDir,
      renderMachineConfig: "a: 1\n",
      force: true,
      secrets,
    });
    assert.equal(again.secrets.ca.cert.serialNumber, secrets.ca.cert.serialNumber);
    assert.equal(await Deno.readTextFile(again.paths.machineConfig), "a: 1\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("generateClientConfig issues a new role certificate from the secrets", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { secrets } = await generateNodeBundle({
      name: "n",
      endpoint: "n",
      outDir: dir,
      renderMachineConfig: "",
    });
    const config = await generateClientConfig({
      secrets,
      role: "os:reader",
      name: "alice",
      endpoints: ["n", "10.0.0.6:51000"],
    });
    assert.equal(config.context, "alice");
    const creds = resolveCredentials(config);
    assert.deepEqual(creds.endpoints, ["n:50000", "10.0.0.6:51000"]);
    assert.equal((await verifyClientCertificate(creds.certPem, secrets.ca)).role, "os:reader");
    await assert.rejects(
      generateClientConfig({ secrets, role: "os:reader", name: "a", endpoints: [] }),
      RangeError,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
