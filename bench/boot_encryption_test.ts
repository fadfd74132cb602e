import assert from "node:assert/strict";
import { parseMachineConfig } from "../config/mod.ts";
import { ensureNodeBundle } from "../imager/mod.ts";
import { checkUnlocks, encryptedConfig } from "./boot_encryption.ts";
import type { ResourceDoc } from "../e2e/mod.ts";

Deno.test("boot encryption bench: the up config with both volumes LUKS2 by nodeid and static is valid", async () => {
  const dir = await Deno.makeTempDir();
  const bundle = await ensureNodeBundle(dir, { name: "bench", port: 50000 });
  const up = await Deno.readTextFile(bundle.paths.machineConfig);
  await Deno.remove(dir, { recursive: true });
  const r = parseMachineConfig(encryptedConfig(up), "bench.yaml");
  assert.ok(r.ok, r.ok ? "" : r.errors.map((e) => e.format()).join("\n"));
  for (
    const v of [
      r.config.machine.install?.encryption?.state,
      r.config.machine.install?.encryption?.ephemeral,
    ]
  ) {
    assert.deepEqual(v?.keys.map((k) => k.kind), ["nodeid", "static"]);
  }
});

const volume = (id: string, encrypted: boolean, kind?: string): ResourceDoc =>
  ({
    metadata: { id },
    spec: { phase: "ready", encrypted, unlockedBy: kind ? { slot: 0, kind } : undefined },
  }) as unknown as ResourceDoc;

Deno.test("boot encryption bench: a boot that did not open what its side says fails the run", () => {
  const byNodeid = [volume("STATE", true, "nodeid"), volume("EPHEMERAL", true, "nodeid")];
  assert.equal(checkUnlocks("encrypted", true, byNodeid), "EPHEMERAL:nodeid,STATE:nodeid");
  assert.equal(
    checkUnlocks("plain", true, [volume("STATE", false), volume("EPHEMERAL", false)]),
    "EPHEMERAL:-,STATE:-",
  );
  assert.equal(
    checkUnlocks("encrypted", false, [volume("STATE", true), volume("EPHEMERAL", true)]),
    "EPHEMERAL:-,STATE:-",
  );
  assert.throws(
    () => checkUnlocks("encrypted", true, [volume("STATE", true, "static")]),
    /STATE was not opened by its nodeid key/,
  );
  assert.throws(
    () => checkUnlocks("plain", true, [volume("STATE", true, "nodeid")]),
    /STATE: encrypted=true on the plain side/,
  );
  assert.throws(
    () => checkUnlocks("encrypted", false, [volume("EPHEMERAL", false)]),
    /EPHEMERAL: encrypted=false/,
  );
});
