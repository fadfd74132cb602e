import assert from "node:assert/strict";
import { FakeSysctlBackend } from "./sysctl_backend_fake.ts";
import { ProcSysctlBackend } from "./sysctl_backend_proc.ts";
import { sysctlBackendConformance } from "./sysctl_backend_conformance.ts";
import { normalizeSysctlValue, SysctlError, sysctlPath } from "./sysctl_backend.ts";

sysctlBackendConformance("FakeSysctlBackend", () =>
  Promise.resolve({
    backend: new FakeSysctlBackend().seed("net.ipv4.ip_forward", "0", {
      accept: (v) => /^[01]$/.test(v.trim()),
    }),
    key: "net.ipv4.ip_forward",
    invalidValue: "abc",
  }));

sysctlBackendConformance("ProcSysctlBackend over a temp tree", async () => {
  const root = await Deno.makeTempDir({ prefix: "machined-sysctl-" });
  await Deno.mkdir(`${root}/net/ipv4`, { recursive: true });
  await Deno.writeTextFile(`${root}/net/ipv4/ip_forward`, "0\n");
  return {
    backend: new ProcSysctlBackend(root),
    key: "net.ipv4.ip_forward",
    cleanup: () => Deno.remove(root, { recursive: true }),
  };
}, { validates: false });

Deno.test("sysctl names map to paths; dots in slashed names survive", () => {
  assert.equal(sysctlPath("net.ipv4.ip_forward"), "net/ipv4/ip_forward");
  assert.equal(
    sysctlPath("net/ipv4/conf/eth0.100/forwarding"),
    "net/ipv4/conf/eth0.100/forwarding",
  );
  assert.throws(() => sysctlPath("net/../../etc/passwd"), RangeError);
  assert.throws(() => sysctlPath(""), RangeError);
});

Deno.test("values compare with whitespace normalised, as the kernel prints them", () => {
  assert.equal(normalizeSysctlValue("32768\t60999\n"), "32768 60999");
  assert.equal(normalizeSysctlValue(" 1 "), "1");
});

Deno.test("injected faults surface as SysctlErrors with the injected errno", async () => {
  const b = new FakeSysctlBackend().seed("vm.swappiness", "60");
  b.faults.failNext("sysctl_write", "EPERM");
  await assert.rejects(b.write("vm.swappiness", "10"), (e) => {
    assert.ok(e instanceof SysctlError);
    assert.equal(e.code, "EPERM");
    return true;
  });
  assert.equal(b.get("vm.swappiness"), "60");
  assert.deepEqual(b.faults.callsOf("sysctl_write"), [["vm.swappiness", "10"]]);
});

Deno.test("a read-only key refuses writes with EACCES", async () => {
  const b = new FakeSysctlBackend().seed("kernel.ostype", "Linux", { readOnly: true });
  await assert.rejects(
    b.write("kernel.ostype", "x"),
    (e) => e instanceof SysctlError && e.code === "EACCES",
  );
});
