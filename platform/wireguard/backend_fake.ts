/**
 * FakeWireguardBackend: devices in memory, with the same public key `wg`
 * derives (keys.ts), `wg syncconf`'s semantics (unlisted peers removed, kept
 * peers keep their counters) and failure injection. Seed devices with
 * {@link FakeWireguardBackend.addDevice} (the link exists) and simulate
 * traffic with {@link FakeWireguardBackend.handshake}.
 * @module
 */
import { FaultInjector } from "../mod.ts";
import type {
  WireguardBackend,
  WireguardDeviceSettings,
  WireguardDeviceState,
  WireguardPeerState,
} from "./backend.ts";
import { WireguardError } from "./backend.ts";
import { isKeyText, publicKeyOf } from "./keys.ts";

interface Device {
  publicKey: string;
  listenPort: number;
  peers: Map<string, WireguardPeerState>;
}

/** The in-memory backend. */
export class FakeWireguardBackend implements WireguardBackend {
  /** Ops: `configure`, `show`; args: the device name only (never a key). */
  readonly faults = new FaultInjector();
  readonly #devices = new Map<string, Device>();
  /** How many configure calls changed something or not. */
  configured = 0;

  /** A device now exists (its link was created), without keys or peers. */
  addDevice(name: string): void {
    if (!this.#devices.has(name)) {
      this.#devices.set(name, { publicKey: "", listenPort: 0, peers: new Map() });
    }
  }

  /** The device is gone (its link was deleted). */
  removeDevice(name: string): void {
    this.#devices.delete(name);
  }

  async configure(device: string, s: WireguardDeviceSettings): Promise<void> {
    await this.#fault("configure", device);
    const d = this.#devices.get(device);
    if (!d) {
      throw new WireguardError(
        device,
        "configure",
        1,
        "Unable to modify interface: No such device",
      );
    }
    const keys = s.peers.flatMap((p) => [p.publicKey, ...(p.presharedKey ? [p.presharedKey] : [])]);
    if (!keys.every(isKeyText)) {
      throw new WireguardError(device, "configure", 1, "Key is not the correct length or format");
    }
    let publicKey: string;
    try {
      publicKey = await publicKeyOf(s.privateKey);
    } catch {
      throw new WireguardError(device, "configure", 1, "Key is not the correct length or format");
    }
    const peers = new Map<string, WireguardPeerState>();
    for (const p of s.peers) {
      const had = d.peers.get(p.publicKey);
      peers.set(p.publicKey, {
        publicKey: p.publicKey,
        ...(p.endpoint ?? had?.endpoint ? { endpoint: p.endpoint ?? had?.endpoint } : {}),
        allowedIps: [...p.allowedIps],
        lastHandshake: had?.lastHandshake ?? 0,
        rxBytes: had?.rxBytes ?? 0,
        txBytes: had?.txBytes ?? 0,
        ...(p.persistentKeepalive ? { persistentKeepalive: p.persistentKeepalive } : {}),
      });
    }
    d.publicKey = publicKey;
    d.listenPort = s.listenPort ?? (d.listenPort || 40000 + this.#devices.size);
    d.peers = peers;
    this.configured++;
  }

  async show(device: string): Promise<WireguardDeviceState | undefined> {
    await this.#fault("show", device);
    const d = this.#devices.get(device);
    if (!d) return undefined;
    return {
      publicKey: d.publicKey,
      listenPort: d.listenPort,
      peers: [...d.peers.values()].map((p) => ({ ...p, allowedIps: [...p.allowedIps] })),
    };
  }

  /** Simulate a completed handshake with `peer` at `unixSeconds`, and traffic. */
  handshake(device: string, peer: string, unixSeconds: number, rx = 148, tx = 92): void {
    const p = this.#devices.get(device)?.peers.get(peer);
    if (!p) throw new Error(`no peer ${peer} on ${device}`);
    this.#devices.get(device)!.peers.set(peer, {
      ...p,
      lastHandshake: unixSeconds,
      rxBytes: p.rxBytes + rx,
      txBytes: p.txBytes + tx,
    });
  }

  #fault(op: string, device: string): Promise<void> {
    try {
      this.faults.check(op, [device]);
    } catch (e) {
      return Promise.reject(e);
    }
    return Promise.resolve();
  }
}
