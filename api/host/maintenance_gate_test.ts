import assert from "node:assert/strict";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { renderConfigTemplate } from "../../config/mod.ts";
import { createCertificateAuthority, createSelfSignedServerCertificate } from "../../pki/mod.ts";
import { loadApidPki } from "../edge/mod.ts";
import { codeOf as grpcCodeOf } from "../server/mod.ts";
import { NodeMaintenanceGate } from "./maintenance_gate.ts";
import { prepareMaintenanceApidPki } from "./maintenance_api.ts";

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "ok";
  } catch (e) {
    return Code[grpcCodeOf(e)];
  }
}

Deno.test("maintenance gate: two configs at once, only the first gets in", async () => {
  const ca = await createCertificateAuthority();
  const text = renderConfigTemplate({
    hostname: "n",
    ca: { certPem: ca.certPem, keyPem: ca.keyPem },
  });
  const gate = new NodeMaintenanceGate();
  assert.equal(await codeOf(gate.apply(text, false, () => Promise.resolve())), "PermissionDenied");
  gate.serving = true;
  let runs = 0;
  const slow = () => new Promise<void>((r) => setTimeout(() => (runs++, r()), 20));
  const [a, b] = await Promise.all([
    codeOf(gate.apply(text, false, slow)),
    codeOf(gate.apply(text, false, slow)),
  ]);
  assert.deepEqual([a, b, runs], ["ok", "PermissionDenied", 1]);
  assert.equal(gate.active, false);
  gate.reopen();
  assert.equal(gate.active, true);
});

Deno.test("maintenance gate: a dry run or a failed apply leaves it open", async () => {
  const ca = await createCertificateAuthority();
  const text = renderConfigTemplate({
    hostname: "n",
    ca: { certPem: ca.certPem, keyPem: ca.keyPem },
  });
  const gate = new NodeMaintenanceGate();
  gate.serving = true;
  assert.equal(await codeOf(gate.apply(text, true, () => Promise.resolve())), "ok");
  const invalid = () => Promise.reject(new ConnectError("bad", Code.InvalidArgument));
  assert.equal(await codeOf(gate.apply(text, false, invalid)), "InvalidArgument");
  assert.equal(gate.active, true);
  const noCa = renderConfigTemplate({ hostname: "n" });
  assert.equal(await codeOf(gate.apply(noCa, false, () => Promise.resolve())), "InvalidArgument");
  assert.equal(gate.active, true);
});

Deno.test("apid serves maintenance only on machined's marker, never on a merely missing ca.crt", async () => {
  const dir = await Deno.makeTempDir({ prefix: "machined-marker-" });
  try {
    const server = await createSelfSignedServerCertificate({ hostnames: ["n"], addresses: [] });
    await Deno.writeTextFile(join(dir, "stale"), "x");
    await prepareMaintenanceApidPki(server, dir);
    const names = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
    assert.deepEqual(names, ["maintenance", "server.crt", "server.key"]);
    const pki = await loadApidPki(dir);
    assert.equal(pki.maintenance, true);
    assert.equal(pki.ca, undefined);
    await Deno.remove(join(dir, "maintenance"));
    await assert.rejects(() => loadApidPki(dir), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
