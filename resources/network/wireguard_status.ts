/**
 * WireguardStatus: one WireGuard interface as wireguard.WireguardController
 * last applied and read it (`wg show <if> dump`): its public key, listen port
 * and each peer's endpoint, last handshake and traffic. Public keys and
 * counters only, never the private or preshared keys: every role may read it.
 * docs/network.md ("WireGuard").
 */
import type { ResourceDescriptor } from "../descriptor.ts";

/** Type name. */
export const WIREGUARD_STATUS = "WireguardStatus";

/** One peer as the device has it. */
export interface WireguardPeerStatus {
  readonly publicKey: string;
  /** Where it was last heard from, or its configured endpoint. */
  readonly endpoint?: string;
  readonly allowedIps: readonly string[];
  /** RFC 3339; absent until a handshake completed. */
  readonly lastHandshake?: string;
  readonly rxBytes: number;
  readonly txBytes: number;
  /** Seconds; absent when off. */
  readonly persistentKeepalive?: number;
}

/** The id is the interface name. */
export interface WireguardStatusSpec {
  readonly name: string;
  /** Derived from the private key; "" when none is set (yet). */
  readonly publicKey: string;
  readonly listenPort: number;
  /** The config's keys, port and peers were applied at the last reconcile. */
  readonly configured: boolean;
  readonly peers: readonly WireguardPeerStatus[];
  /** Why the last apply or read failed; "" when it did not. */
  readonly error: string;
  /** How often the device was re-applied because something else changed its key, port or peers. */
  readonly driftReapplies: number;
}

const ago = (iso: string | undefined) => iso ?? "never";

export const wireguardStatusDescriptor: ResourceDescriptor<
  typeof WIREGUARD_STATUS,
  WireguardStatusSpec
> = {
  type: WIREGUARD_STATUS,
  namespace: "network",
  aliases: ["wireguardstatus", "wireguardstatuses", "wireguard", "wg"],
  description: "WireGuard interfaces: public key, port, each peer's handshake and traffic",
  columns: [
    { header: "PUBLIC KEY", value: (s) => s.publicKey },
    { header: "PORT", value: (s) => String(s.listenPort) },
    { header: "CONFIGURED", value: (s) => String(s.configured) },
    { header: "PEERS", value: (s) => String(s.peers.length) },
    {
      header: "HANDSHAKES",
      value: (s) =>
        s.peers.map((p) => `${p.publicKey.slice(0, 8)}:${ago(p.lastHandshake)}`).join(","),
    },
    { header: "RX", value: (s) => String(s.peers.reduce((n, p) => n + p.rxBytes, 0)) },
    { header: "TX", value: (s) => String(s.peers.reduce((n, p) => n + p.txBytes, 0)) },
    { header: "REAPPLIES", value: (s) => String(s.driftReapplies) },
    { header: "ERROR", value: (s) => s.error },
  ],
};
