/**
 * `machinectl get securebootstatus` against the real apid and machined-side server, on a store
 * the firmware controller published into from a fake firmware: the table, -o yaml and -o json;
 * every role, readers included, may read it.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { startApiFixture } from "../api/testing.ts";
import { readSecureBootStatus } from "../controllers/firmware/mod.ts";
import {
  buildSignatureList,
  EFI_CERT_SHA256_GUID,
  EFI_GLOBAL_VARIABLE_GUID as G,
  FakeFirmwareBackend,
} from "../platform/firmware/mod.ts";
import type { Role } from "../pki/mod.ts";
import { SECURE_BOOT_STATUS, SECURE_BOOT_STATUS_ID } from "../resources/mod.ts";
import { clientConfig, runCli } from "./testing.ts";

Deno.test("machinectl get securebootstatus: table, yaml and json, for every role (readers may read it)", async () => {
  const f = await startApiFixture();
  try {
    const fw = new FakeFirmwareBackend()
      .setVariable("SecureBoot", G, Uint8Array.of(1))
      .setVariable("SetupMode", G, Uint8Array.of(0))
      .setVariable(
        "db",
        "d719b2cb-3d3a-4596-a3bc-dad00e67656f",
        buildSignatureList(EFI_CERT_SHA256_GUID, [{ owner: G, data: new Uint8Array(32) }]),
      );
    fw.lockdownText = "none [integrity] confidentiality\n";
    fw.hasTpm = true;
    fw.pcrs.set(7, "ab".repeat(32));
    f.store.create({
      type: SECURE_BOOT_STATUS,
      namespace: "runtime",
      id: SECURE_BOOT_STATUS_ID,
      owner: "firmware.SecureBootStatusController",
      spec: await readSecureBootStatus(fw),
    });
    for (const role of ["os:reader", "os:operator", "os:admin"] as Role[]) {
      const config = await clientConfig(f, role);
      const table = await runCli(config, "get", "securebootstatus");
      assert.equal(table.code, 0, `${role}: ${table.err}`);
      const [head, row] = table.out.trim().split("\n");
      assert.match(head, /SECUREBOOT\s+SETUPMODE\s+LOCKDOWN\s+DB\s+TPM\s+REASON/);
      assert.match(
        row,
        /SecureBootStatus\s+secureboot\s+\d+\s+on\s+off\s+integrity\s+0 certs, 1 hash\s+yes \(1 PCRs\)/,
      );
    }
    const config = await clientConfig(f, "os:reader");
    const y = await runCli(config, "get", "sbs", "-o", "yaml");
    assert.equal(y.code, 0, y.err);
    const doc = parse(y.out);
    const spec = (Array.isArray(doc) ? doc[0] : doc).spec;
    assert.equal(spec.secureBoot, "on");
    assert.equal(spec.db.hashes, 1);
    assert.deepEqual(spec.pcrs, [{ index: 7, sha256: "ab".repeat(32) }]);
    const j = await runCli(config, "get", "secureboot", "-o", "json");
    assert.equal(j.code, 0, j.err);
    const json = JSON.parse(j.out);
    assert.equal((Array.isArray(json) ? json[0] : json).spec.lockdown, "integrity");
  } finally {
    await f.close();
  }
});
