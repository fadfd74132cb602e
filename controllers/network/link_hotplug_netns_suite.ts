/**
 * A link that appears after machined started is configured: rtnetlink's
 * RTM_NEWLINK (LinkStatus) re-runs the link and address controllers, so no
 * uevent is needed for links. Meant to run only inside the throwaway network
 * namespace `link_hotplug_root_test.ts` creates (MACHINED_NETNS set);
 * without it, it registers nothing. Prints, as a JSON line, the time from
 * `ip link add` to the address in force (monotonic clock; bounded waits).
 * @module
 */
import assert from "node:assert/strict";
import { waitForResource } from "../../runtime/testing.ts";
import { configYaml } from "./testing.ts";
import { addrs, ip, withNetwork } from "./netns_testing.ts";

if (Deno.env.get("MACHINED_NETNS")) {
  Deno.test("a veth created after start gets its configured address", async () => {
    try {
      await withNetwork(
        {},
        configYaml(`    interfaces:
      - name: mhp0
        addresses: ["10.66.0.2/24"]
`),
        async ({ store }) => {
          // Running: the kernel's links are mirrored (loopback), and mhp0 is not there yet.
          await waitForResource(store, "LinkStatus", (r) => r.spec.name === "lo", 10_000);
          assert.equal(store.list("LinkStatus").some((r) => r.spec.name === "mhp0"), false);
          const t0 = performance.now();
          await ip("link", "add", "mhp0", "type", "veth", "peer", "name", "mhp1");
          await waitForResource(
            store,
            "AddressStatus",
            (r) => r.spec.address === "10.66.0.2",
            10_000,
          );
          const ms = performance.now() - t0;
          await waitForResource(store, "LinkStatus", (r) => r.spec.name === "mhp0" && r.spec.up);
          assert.deepEqual(await addrs("mhp0"), ["10.66.0.2/24"]);
          console.log(JSON.stringify({
            bench: "hotplug.link",
            event: "veth added",
            ms: Math.round(ms * 10) / 10,
            note: "ip link add started -> AddressStatus of the configured address",
          }));
        },
      );
    } finally {
      await ip("link", "del", "mhp0").catch(() => {});
    }
  });
}
