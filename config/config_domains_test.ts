import { deepEqual } from "node:assert/strict";
import { configDomains } from "./config_domains.ts";
import { configDiff } from "./config_diff.ts";

Deno.test("domains: sections map to their domain, sorted, once each", () => {
  deepEqual(
    configDomains([
      "machine.hostname",
      "machine.network.interfaces",
      "machine.sysctls.net.ipv4.ip_forward",
      "machine.ca",
      "machine.api.listen",
    ]),
    ["api", "kernel", "network"],
  );
  deepEqual(configDomains([]), []);
  deepEqual(configDomains(["version", "(document)", "machine.nope"]), ["config"]);
});

Deno.test("domains of a real diff: a hostname change is the network's", () => {
  const changed = configDiff(
    { machine: { hostname: "a", time: { servers: ["x"] } } },
    { machine: { hostname: "b", time: { servers: ["y"] } } },
  );
  deepEqual(configDomains(changed), ["network", "time"]);
});

Deno.test("domains: a firewall change is the firewall's, the rest of network the network's", () => {
  deepEqual(configDomains(["machine.network.firewall.rules"]), ["firewall"]);
  deepEqual(configDomains(["machine.network.firewall", "machine.network.search"]), [
    "firewall",
    "network",
  ]);
});
