import assert from "node:assert/strict";
import { parseMachineConfig } from "../../config/mod.ts";
import {
  KERNEL_MODULE_STATUS,
  KERNEL_PARAM_STATUS,
  type KernelParamStatusSpec,
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  type ResourceSpecs,
} from "../../resources/mod.ts";
import { ControllerRuntime, FakeClock, Store } from "../../runtime/mod.ts";
import { waitForAbsence, waitForResource } from "../../runtime/testing.ts";
import { EventBus } from "../../events/mod.ts";
import type { SysctlBackend } from "./sysctl_backend.ts";
import { FakeSysctlBackend } from "./sysctl_backend_fake.ts";
import { ProcSysctlBackend } from "./sysctl_backend_proc.ts";
import { sysctlController } from "./sysctl_controller.ts";

function setup(backend: SysctlBackend) {
  const clock = new FakeClock();
  const store = new Store<ResourceSpecs>({ clock });
  const runtime = new ControllerRuntime(store, { clock });
  const events = new EventBus();
  runtime.register(sysctlController({ backend, events }));
  runtime.start();
  const setSysctls = (lines: string) => {
    const r = parseMachineConfig(
      `version: v1alpha1\nmachine:\n  hostname: n\n  sysctls:${lines ? "\n" + lines : " {}"}\n`,
      "t",
    );
    if (!r.ok) throw new Error(r.errors.map((e) => e.format()).join("\n"));
    return store.modify(
      { type: MACHINE_CONFIG, namespace: "config", id: MACHINE_CONFIG_ID },
      "test",
      () => ({ source: "test", config: r.config }),
    );
  };
  const status = (id: string, pred: (s: KernelParamStatusSpec) => boolean = () => true) =>
    waitForResource(store, KERNEL_PARAM_STATUS, (r) => r.metadata.id === id && pred(r.spec));
  return { clock, store, runtime, events, setSysctls, status };
}

/** A /proc/sys look-alike in a temp directory. */
async function procTree(files: Record<string, string>): Promise<string> {
  const root = await Deno.makeTempDir({ prefix: "machined-procsys-" });
  for (const [path, value] of Object.entries(files)) {
    await Deno.mkdir(`${root}/${path.slice(0, path.lastIndexOf("/"))}`, { recursive: true });
    await Deno.writeTextFile(`${root}/${path}`, value);
  }
  return root;
}

Deno.test("sysctls in a /proc/sys tree: apply, change, remove restores the default", async () => {
  const root = await procTree({
    "net/ipv4/ip_forward": "0\n",
    "vm/swappiness": "60\n",
  });
  const t = setup(new ProcSysctlBackend(root));
  const file = (p: string) => Deno.readTextFile(`${root}/${p}`);
  try {
    await t.setSysctls('    net.ipv4.ip_forward: "1"\n    vm.swappiness: 10');
    const fwd = await t.status("net.ipv4.ip_forward", (s) => s.applied);
    assert.deepEqual(fwd.spec, {
      key: "net.ipv4.ip_forward",
      desired: "1",
      current: "1",
      default: "0",
      applied: true,
      error: "",
    });
    await t.status("vm.swappiness", (s) => s.applied && s.default === "60");
    assert.equal(await file("net/ipv4/ip_forward"), "1");
    assert.equal(await file("vm/swappiness"), "10");

    await t.setSysctls('    net.ipv4.ip_forward: "1"\n    vm.swappiness: 20');
    const sw = await t.status("vm.swappiness", (s) => s.current === "20");
    assert.equal(sw.spec.default, "60", "the default is what it was before machined, not 10");
    assert.equal(await file("vm/swappiness"), "20");

    await t.setSysctls('    net.ipv4.ip_forward: "1"');
    await waitForAbsence(t.store, KERNEL_PARAM_STATUS, (r) => r.metadata.id === "vm.swappiness");
    assert.equal(await file("vm/swappiness"), "60", "restored");
    assert.equal(await file("net/ipv4/ip_forward"), "1");

    await t.setSysctls("");
    await waitForAbsence(t.store, KERNEL_PARAM_STATUS, () => true);
    assert.equal(await file("net/ipv4/ip_forward"), "0");
    assert.deepEqual(
      t.events.history().map((e) => e.action),
      ["applied", "applied", "applied", "restored", "restored"],
    );
  } finally {
    await t.runtime.stop();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("an unknown key is reported, not created, and applied once it appears", async () => {
  const root = await procTree({ "net/ipv4/ip_forward": "0\n" });
  const t = setup(new ProcSysctlBackend(root));
  try {
    await t.setSysctls('    net.bridge.bridge-nf-call-iptables: "1"');
    const st = await t.status("net.bridge.bridge-nf-call-iptables");
    assert.equal(st.spec.error, "unknown sysctl");
    assert.equal(st.spec.applied, false);
    assert.equal(st.spec.current, null);
    assert.equal(st.spec.default, null);
    await assert.rejects(Deno.stat(`${root}/net/bridge`), Deno.errors.NotFound);

    // The module that provides it gets loaded; the retry timer picks it up.
    await Deno.mkdir(`${root}/net/bridge`);
    await Deno.writeTextFile(`${root}/net/bridge/bridge-nf-call-iptables`, "0\n");
    await t.clock.waitForSleepers(1);
    await t.clock.advance(30_000);
    const ok = await t.status("net.bridge.bridge-nf-call-iptables", (s) => s.applied);
    assert.equal(ok.spec.default, "0");
  } finally {
    await t.runtime.stop();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a KernelModuleStatus change re-runs the controller at once", async () => {
  const backend = new FakeSysctlBackend();
  const t = setup(backend);
  try {
    await t.setSysctls('    net.bridge.bridge-nf-call-iptables: "1"');
    await t.status("net.bridge.bridge-nf-call-iptables", (s) => s.error === "unknown sysctl");
    backend.seed("net.bridge.bridge-nf-call-iptables", "0");
    t.store.create({
      type: KERNEL_MODULE_STATUS,
      namespace: "kernel",
      id: "br_netfilter",
      owner: "test",
      spec: {
        name: "br_netfilter",
        state: "loaded",
        parameters: [],
        inForce: [],
        dependencies: ["bridge"],
        loadedDependencies: ["bridge"],
        configured: true,
        error: "",
        message: "",
      },
    });
    await t.status("net.bridge.bridge-nf-call-iptables", (s) => s.applied);
    assert.equal(backend.get("net.bridge.bridge-nf-call-iptables"), "1");
  } finally {
    await t.runtime.stop();
  }
});

Deno.test("equal values are not rewritten; whitespace is compared normalised", async () => {
  const backend = new FakeSysctlBackend().seed("net.ipv4.ip_local_port_range", "32768\t60999");
  const t = setup(backend);
  try {
    await t.setSysctls('    net.ipv4.ip_local_port_range: "32768 60999"');
    const st = await t.status("net.ipv4.ip_local_port_range", (s) => s.applied);
    assert.equal(st.spec.current, "32768 60999");
    assert.equal(backend.faults.callsOf("sysctl_write").length, 0);
  } finally {
    await t.runtime.stop();
  }
});

Deno.test("a refused value and a read-only key are reported with the errno", async () => {
  const backend = new FakeSysctlBackend()
    .seed("net.ipv4.ip_forward", "0", { accept: (v) => /^[01]$/.test(v) })
    .seed("kernel.ostype", "Linux", { readOnly: true });
  const t = setup(backend);
  try {
    await t.setSysctls('    net.ipv4.ip_forward: "2"\n    kernel.ostype: Hurd');
    const fwd = await t.status("net.ipv4.ip_forward", (s) => s.error !== "");
    assert.match(fwd.spec.error, /Cannot write sysctl "net\.ipv4\.ip_forward" = "2": EINVAL/);
    assert.equal(fwd.spec.current, "0");
    const os = await t.status("kernel.ostype", (s) => s.error !== "");
    assert.match(os.spec.error, /EACCES/);
  } finally {
    await t.runtime.stop();
  }
});

Deno.test("drift is undone at the next resync", async () => {
  const backend = new FakeSysctlBackend().seed("vm.swappiness", "60");
  const t = setup(backend);
  try {
    await t.setSysctls("    vm.swappiness: 10");
    await t.status("vm.swappiness", (s) => s.applied);
    backend.values.set("vm/swappiness", "99"); // someone else wrote it
    await t.clock.waitForSleepers(1);
    await t.clock.advance(300_000);
    await t.clock.waitForSleepers(1); // the resync cycle ran and the next one is scheduled
    assert.equal(backend.faults.callsOf("sysctl_write").length, 2);
    assert.equal(backend.get("vm.swappiness"), "10");
  } finally {
    await t.runtime.stop();
  }
});

Deno.test("a failed restore keeps a status with the error and retries", async () => {
  const backend = new FakeSysctlBackend().seed("vm.swappiness", "60");
  const t = setup(backend);
  try {
    await t.setSysctls("    vm.swappiness: 10");
    await t.status("vm.swappiness", (s) => s.applied);
    backend.faults.failNext("sysctl_write", "EBUSY");
    await t.setSysctls("");
    const st = await t.status("vm.swappiness", (s) => s.error !== "");
    assert.match(st.spec.error, /Cannot restore the default: .*EBUSY/);
    assert.equal(st.spec.desired, "60");
    await t.clock.waitForSleepers(1);
    await t.clock.advance(30_000);
    await waitForAbsence(t.store, KERNEL_PARAM_STATUS, () => true);
    assert.equal(backend.get("vm.swappiness"), "60");
  } finally {
    await t.runtime.stop();
  }
});
