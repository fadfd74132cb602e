/**
 * `machinectl get upgradestatus` against the real apid and machined-side
 * server, on a store the upgrade module published into from a fake ESP:
 * the table, -o yaml and -o json; every role, readers included, may read it.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { startApiFixture } from "../api/testing.ts";
import { memoryRecordStore, UpgradeBook, UpgradeStatusPublisher } from "../upgrade/mod.ts";
import { imagedEsp } from "../upgrade/testing.ts";
import type { Role } from "../pki/mod.ts";
import { clientConfig, runCli } from "./testing.ts";

Deno.test("machinectl get upgradestatus: table, yaml and json, for every role (readers may read it)", async () => {
  const f = await startApiFixture();
  try {
    const book = new UpgradeBook(memoryRecordStore({ version: 1, floor: "2.0.0" }));
    await book.note({
      outcome: "rolled-back",
      version: "1.0.0",
      slot: "A",
      reason: "rollback by admin",
    });
    await new UpgradeStatusPublisher({
      store: f.store,
      esp: imagedEsp("1.0.0"),
      book,
      booted: () => Promise.resolve("A" as const),
    }).refresh();
    for (const role of ["os:reader", "os:operator", "os:admin"] as Role[]) {
      const config = await clientConfig(f, role);
      const table = await runCli(config, "get", "upgradestatus");
      assert.equal(table.code, 0, `${role}: ${table.err}`);
      const [head, row] = table.out.trim().split("\n");
      assert.match(head, /BOOTED\s+A\s+B\s+FLOOR\s+LAST/);
      assert.match(
        row,
        /UpgradeStatus\s+upgrade\s+\d+\s+A\s+blessed 1\.0\.0 g1 \(booted\)\s+blessed 1\.0\.0 g0\s+2\.0\.0\s+rolled-back 1\.0\.0 \(slot A\)/,
      );
    }
    const config = await clientConfig(f, "os:reader");
    const y = await runCli(config, "get", "upgradestatus", "-o", "yaml");
    assert.equal(y.code, 0, y.err);
    const doc = parse(y.out);
    const spec = (Array.isArray(doc) ? doc[0] : doc).spec;
    assert.equal(spec.floor, "2.0.0");
    assert.equal(spec.floorSource, "state");
    assert.deepEqual(spec.slots.map((s: { state: string }) => s.state), ["blessed", "blessed"]);
    assert.equal(spec.last.reason, "rollback by admin");
    const j = await runCli(config, "get", "us", "-o", "json");
    assert.equal(j.code, 0, j.err);
    const json = JSON.parse(j.out);
    assert.equal((Array.isArray(json) ? json[0] : json).spec.booted, "A");
  } finally {
    await f.close();
  }
});
