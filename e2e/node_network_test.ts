/**
 * The node on a real L2 network, not QEMU's port forward: a network namespace
 * holds a bridge, a tap and dnsmasq (imager/qemu/tap_network.ts); QEMU runs
 * inside it with its only NIC on the tap, and machinectl runs inside it too
 * (machinectl/main.ts as a process, the same client config, connection and
 * TLS code an operator runs). One boot, several steps:
 *
 * 1. the node gets a DHCP address from dnsmasq on the tap network;
 * 2. a TLS handshake to that address reaches apid, and its certificate chains
 *    to the node CA (the network path works, whatever names it carries);
 * 3. machinectl dials `<dhcp address>:50000` with full name verification
 *    (the server certificate must name the address the node holds), and
 *    Version answers; `get addresses` shows the address.
 *
 * 4. a 1380-byte ping with DF set from the namespace crosses WireGuard to the
 *    node (its `wg0`: the kernel module, keys set by machined's `wg`; the
 *    host's end is wireguard-go), and `get wireguardstatus` shows the
 *    handshake (e2e/wireguard_step.ts);
 * 5. an 802.3ad bond of two more NICs, cabled to a small peer VM with a
 *    kernel bond booted beside the node (e2e/lacp_peer.ts), aggregates with
 *    the peer, and a VLAN on it leases from the peer's dnsmasq
 *    (e2e/lacp_vlan_step.ts);
 * 6. the site's network on the same VM (e2e/network_site_steps.ts): its two
 *    tap NICs are an active-backup bond (the first port's carrier cut, the API
 *    answers through the second), SLAAC from the network's advertisements
 *    (the API answers at that address), DHCPv6 (a /128 and DNS), a NIC
 *    hot-added with QMP is configured without a reboot, and a `try` firewall
 *    that closes the API reverts by itself. Figures as the JSON line
 *    `{"suite":"network",...}`.
 *
 * Step 3 needs the server certificate to name the node's DHCP addresses
 * (the server-certificate SAN work); without it step 2 passes and step 3
 * fails with a name mismatch. The host's interfaces are never touched; the
 * namespace is deleted afterwards, also on failure.
 *
 * Run: `deno test -A e2e/node_network_test.ts` (root, QEMU, dnsmasq; about
 * 1.5 min under TCG).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildImage } from "../imager/mod.ts";
import { renderConfigTemplate } from "../config/mod.ts";
import { generateNodeBundle } from "../pki/mod.ts";
import { machinectlInNetns, parseDocs } from "./helpers.ts";
import { canBootOnTap, retryWhile, withTapNetwork } from "./tap_boot.ts";
import { buildPeer, type LacpPeer, nodeLacpNics, startPeer } from "./lacp_peer.ts";
import { lacpVlanStep } from "./lacp_vlan_step.ts";
import {
  networkSiteSteps,
  SITE_DHCP6_PREFIX,
  SITE_IPV6_PREFIX,
  SITE_MACS,
  siteNetwork,
} from "./network_site_steps.ts";
import { parse, stringify } from "yaml";
import {
  WIREGUARD_GO,
  wireguardKeys,
  wireguardThroughTunnel,
  withWireguard,
} from "./wireguard_step.ts";

const WORK = "build/e2e/network";
const HOSTNAME = "e2e-net";
const MAC = SITE_MACS.first;
const API_READY = /machined: API ready pid=(\d+)/;
const FAIL = /Kernel panic|machined: FATAL|machined-init: FATAL/;
/** What a client says when the certificate is fine but does not name the address dialed. */
const NAME_MISMATCH = /altnames|ERR_TLS_CERT_ALTNAME_INVALID|NotValidForName|not valid for name/i;

Deno.test({
  name: "the node on a tap network: DHCP address, machinectl with full name verification " +
    "(needs root, QEMU, dnsmasq)",
  ignore: !canBootOnTap,
  sanitizeOps: false,
  sanitizeResources: false,
}, async (t) => {
  await Deno.remove(WORK, { recursive: true }).catch(() => {});
  const keys = await wireguardKeys();
  const bundle = await generateNodeBundle({
    name: HOSTNAME,
    endpoint: "127.0.0.1:50000",
    outDir: join(WORK, "node"),
    // No cert_sans: the address dialed below must come from the node itself.
    renderMachineConfig: ({ ca }) => {
      const doc = parse(
        renderConfigTemplate({ hostname: HOSTNAME, ca, timeDisabled: true, containerd: false }),
      );
      doc.machine.network = siteNetwork();
      // Dual-stack: `0.0.0.0` (the default) is IPv4 only, `[::]` answers both families.
      doc.machine.api = { ...doc.machine.api, listen: "[::]:50000" };
      return withWireguard(stringify(doc), keys);
    },
  });
  const clientConfig = bundle.paths.clientConfig;
  const image = await buildImage({
    program: new URL("../main.ts", import.meta.url).pathname,
    config: bundle.paths.machineConfig,
    out: join(WORK, "node.img"),
    quietConsole: true,
  });
  const peerBuilt = await buildPeer(join(WORK, "peer"));
  let peer: LacpPeer | undefined;
  await withTapNetwork(WORK, async ({ net, ns, boot }) => {
    // The peer boots beside the node (a few seconds of TCG); the node's LACP ports wait for it.
    const peerStart = performance.now();
    peer = await startPeer(ns, join(WORK, "peer"), peerBuilt);
    const qemuStart = performance.now();
    const booted = await boot({
      image: image.out,
      runDir: join(WORK, "qemu"),
      mac: MAC,
      extraMacs: [SITE_MACS.second],
      udpNics: nodeLacpNics(),
      hotplugPorts: 1,
    });
    let address = "";

    await t.step("the node gets a DHCP address on the tap network", async () => {
      const lease = await net.waitForLease({ mac: MAC, timeoutMs: 240_000 });
      address = lease.address;
      assert.match(address, /^10\.99\.0\.\d+$/);
      await booted.waitForConsole(API_READY, { timeoutMs: 240_000, failOn: FAIL });
      console.log(
        `lease ${address} for ${MAC}; API ready ${
          ((performance.now() - qemuStart) / 1000).toFixed(1)
        } s after QEMU started`,
      );
    });

    /**
     * machinectl in the namespace against the DHCP address, retried while the
     * failure matches `retry` (apid restarting, or a certificate that will be
     * re-issued once the node sees its new address), up to `ms`.
     */
    const dial = (args: string[], retry: RegExp, ms = 60_000) =>
      retryWhile(() => machinectlInNetns(ns, clientConfig, `${address}:50000`, ...args), retry, ms);
    // apid restarts once when the certificate is re-issued for the DHCP address:
    // a handshake cut off then is retried like an unreachable node.
    const UNREACHABLE =
      /cannot reach|did not answer|ECONNREFUSED|ECONNRESET|closed the connection during the TLS handshake/i;

    await t.step(
      "TLS to the DHCP address reaches apid; its certificate chains to the node CA",
      async () => {
        const r = await dial(["version"], UNREACHABLE);
        // Either it answers, or the only complaint is the name: the chain verified.
        assert.ok(
          r.code === 0 || NAME_MISMATCH.test(r.err),
          `neither an answer nor a name mismatch: ${r.err}`,
        );
      },
    );

    await t.step(
      "machinectl dials the DHCP address (no port forward) with full name verification; Version answers",
      async () => {
        const t0 = performance.now();
        const r = await dial(
          ["version"],
          new RegExp(`${UNREACHABLE.source}|${NAME_MISMATCH.source}`, "i"),
          90_000,
        );
        assert.equal(
          r.code,
          0,
          NAME_MISMATCH.test(r.err)
            ? `the server certificate does not name ${address} (needs the SAN work): ${r.err}`
            : r.err,
        );
        assert.match(r.out, new RegExp(`hostname ${HOSTNAME}`));
        console.log(
          `Version with full name verification at ${address} after ${
            ((performance.now() - t0) / 1000).toFixed(1)
          } s of retries`,
        );
        const a = await dial(["get", "addresses", "-o", "json"], UNREACHABLE);
        assert.equal(a.code, 0, a.err);
        assert.ok(
          parseDocs(a.out).some((d) => String(d.spec.address ?? d.metadata.id).startsWith(address)),
          a.out,
        );
      },
    );

    await t.step({
      name: "a 1380-byte DF ping from the host crosses WireGuard to the node; " +
        "WireguardStatus shows the handshake (needs wireguard-go)",
      ignore: !WIREGUARD_GO,
      fn: async () => {
        const ms = await wireguardThroughTunnel(
          ns,
          address,
          keys,
          () => dial(["get", "wireguardstatus", "-o", "json"], UNREACHABLE),
        );
        console.log(
          `3 x 1380-byte DF pings through WireGuard to the node in ${(ms / 1000).toFixed(1)} s`,
        );
      },
    });

    const lacp = await lacpVlanStep({
      t,
      ns,
      clientConfig,
      api: `${address}:50000`,
      peer,
      peerStart,
    });
    const figures = await networkSiteSteps({
      t,
      net,
      ns,
      vm: booted,
      address,
      clientConfig,
      config: parse(await Deno.readTextFile(bundle.paths.machineConfig)),
      work: WORK,
    });
    console.log(JSON.stringify({ suite: "network", accel: "tcg", ...lacp, ...figures }));
  }, { ipv6Prefix: SITE_IPV6_PREFIX, dhcp6Prefix: SITE_DHCP6_PREFIX }).finally(() => peer?.stop());
});
