import assert from "node:assert/strict";
import { APPLY_CLASSES, applyClassOf, rebootFields } from "./apply_class.ts";
import { MachineSchema } from "./schema/machine_config.ts";

Deno.test("every machine section of the schema is classified, and nothing else", () => {
  assert.deepEqual(Object.keys(APPLY_CLASSES).sort(), Object.keys(MachineSchema.entries).sort());
});

Deno.test("the live sections apply without a reboot", () => {
  for (
    const p of [
      "machine.hostname",
      "machine.domainname",
      "machine.network.interfaces",
      "machine.time.servers",
      "machine.sysctls.net.ipv4.ip_forward",
      "machine.kernel.modules",
      "machine.services",
      "machine.runtime.containerd.enabled",
      "machine.api.cert_sans",
      "machine.ca",
      "machine.ca.crt",
      "machine.logging.level",
      "version",
    ]
  ) assert.deepEqual(applyClassOf(p), { live: true }, p);
});

Deno.test("install, api.listen and the API limits need a reboot, with a reason", () => {
  for (
    const p of [
      "machine.install",
      "machine.install.disk",
      "machine.api.listen",
      "machine.api.max_message_bytes",
      "machine.api.max_concurrent_streams",
      "machine.api",
    ]
  ) {
    const c = applyClassOf(p);
    assert.ok("reboot" in c && c.reboot.length > 0, p);
  }
  assert.deepEqual(
    rebootFields(["machine.hostname", "machine.api.listen", "machine.install.disk"]),
    ["machine.api.listen", "machine.install.disk"],
  );
});

Deno.test("an unknown section or field needs a reboot (never silently live)", () => {
  assert.ok("reboot" in applyClassOf("machine.nope"));
  assert.ok("reboot" in applyClassOf("machine.api.nope"));
});

Deno.test("a firewall change is live, so ApplyConfiguration try can apply and revert it", () => {
  assert.deepEqual(applyClassOf("machine.network.firewall"), { live: true });
  assert.deepEqual(applyClassOf("machine.network.firewall.rules"), { live: true });
  assert.deepEqual(rebootFields(["machine.network.firewall.default"]), []);
});

Deno.test("every link, WireGuard and IPv6 change is live, so ApplyConfiguration try can apply and revert it", () => {
  for (
    const p of [
      "machine.network.bonds",
      "machine.network.vlans",
      "machine.network.bridges",
      "machine.network.wireguard",
      "machine.network.interfaces.ipv6",
      "machine.network.routes",
    ]
  ) assert.deepEqual(applyClassOf(p), { live: true }, p);
});
