/**
 * Booting x86_64 nodes on a real L2 network, as the tap tests
 * (node_network_test, fleet_test) all do: a network
 * namespace with a bridge, dnsmasq and a tap per VM (imager/qemu/tap_network.ts),
 * QEMU inside it with its only NIC on the tap, and machinectl run inside it
 * too, retried while the node is not answering yet. Every VM booted through
 * {@link withTapNetwork} and the namespace are stopped and removed after,
 * also on failure; the host's interfaces are never touched.
 *
 * @module
 */
import {
  connectQmp,
  createTapNetwork,
  DNSMASQ_PATHS,
  isRunning,
  startVm,
  type TapNetwork,
  type Vm,
} from "../imager/mod.ts";
import type { machinectlInNetns } from "./helpers.ts";

const isFile = (p: string) => {
  try {
    return Deno.statSync(p).isFile;
  } catch {
    return false;
  }
};

/** Whether a tap test can run here: root, qemu-system-x86_64 and dnsmasq. */
export const canBootOnTap = Deno.uid() === 0 && isFile("/usr/bin/qemu-system-x86_64") &&
  DNSMASQ_PATHS.some(isFile);

/** A tap network that boots VMs on it. */
export interface TapBoot {
  net: TapNetwork;
  /** The namespace everything runs in. */
  ns: string;
  /** The VMs booted so far, in order. */
  vms: Vm[];
  /**
   * Start QEMU on `image` (snapshot, so the image stays as built) with its
   * NIC on a tap of the bridge: the network's own tap for the first VM, a
   * new `tapN` for each after it. Resolves once QEMU runs, not once it booted.
   */
  boot(opts: {
    image: string;
    runDir: string;
    mac: string;
    /** More NICs, each on a new tap of the bridge (a bond's second port). */
    extraMacs?: string[];
    /** Empty PCIe root ports for {@link hotAddNic}. @default 0 */
    hotplugPorts?: number;
    /** NICs cabled to another VM by UDP (`VmOptions.udpNics`), after the taps. */
    udpNics?: Array<{ mac: string; localPort: number; remotePort: number }>;
  }): Promise<Vm>;
}

/**
 * Create a tap network (dnsmasq's log in `dir`), run `fn` with it, then stop
 * every VM it booted and delete the network, whether `fn` passed or threw.
 */
export async function withTapNetwork<T>(
  dir: string,
  fn: (tb: TapBoot) => Promise<T>,
  opts: { ipv6Prefix?: string; dhcp6Prefix?: string } = {},
): Promise<T> {
  let net: TapNetwork | undefined;
  const vms: Vm[] = [];
  try {
    net = await createTapNetwork({ dir, ...opts });
    const tb: TapBoot = {
      net,
      ns: net.netns,
      vms,
      boot: async ({ image, runDir, mac, extraMacs = [], hotplugPorts, udpNics }) => {
        const tap = vms.length === 0 ? net!.tap : await addTap(net!, `tap${vms.length}`);
        const extraTaps = [];
        for (const [i, m] of extraMacs.entries()) {
          extraTaps.push({ ifname: await addTap(net!, `tap${vms.length}x${i}`), mac: m });
        }
        const vm = await startVm({
          image,
          runDir,
          netns: net!.netns,
          tap: { ifname: tap, mac },
          extraTaps,
          udpNics,
          hotplugPorts,
          snapshot: true,
        });
        vms.push(vm);
        return vm;
      },
    };
    return await fn(tb);
  } finally {
    for (const vm of vms) if (await isRunning(vm.state.pid)) await vm.stop({ gracefulMs: 1000 });
    await net?.close();
  }
}

/**
 * Hot-add a virtio NIC with `mac` to a running VM (booted with a free
 * `hotplugPorts` root port `port`): a new tap on the bridge, then QMP
 * `netdev_add` and `device_add`, as an operator plugging a NIC in.
 */
export async function hotAddNic(
  net: TapNetwork,
  vm: Vm,
  o: { mac: string; id: string; port: number },
): Promise<void> {
  const tap = await addTap(net, `tap-${o.id}`);
  const qmp = await connectQmp(vm.state.qmpSocket);
  try {
    await qmp.execute("netdev_add", {
      type: "tap",
      id: `net-${o.id}`,
      ifname: tap,
      script: "no",
      downscript: "no",
    });
    await qmp.execute("device_add", {
      driver: "virtio-net-pci",
      id: o.id,
      netdev: `net-${o.id}`,
      mac: o.mac,
      romfile: "",
      bus: `hotplug${o.port}`,
    });
  } finally {
    qmp.close();
  }
}

/** QMP `set_link`: the NIC on netdev `netdev` (`net0`, `net1` ...) loses or regains its carrier. */
export async function setLink(vm: Vm, netdev: string, up: boolean): Promise<void> {
  const qmp = await connectQmp(vm.state.qmpSocket);
  try {
    await qmp.execute("set_link", { name: netdev, up });
  } finally {
    qmp.close();
  }
}

/** A new tap `name` on the network's bridge, up. */
async function addTap(net: TapNetwork, name: string): Promise<string> {
  const ipn = (...a: string[]) =>
    new Deno.Command("ip", { args: ["-n", net.netns, ...a] }).output();
  await ipn("tuntap", "add", "dev", name, "mode", "tap");
  await ipn("link", "set", name, "master", net.bridge);
  await ipn("link", "set", name, "up");
  return name;
}

/** machinectl's exit code and output (e2e/helpers.ts). */
export type DialResult = Awaited<ReturnType<typeof machinectlInNetns>>;

/** For {@link retryWhile}: retry on any failure. */
export const ANY_FAILURE = /(?:)/;

/**
 * Run `attempt` until it exits 0, fails with an error `retry` does not
 * match, or `ms` pass (then the last result), `pauseMs` apart.
 */
export async function retryWhile(
  attempt: () => Promise<DialResult>,
  retry: RegExp,
  ms = 60_000,
  pauseMs = 2000,
): Promise<DialResult> {
  const deadline = performance.now() + ms;
  for (;;) {
    const r = await attempt();
    if (r.code === 0 || !retry.test(r.err) || performance.now() > deadline) return r;
    await new Promise((res) => setTimeout(res, pauseMs));
  }
}
