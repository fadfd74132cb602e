/**
 * Real sysctls through /proc/sys, in a private network namespace
 * (`unshare --net`): net.* keys are per namespace, so the writes here never
 * reach the host's, and the inner run refuses to start unless its network
 * namespace differs from the outer one. Needs root (unshare); skipped
 * otherwise.
 */
import assert from "node:assert/strict";
import {
  assertNotHostNamespace,
  insideTestNamespace,
  rerunInNamespace,
} from "../../platform/testing.ts";
import { parseMachineConfig } from "../../config/mod.ts";
import {
  KERNEL_PARAM_STATUS,
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  type ResourceSpecs,
} from "../../resources/mod.ts";
import { ControllerRuntime, Store } from "../../runtime/mod.ts";
import { waitForAbsence, waitForResource } from "../../runtime/testing.ts";
import { ProcSysctlBackend } from "./sysctl_backend_proc.ts";
import { sysctlBackendConformance } from "./sysctl_backend_conformance.ts";
import { sysctlController } from "./sysctl_controller.ts";

const isRoot = Deno.uid() === 0;
const FORWARD = "/proc/sys/net/ipv4/ip_forward";
const PING = "/proc/sys/net/ipv4/ping_group_range";

if (!insideTestNamespace("net")) {
  if (!isRoot) console.log("skipping real sysctl tests: unshare --net needs root");
  Deno.test({
    name: "sysctls through /proc/sys in a private network namespace (needs root)",
    ignore: !isRoot,
    fn: async () => {
      const before = [await Deno.readTextFile(FORWARD), await Deno.readTextFile(PING)];
      const r = await rerunInNamespace("net", ["--net"], import.meta.url, { timeoutMs: 60_000 });
      assert.equal(r.code, 0, r.output);
      assert.match(r.output, /\| 5 passed \| 0 failed \(/, "all ran: none failed or ignored");
      const after = [await Deno.readTextFile(FORWARD), await Deno.readTextFile(PING)];
      assert.deepEqual(after, before, "the host's sysctls changed");
    },
  });
} else {
  assertNotHostNamespace("net");

  sysctlBackendConformance("ProcSysctlBackend on /proc/sys (private netns)", () =>
    Promise.resolve({
      backend: new ProcSysctlBackend(),
      key: "net.ipv4.ip_forward",
      invalidValue: "abc",
    }));

  Deno.test("SysctlController applies, reports and restores real net.* sysctls", async () => {
    const store = new Store<ResourceSpecs>();
    const runtime = new ControllerRuntime(store);
    runtime.register(sysctlController({ backend: new ProcSysctlBackend() }));
    runtime.start();
    const set = (lines: string) => {
      const r = parseMachineConfig(
        `version: v1alpha1\nmachine:\n  hostname: n\n  sysctls:${lines ? "\n" + lines : " {}"}\n`,
        "t",
      );
      assert.ok(r.ok);
      return store.modify(
        { type: MACHINE_CONFIG, namespace: "config", id: MACHINE_CONFIG_ID },
        "test",
        () => ({ source: "test", config: r.config }),
      );
    };
    const forward0 = (await Deno.readTextFile(FORWARD)).trim();
    const ping0 = (await Deno.readTextFile(PING)).trim().split(/\s+/).join(" ");
    try {
      await set(
        '    net.ipv4.ip_forward: 1\n    net/ipv4/ping_group_range: "0 2147483647"\n' +
          '    net.ipv4.machined_no_such_key: "1"',
      );
      const fwd = await waitForResource(
        store,
        KERNEL_PARAM_STATUS,
        (x) => x.metadata.id === "net.ipv4.ip_forward" && x.spec.applied,
      );
      assert.equal(fwd.spec.default, forward0);
      assert.equal((await Deno.readTextFile(FORWARD)).trim(), "1");
      const ping = await waitForResource(
        store,
        KERNEL_PARAM_STATUS,
        (x) => x.metadata.id === "net/ipv4/ping_group_range" && x.spec.applied,
      );
      assert.equal(ping.spec.current, "0 2147483647");
      assert.equal(ping.spec.default, ping0);
      const unknown = await waitForResource(
        store,
        KERNEL_PARAM_STATUS,
        (x) => x.metadata.id === "net.ipv4.machined_no_such_key",
      );
      assert.equal(unknown.spec.error, "unknown sysctl");

      await set("");
      await waitForAbsence(store, KERNEL_PARAM_STATUS, () => true);
      assert.equal((await Deno.readTextFile(FORWARD)).trim(), forward0, "ip_forward restored");
      assert.equal(
        (await Deno.readTextFile(PING)).trim().split(/\s+/).join(" "),
        ping0,
        "ping_group_range restored",
      );
    } finally {
      await runtime.stop();
    }
  });
}
