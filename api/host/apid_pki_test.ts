import assert from "node:assert/strict";
import { join } from "node:path";
import { loadApidPki } from "../edge/mod.ts";
import { loadOrCreateNodePki } from "../../pki/mod.ts";
import { APID_PKI_FILES, prepareApidPki } from "./apid_pki.ts";

Deno.test("apid's PKI directory holds the CA certificate and the server pair, never the CA key", async () => {
  const root = await Deno.makeTempDir({ prefix: "machined-apid-pki-" });
  try {
    const pki = await loadOrCreateNodePki(join(root, "pki"), {
      hostnames: ["node-1"],
      addresses: ["127.0.0.1"],
    });
    const dir = join(root, "apid-pki");
    // An older machined left the CA key here: it must go.
    await Deno.mkdir(dir, { mode: 0o700 });
    await Deno.writeTextFile(join(dir, "ca.key"), pki.ca.keyPem);
    await prepareApidPki(pki, dir);
    const names: string[] = [];
    for await (const e of Deno.readDir(dir)) names.push(e.name);
    assert.deepEqual(names.sort(), [...APID_PKI_FILES].sort());
    assert.deepEqual(names.sort(), ["ca.crt", "server.crt", "server.key"]);
    const caKeyBody = pki.ca.keyPem.trim().split("\n").slice(1, -1).join("\n");
    for (const name of names) {
      const text = await Deno.readTextFile(join(dir, name));
      assert.ok(!text.includes(caKeyBody), `${name} must not hold the CA key`);
      assert.equal((await Deno.stat(join(dir, name))).mode! & 0o777, 0o600);
    }
    const keys = names.filter((n) => n.endsWith(".key"));
    assert.deepEqual(keys, ["server.key"], "no key but the server's");
    assert.equal((await Deno.stat(dir)).mode! & 0o777, 0o700);
    // What apid loads from there is exactly what it needs.
    const loaded = await loadApidPki(dir);
    assert.equal(loaded.server.certPem, pki.server.certPem);
    assert.equal(loaded.ca?.certPem, pki.ca.certPem);
    assert.equal(loaded.maintenance, false);
    assert.ok(loaded.ca && !("key" in loaded.ca), "apid's view of the CA has no key");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
