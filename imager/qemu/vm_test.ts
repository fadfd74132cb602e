import assert from "node:assert/strict";
import { nicArgs } from "./vm.ts";

Deno.test("NICs: the tap first, then extra taps, then UDP cables, each its own netN", () => {
  const args = nicArgs({
    image: "x.img",
    tap: { ifname: "tap0", mac: "52:54:00:00:00:01" },
    extraTaps: [{ ifname: "tap0x0", mac: "52:54:00:00:00:02" }],
    udpNics: [{ mac: "52:54:00:00:00:03", localPort: 47011, remotePort: 47021 }],
  }, 0);
  const netdevs = args.filter((_, i) => args[i - 1] === "-netdev");
  assert.deepEqual(netdevs, [
    "tap,id=net0,ifname=tap0,script=no,downscript=no",
    "tap,id=net1,ifname=tap0x0,script=no,downscript=no",
    "socket,id=net2,udp=127.0.0.1:47021,localaddr=127.0.0.1:47011",
  ]);
  assert.ok(
    args.includes(
      "virtio-net-pci,netdev=net2,romfile=,mac=52:54:00:00:00:03,speed=1000,duplex=full",
    ),
  );
});
