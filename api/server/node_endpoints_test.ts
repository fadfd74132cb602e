import { deepEqual } from "node:assert/strict";
import { Store } from "../../runtime/mod.ts";
import type { AddressStatusSpec, ResourceSpecs } from "../../resources/mod.ts";
import { apiEndpoints, nodeApiEndpoints } from "./node_endpoints.ts";

const addr = (
  link: string,
  address: string,
  family: "inet" | "inet6",
  scope = "global",
): AddressStatusSpec => ({
  link,
  linkIndex: 1,
  family,
  address,
  prefixLen: family === "inet" ? 24 : 64,
  scope,
  flags: 0,
});

const NODE = [
  addr("lo", "127.0.0.1", "inet", "host"),
  addr("lo", "::1", "inet6", "host"),
  addr("eth0", "fe80::5054:ff:fe12:3456", "inet6", "link"),
  addr("eth0", "2001:db8::5", "inet6"),
  addr("eth0", "10.0.2.15", "inet"),
  addr("eth1", "169.254.3.4", "inet", "link"),
  addr("eth1", "192.168.1.7", "inet"),
];

Deno.test("a wildcard listen yields the node's usable addresses with the port", () => {
  deepEqual(apiEndpoints(NODE, "0.0.0.0:50000"), ["10.0.2.15:50000", "192.168.1.7:50000"]);
  deepEqual(apiEndpoints(NODE, "[::]:50001"), [
    "10.0.2.15:50001",
    "192.168.1.7:50001",
    "[2001:db8::5]:50001",
  ]);
});

Deno.test("a specific listen host is the only endpoint", () => {
  deepEqual(apiEndpoints(NODE, "192.168.1.7:50000"), ["192.168.1.7:50000"]);
  deepEqual(apiEndpoints(NODE, "[2001:db8::5]:50000"), ["[2001:db8::5]:50000"]);
});

Deno.test("loopback only: nothing, and the store variant falls back", () => {
  const lo = NODE.slice(0, 3);
  deepEqual(apiEndpoints(lo, "0.0.0.0:50000"), []);
  const store = new Store<ResourceSpecs>();
  const fallback = () => ["127.0.0.1:50000"];
  deepEqual(nodeApiEndpoints(store, "0.0.0.0:50000", fallback), ["127.0.0.1:50000"]);
  for (const spec of NODE) {
    store.create({
      type: "AddressStatus",
      namespace: "network",
      id: `${spec.link}/${spec.address}/${spec.prefixLen}`,
      owner: "test",
      spec,
    });
  }
  deepEqual(nodeApiEndpoints(store, "0.0.0.0:50000", fallback).toSorted(), [
    "10.0.2.15:50000",
    "192.168.1.7:50000",
  ]);
});
