/**
 * The WireGuard interface's privileged surface: set a device's keys, listen
 * port and peers, and read them back with each peer's handshake and traffic.
 * The link itself is made like other link kinds (rtnetlink, platform/network).
 * Secrets (the private and preshared keys) go in and never come out: a
 * {@link WireguardDeviceState} holds public keys only.
 * @module
 */

/** One peer as it should be. */
export interface WireguardPeerSettings {
  readonly publicKey: string;
  /** Secret. */
  readonly presharedKey?: string;
  /** `ip:port`, `[ipv6]:port` or `name:port`. */
  readonly endpoint?: string;
  /** CIDRs; may be empty. */
  readonly allowedIps: readonly string[];
  /** Seconds; absent: off. */
  readonly persistentKeepalive?: number;
}

/** A device as it should be; peers not listed are removed. */
export interface WireguardDeviceSettings {
  /** Secret. */
  readonly privateKey: string;
  /** Absent: the port in force is kept (a random one on a new device). */
  readonly listenPort?: number;
  readonly peers: readonly WireguardPeerSettings[];
}

/** One peer as the device has it. */
export interface WireguardPeerState {
  readonly publicKey: string;
  /** Where it was last heard from, or its configured endpoint; absent when neither. */
  readonly endpoint?: string;
  readonly allowedIps: readonly string[];
  /** Unix seconds of the last completed handshake; 0 when none yet. */
  readonly lastHandshake: number;
  readonly rxBytes: number;
  readonly txBytes: number;
  /** Seconds; absent: off. */
  readonly persistentKeepalive?: number;
}

/** A device as the kernel (or wireguard-go) has it, secrets left out. */
export interface WireguardDeviceState {
  /** Derived from the private key; "" when no private key is set. */
  readonly publicKey: string;
  readonly listenPort: number;
  readonly peers: readonly WireguardPeerState[];
}

/** What {@link WireguardBackend} failed to do, with `wg`'s exit and stderr; never a key. */
export class WireguardError extends Error {
  override name = "WireguardError";
  constructor(
    readonly device: string,
    readonly op: "configure" | "show",
    readonly code: number | null,
    readonly stderr: string,
    options?: ErrorOptions,
  ) {
    const how = code === null ? "was killed (timeout)" : `exited with ${code}`;
    super(
      `Cannot ${op} WireGuard device "${device}": wg ${how}${
        stderr.trim() ? `: ${stderr.trim()}` : ""
      }`,
      options,
    );
  }
}

/** Everything the WireGuard controller may ask of the kernel. */
export interface WireguardBackend {
  /**
   * Make `device`'s private key, listen port and peers `settings`: peers not
   * listed are removed, peers kept keep their sessions (no new handshake).
   * Idempotent.
   * @throws WireguardError when the device is missing or refuses a value.
   */
  configure(device: string, settings: WireguardDeviceSettings): Promise<void>;
  /**
   * The device's state; undefined when there is no WireGuard device by that name.
   * @throws WireguardError for any other failure.
   */
  show(device: string): Promise<WireguardDeviceState | undefined>;
}
