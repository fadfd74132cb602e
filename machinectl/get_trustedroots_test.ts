/**
 * `machinectl get trustedroots` against the real apid and machined-side server, on a store the
 * trust controller published into (over a fake file store): the table, -o yaml and -o json; every
 * role, readers included, may read it.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { startApiFixture } from "../api/testing.ts";
import { parseMachineConfig } from "../config/mod.ts";
import { FakeBundleFiles, SYSTEM_BUNDLE_PATH, trustControllers } from "../controllers/trust/mod.ts";
import { createCertificateAuthority, type Role } from "../pki/mod.ts";
import { MACHINE_CONFIG, MACHINE_CONFIG_ID, TRUSTED_ROOTS_STATUS } from "../resources/mod.ts";
import { ControllerRuntime } from "../runtime/mod.ts";
import { waitForResource } from "../runtime/testing.ts";
import { clientConfig, runCli } from "./testing.ts";

Deno.test("machinectl get trustedroots: table, yaml and json, for every role (readers may read it)", async () => {
  const f = await startApiFixture();
  const runtime = new ControllerRuntime(f.store);
  try {
    const system = await createCertificateAuthority({ commonName: "system root" });
    const ca = await createCertificateAuthority({ commonName: "registry CA" });
    const files = new FakeBundleFiles();
    files.files.set(SYSTEM_BUNDLE_PATH, system.certPem);
    const pem = ca.certPem.trimEnd().split("\n").map((l) => `        ${l}`).join("\n");
    const r = parseMachineConfig(
      `version: v1alpha1\nmachine:\n  hostname: n\n  trusted_roots:\n    - name: registry\n      pem: |\n${pem}\n`,
      "t",
    );
    if (!r.ok) throw new Error(r.errors.map((e) => e.format()).join("\n"));
    f.store.create({
      type: MACHINE_CONFIG,
      namespace: "config",
      id: MACHINE_CONFIG_ID,
      owner: "test",
      spec: { source: "test", config: r.config },
    });
    for (const c of trustControllers({ files, bundlePath: "/run/t/ca.crt" })) runtime.register(c);
    runtime.start();
    await waitForResource(f.store, TRUSTED_ROOTS_STATUS, (x) => x.spec.roots.length === 1);
    for (const role of ["os:reader", "os:operator", "os:admin"] as Role[]) {
      const config = await clientConfig(f, role);
      const table = await runCli(config, "get", "trustedroots");
      assert.equal(table.code, 0, `${role}: ${table.err}`);
      const [head, row] = table.out.trim().split("\n");
      assert.match(head, /SHA256\s+SYSTEM\s+ROOTS\s+PATH/);
      assert.match(
        row,
        /TrustedRootsStatus\s+bundle\s+\d+\s+[0-9a-f]{12}\s+1\s+registry\s+\/run\/t\/ca\.crt/,
      );
    }
    const config = await clientConfig(f, "os:reader");
    const y = await runCli(config, "get", "trs", "-o", "yaml");
    assert.equal(y.code, 0, y.err);
    const doc = parse(y.out);
    const spec = (Array.isArray(doc) ? doc[0] : doc).spec;
    assert.deepEqual(spec.roots[0].name, "registry");
    assert.equal(spec.roots[0].subject, "O=machined, CN=registry CA");
    assert.match(spec.roots[0].fingerprint, /^SHA256:[0-9a-f]{64}$/);
    assert.equal(spec.roots[0].notAfter, ca.cert.notAfter.toISOString());
    assert.match(spec.sha256, /^[0-9a-f]{64}$/);
    const j = await runCli(config, "get", "trustedrootsstatus", "-o", "json");
    assert.equal(j.code, 0, j.err);
    const json = JSON.parse(j.out);
    assert.equal((Array.isArray(json) ? json[0] : json).spec.systemCertificates, 1);
  } finally {
    await runtime.stop();
    await f.close();
  }
});
