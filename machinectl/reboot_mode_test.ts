/**
 * `--mode` of `machinectl reboot` and `machinectl upgrade` reaches the node's
 * actions through the real API hops (RebootRequest.mode,
 * UpgradeRequest.reboot_mode); an upgrade's default becomes kexec in
 * NodeUpgrade.
 */
import assert from "node:assert/strict";
import { startApiFixture } from "../api/testing.ts";
import type { RebootMode } from "../api/server/mod.ts";
import { NodeUpgrade } from "../upgrade/mod.ts";
import { imagedEsp, testBundle, testKeys } from "../upgrade/testing.ts";
import { clientConfig, runCli as run } from "./testing.ts";

Deno.test("machinectl reboot --mode: kexec and powercycle reach the node; absent is default; others refused", async () => {
  const f = await startApiFixture();
  try {
    const operator = await clientConfig(f, "os:operator");
    for (const mode of ["kexec", "powercycle"]) {
      const r = await run(operator, "reboot", "--mode", mode);
      assert.equal(r.code, 0, r.err);
    }
    assert.equal((await run(operator, "reboot")).code, 0);
    assert.deepEqual(f.actions.rebootModes, ["kexec", "powercycle", "default"]);
    const bad = await run(operator, "reboot", "--mode", "warm");
    assert.notEqual(bad.code, 0);
    assert.match(bad.err, /--mode must be kexec or powercycle, not "warm"/);
    assert.equal(f.actions.rebootModes.length, 3, "nothing sent");
  } finally {
    await f.close();
  }
});

Deno.test("machinectl upgrade: reboots with kexec by default, --mode powercycle cold", async () => {
  const k = await testKeys();
  const dir = await Deno.makeTempDir();
  const f = await startApiFixture();
  try {
    const bundle = await testBundle({ key: k.signing, version: "2.0.0" });
    await Deno.writeFile(`${dir}/b.bundle`, bundle.bytes);
    const admin = await clientConfig(f, "os:admin");
    const modes: (RebootMode | undefined)[] = [];
    for (const argv of [[], ["--mode", "powercycle"], ["--mode", "kexec"]]) {
      const upgrade = new NodeUpgrade({
        esp: imagedEsp("1.0.0"),
        events: f.events,
        logger: f.logger,
        cmdline: () => Promise.resolve("console=ttyS0 machined.slot=A"),
        trustedKeys: () => [k.publicPem],
        bootId: () => Promise.resolve("boot-1"),
        reboot: (_by, mode) => modes.push(mode),
      });
      f.actions.upgrade = (b, o, by) => upgrade.upgrade(b, o, by);
      const r = await run(admin, "upgrade", "-f", `${dir}/b.bundle`, "--wait=false", ...argv);
      assert.equal(r.code, 0, r.err);
      await new Promise((res) => setTimeout(res, 200));
    }
    assert.deepEqual(modes, ["kexec", "powercycle", "kexec"]);
  } finally {
    await f.close();
    await Deno.remove(dir, { recursive: true });
  }
});
