/**
 * `machine.network.wireguard`: WireGuard interfaces machined creates, with
 * their keys and peers. The private and preshared keys are secret-marked:
 * the MachineConfig resource holds `(redacted)` for every role, and errors
 * never quote them. Rules across fields (a peer listed twice, allowed IPs of
 * two peers overlapping, names shared with other links) are in
 * `../wireguard_checks.ts`.
 *
 * @module
 */
import * as v from "valibot";
import { mapping } from "./mapping.ts";
import { InterfaceCidr, intRange, isDnsName } from "./primitives.ts";
import { checkWithHint, quote } from "./hints.ts";
import { InterfaceName, linkEntries } from "./link_entries.ts";
import { parseHostPort } from "../../ip/mod.ts";

/** A WireGuard key: 32 bytes in standard base64 (44 characters, the last `=`). */
const KEY = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;

/** True for the text of a WireGuard key (`wg genkey`, `wg pubkey`). */
export function isWireguardKey(s: string): boolean {
  return KEY.test(s);
}

/**
 * The default MTU: 1500 less WireGuard's largest overhead (IPv6 outer header
 * 40, UDP 8, WireGuard 32), as wg-quick chooses. Over a 1500-byte underlay it
 * never fragments, whether the underlay is IPv4 or IPv6.
 */
export const WIREGUARD_DEFAULT_MTU = 1420;
/** The smallest MTU: IPv6's minimum, since a tunnel carries IPv6 too. */
export const WIREGUARD_MIN_MTU = 1280;
/** The largest MTU: a 64 KiB IPv6 underlay packet less WireGuard's 80 bytes of overhead. */
export const WIREGUARD_MAX_MTU = 65455;

const keyHint = () => "32 bytes in base64: 44 characters ending in '=', as `wg genkey` prints";

/** A public key; quoted in errors (it is no secret). */
const PublicKey = v.pipe(
  v.string("expected a WireGuard public key (base64)"),
  checkWithHint(isWireguardKey, (i) => `invalid WireGuard key ${quote(i.input)}`, keyHint),
);

/** A secret key: never quoted, and redacted wherever the config is shown. */
const secretKey = (what: string) =>
  v.pipe(
    v.string(`expected the ${what} as a base64 string`),
    checkWithHint(isWireguardKey, `invalid ${what} (not a WireGuard key)`, keyHint),
  );

/** True for `host:port`, `ip:port` or `[ipv6]:port`, the forms `wg` resolves. */
export function isEndpoint(s: string): boolean {
  if (parseHostPort(s)) return true;
  const m = /^([^:\[\]]+):([0-9]{1,5})$/.exec(s);
  return m !== null && isDnsName(m[1]) && Number(m[2]) >= 1 && Number(m[2]) <= 65535;
}

/** One peer of a WireGuard interface. */
export const WireguardPeerSchema = mapping({
  public_key: v.pipe(
    PublicKey,
    v.description("The peer's public key (`wg pubkey`)."),
    v.examples(["xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg="]),
  ),
  preshared_key: v.optional(
    v.pipe(
      secretKey("preshared key"),
      v.description(
        "An optional symmetric key (`wg genpsk`) mixed into the handshake. Secret: shown as `(redacted)`, never quoted in errors.",
      ),
      v.metadata({ secret: true }),
    ),
  ),
  endpoint: v.optional(
    v.pipe(
      v.string('expected "host:port"'),
      checkWithHint(
        isEndpoint,
        (i) => `invalid endpoint ${quote(i.input)}`,
        () => 'use "ip:port", "[ipv6]:port" or "name:port", e.g. "203.0.113.7:51820"',
      ),
      v.description(
        "Where to reach the peer. Omit for a peer that connects first (its address is learnt from its packets).",
      ),
      v.examples(["203.0.113.7:51820"]),
    ),
  ),
  allowed_ips: v.optional(
    v.pipe(
      v.array(InterfaceCidr, "expected a list of CIDRs"),
      v.description(
        "Networks this peer may send from, and that are sent to it. No two peers of one interface may overlap.",
      ),
      v.examples([["10.8.0.2/32", "192.168.50.0/24"]]),
    ),
    [],
  ),
  persistent_keepalive: v.optional(
    v.pipe(
      intRange(1, 65535, "persistent_keepalive"),
      v.description(
        "Send a keepalive every this many seconds, so a NAT in between keeps the mapping. Omit for none; 25 suits most NATs.",
      ),
      v.examples([25]),
    ),
  ),
});

/** A WireGuard interface. */
export const WireguardSchema = mapping({
  name: v.pipe(InterfaceName, v.description("Name of the interface."), v.examples(["wg0"])),
  private_key: v.pipe(
    secretKey("private key"),
    v.description(
      "The interface's private key (`wg genkey`). Secret: shown as `(redacted)`, never quoted in errors; handed to `wg` in a 0600 file, never on its command line.",
    ),
    v.metadata({ secret: true }),
  ),
  listen_port: v.optional(
    v.pipe(
      intRange(1, 65535, "listen_port"),
      v.description(
        "UDP port to receive on. Omit for a random one (peers then cannot reach it first). A `block` firewall opens it.",
      ),
      v.examples([51820]),
    ),
  ),
  mtu: v.optional(
    v.pipe(
      intRange(WIREGUARD_MIN_MTU, WIREGUARD_MAX_MTU, "mtu"),
      v.description(
        "Link MTU. The default, 1420, fits a 1500-byte underlay of either family; inside another tunnel subtract that tunnel's overhead too (docs/network.md).",
      ),
      v.examples([1420, 1380]),
    ),
    WIREGUARD_DEFAULT_MTU,
  ),
  up: linkEntries.up,
  addresses: linkEntries.addresses,
  routes: linkEntries.routes,
  peers: v.optional(
    v.pipe(
      v.array(WireguardPeerSchema, "expected a list of peers"),
      v.description("The peers, each by its public key."),
    ),
    [],
  ),
});

/** A parsed WireGuard interface. */
export type WireguardConfig = v.InferOutput<typeof WireguardSchema>;
/** A parsed WireGuard peer. */
export type WireguardPeerConfig = v.InferOutput<typeof WireguardPeerSchema>;
