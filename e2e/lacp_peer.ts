/**
 * The switch at the far end of the node's 802.3ad bond in the network case
 * (e2e/lacp_vlan_step.ts): a second, tiny VM with a kernel bond, because the
 * host kernel has no bonding or 8021q driver and a Linux bridge never
 * forwards LACPDUs (01:80:c2:00:00:02 is outside what `group_fwd_mask` may
 * forward). It boots the Debian cloud kernel the imager already pins
 * (imager/versions.ts) straight from QEMU's `-kernel`, with an initramfs made
 * by e2e/tiny_guest.ts: busybox, iproute2 and dnsmasq with the libraries `ldd` names, and the
 * bonding, 8021q and virtio NIC modules of that kernel with their
 * dependencies. Its two NICs are wired to two of the node's by QEMU `socket`
 * UDP netdevs on the namespace's loopback (a point-to-point cable each; the
 * node's ends are {@link nodeLacpNics}). Its init makes `bond0` (802.3ad,
 * miimon 100, lacp_rate fast) over both, VLAN {@link PEER_VLAN} on it with
 * `{@link PEER_SUBNET}.1/24` and dnsmasq serving DHCPv4 there (no router, no
 * DNS), and prints `PEER LACP UP ...` with the bond's LACP lines once the
 * active aggregator holds both ports and knows a partner, then the whole of
 * `/proc/net/bonding/bond0` as `PEER BOND ...` lines (each port's partner
 * state included: {@link partnerPortStates}).
 *
 * @module
 */
import { join } from "node:path";
import { buildTinyGuest, tinyGuestArgs, waitForConsole } from "./tiny_guest.ts";

/** The VLAN id the peer serves DHCP on. */
export const PEER_VLAN = 5;
/** The /24 the peer leases from (`.50`–`.99`), as its first three octets. */
export const PEER_SUBNET = "10.55.0";
/** What the peer prints once LACP has aggregated both ports with a partner. */
export const PEER_LACP_UP = /PEER LACP UP aggregator=(\d+) ports=(\d+) partner=([0-9a-f:]{17})/;

/**
 * The LACP port state the peer saw from its partner on each port (the
 * `details partner lacp pdu` sections of its bonding file): bit 0x02 is
 * LACP_TIMEOUT, set when the partner (the node) sends fast.
 */
export function partnerPortStates(console: string): number[] {
  const out: number[] = [];
  for (
    const m of console.matchAll(
      /details partner lacp pdu:(?:(?!details)[\s\S])*?port state: (\d+)/g,
    )
  ) {
    out.push(Number(m[1]));
  }
  return out;
}

/** Two cables: the node's NIC (MAC, UDP port) and the peer's (UDP port). */
const WIRES = [
  { nodeMac: "52:54:00:6d:61:04", node: 47011, peer: 47021, peerMac: "52:54:00:70:00:01" },
  { nodeMac: "52:54:00:6d:61:05", node: 47012, peer: 47022, peerMac: "52:54:00:70:00:02" },
];
/** The peer's bond MAC (its first port's, which the kernel bond takes): the node's LACP partner. */
export const PEER_BOND_MAC = WIRES[0].peerMac;
/** The node's 802.3ad ports, by MAC. */
export const NODE_LACP_MACS = WIRES.map((w) => w.nodeMac);

/** The node's ends of the cables, for `VmOptions.udpNics`. */
export function nodeLacpNics(): Array<{ mac: string; localPort: number; remotePort: number }> {
  return WIRES.map((w) => ({ mac: w.nodeMac, localPort: w.node, remotePort: w.peer }));
}

/** Modules the peer loads, in an order closed over their dependencies. */
const PEER_MODULES = ["virtio_pci", "virtio_net", "bonding", "8021q"];
const BINARIES = ["/usr/sbin/ip", "/usr/sbin/dnsmasq"];
const BUSYBOX_APPLETS = ["sh", "mount", "insmod", "cat", "awk", "sleep", "echo"];

/** The peer's /init (busybox sh): modules, bond, VLAN, dnsmasq, then LACP watched. */
export function peerInit(modules: string[]): string {
  return `#!/bin/sh
export PATH=/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
${
    modules.map((m) => `insmod /lib/modules/${m}${m.startsWith("bonding") ? " max_bonds=0" : ""}`)
      .join("\n")
  }
ip link set lo up
ip link add bond0 type bond mode 802.3ad miimon 100 lacp_rate fast
for p in eth0 eth1; do ip link set $p down; ip link set $p master bond0; done
ip link set bond0 up
ip link add link bond0 name bond0.${PEER_VLAN} type vlan id ${PEER_VLAN}
ip addr add ${PEER_SUBNET}.1/24 dev bond0.${PEER_VLAN}
ip link set bond0.${PEER_VLAN} up
echo "PEER READY"
dnsmasq --keep-in-foreground --conf-file=/dev/null --port=0 --interface=bond0.${PEER_VLAN} \\
  --bind-interfaces --user=root --group=root --dhcp-leasefile=/dev/null --pid-file= \\
  --dhcp-range=${PEER_SUBNET}.50,${PEER_SUBNET}.99,255.255.255.0,10m --dhcp-option=3 \\
  --dhcp-option=6 --log-dhcp --log-facility=- &
i=0
while :; do
  up=$(awk '/Active Aggregator Info/ {s=1}
    s && /Aggregator ID:/ && !a {a=$3}
    s && /Number of ports:/ && !n {n=$4}
    s && /Partner Mac Address:/ && !m {m=$4}
    END {if (n == 2 && m != "00:00:00:00:00:00") print "aggregator=" a " ports=" n " partner=" m}' \\
    /proc/net/bonding/bond0)
  if [ -n "$up" ]; then
    echo "PEER LACP UP $up"
    awk '{print "PEER BOND " $0}' /proc/net/bonding/bond0
    echo "PEER BOND END"
    break
  fi
  i=$((i + 1))
  if [ $((i % 10)) = 0 ]; then
    # Not aggregated yet: what the bond sees, and whether frames arrive at all.
    awk '/Slave Interface|Aggregator ID|Number of ports|Partner Mac|system mac|port state|MII Status/ {
      sub(/^[ \t]+/, ""); printf "%s; ", $0 } END { print "" }' /proc/net/bonding/bond0 | \
      awk '{print "PEER WAIT " $0}'
    ip -br link | awk '{print "PEER WAIT " $0}'
    for p in eth0 eth1; do
      echo "PEER WAIT $p rx $(cat /sys/class/net/$p/statistics/rx_packets) tx $(cat /sys/class/net/$p/statistics/tx_packets)"
    done
  fi
  sleep 1
done
while :; do sleep 3600; done
`;
}

/**
 * Build the peer's initramfs (uncompressed newc) in `dir` from the pinned
 * kernel (fetched into the imager's cache if needed) and the host's busybox,
 * iproute2 and dnsmasq (e2e/tiny_guest.ts). Returns the kernel and initramfs paths.
 * @throws Deno.errors.NotFound when one of the host binaries is missing.
 */
export function buildPeer(dir: string): Promise<{ kernel: string; initrd: string }> {
  return buildTinyGuest(dir, {
    name: "peer.cpio",
    modules: PEER_MODULES,
    binaries: BINARIES,
    applets: BUSYBOX_APPLETS,
    init: peerInit,
    extra: [
      { type: "file", path: "/etc/passwd", data: bytes("root:x:0:0:root:/:/bin/sh\n") },
      { type: "file", path: "/etc/group", data: bytes("root:x:0:\n") },
    ],
  });
}

/** A running peer VM. */
export interface LacpPeer {
  /** Its serial console, as a file. */
  readonly consoleLog: string;
  /** The console's first match of `re`, awaited up to `ms`. @throws Error with the console's tail. */
  waitFor(re: RegExp, ms: number): Promise<RegExpExecArray>;
  stop(): Promise<void>;
}

/** Start the peer in namespace `ns` (whose loopback carries the cables). Resolves once QEMU runs. */
export async function startPeer(
  ns: string,
  dir: string,
  built: { kernel: string; initrd: string },
): Promise<LacpPeer> {
  const consoleLog = join(await Deno.realPath(dir), "peer-console.log");
  await Deno.writeTextFile(consoleLog, "");
  const nics = WIRES.flatMap((w, i) => [
    "-netdev",
    `socket,id=p${i},udp=127.0.0.1:${w.node},localaddr=127.0.0.1:${w.peer}`,
    "-device",
    // Speed and duplex: without them an 802.3ad port stays down (imager/qemu/vm.ts).
    `virtio-net-pci,netdev=p${i},mac=${w.peerMac},romfile=,speed=1000,duplex=full`,
  ]);
  const qemu = new Deno.Command("ip", {
    args: [
      "netns",
      "exec",
      ns,
      "qemu-system-x86_64",
      ...tinyGuestArgs({ ...built, consoleLog, memoryMiB: 256, devices: nics }),
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  let exited = false;
  qemu.status.then(() => (exited = true));
  return {
    consoleLog,
    async waitFor(re, ms) {
      const who = "the LACP peer";
      return (await waitForConsole(consoleLog, re, { ms, who, exited: () => exited })).match;
    },
    async stop() {
      if (!exited) {
        try {
          qemu.kill("SIGTERM");
        } catch { /* already gone */ }
      }
      await qemu.status;
    },
  };
}

const bytes = (s: string) => new TextEncoder().encode(s);
