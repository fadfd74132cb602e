/**
 * `machinectl get kernelcmdlinestatus` against the real apid and machined-side server, on a
 * store the kernel-cmdline controller published into (fake /proc and boot entry): the table
 * (the booted line escaped), -o yaml and -o json, for every role.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { startApiFixture } from "../api/testing.ts";
import { parseMachineConfig } from "../config/mod.ts";
import { cmdlineController, FakeBootCmdlineBackend } from "../controllers/kernel/mod.ts";
import { FakeProcBackend } from "../platform/procfs/mod.ts";
import type { Role } from "../pki/mod.ts";
import { KERNEL_CMDLINE_STATUS, MACHINE_CONFIG, MACHINE_CONFIG_ID } from "../resources/mod.ts";
import { ControllerRuntime } from "../runtime/mod.ts";
import { waitForResource } from "../runtime/testing.ts";
import { clientConfig, runCli } from "./testing.ts";

Deno.test("machinectl get kernelcmdlinestatus: booted (escaped), desired, pending with the reason, every role", async () => {
  const f = await startApiFixture();
  const runtime = new ControllerRuntime(f.store);
  try {
    const line = "console=ttyS0 machined.slot=A x=\x1b[31m -- --v8";
    const proc = new FakeProcBackend().setFile("cmdline", `${line}\n`);
    const boot = new FakeBootCmdlineBackend({
      kind: "entry",
      slot: "A",
      file: "machined-a.conf",
      cmdline: "console=ttyS0 machined.slot=A -- --v8",
    });
    const r = parseMachineConfig(
      "version: v1alpha1\nmachine:\n  hostname: n\n  kernel:\n    args: {add: [nosmt]}\n",
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
    runtime.register(cmdlineController({ proc, boot }));
    runtime.start();
    await waitForResource(f.store, KERNEL_CMDLINE_STATUS, (x) => x.spec.state === "pending-reboot");
    for (const role of ["os:reader", "os:operator", "os:admin"] as Role[]) {
      const table = await runCli(await clientConfig(f, role), "get", "kernelcmdlinestatus");
      assert.equal(table.code, 0, `${role}: ${table.err}`);
      const [head, row] = table.out.trim().split("\n");
      assert.match(head, /STATE\s+PENDING\s+BOOTED\s+REASON/);
      assert.match(row, /KernelCmdlineStatus\s+cmdline\s+\d+\s+pending-reboot\s+nosmt\s+/);
      assert.ok(!row.includes("\x1b"), `a raw escape reached the terminal: ${JSON.stringify(row)}`);
      assert.ok(row.includes("x=\\x1b[31m"), row);
      assert.match(row, /machined-a\.conf: booted at the next reboot/);
    }
    const config = await clientConfig(f, "os:reader");
    const y = await runCli(config, "get", "kernelcmdline", "-o", "yaml");
    assert.equal(y.code, 0, y.err);
    const doc = parse(y.out);
    const spec = (Array.isArray(doc) ? doc[0] : doc).spec;
    assert.equal(spec.booted, line);
    assert.deepEqual(spec.desiredAdd, ["nosmt"]);
    assert.deepEqual(spec.pending, ["nosmt"]);
    assert.match(spec.next, /^console=ttyS0 machined\.slot=A nosmt machined\.args=\S+ -- --v8$/);
    const j = await runCli(config, "get", "kcs", "-o", "json");
    assert.equal(j.code, 0, j.err);
    const json = JSON.parse(j.out);
    assert.equal((Array.isArray(json) ? json[0] : json).spec.state, "pending-reboot");
  } finally {
    await runtime.stop();
    await f.close();
  }
});
