/**
 * The set of privileged backends a node runs with: native on a real node, and
 * in dev mode "observe read-only, fake every change". Controllers and the boot
 * sequence take these, never the addon.
 */
import {
  type BlockBackend,
  NativeBlockBackend,
  ReadOnlyBlockBackend,
} from "../platform/block/mod.ts";
import { type ClockBackend, FakeClockBackend, NativeClockBackend } from "../platform/clock/mod.ts";
import {
  FakeIdentityBackend,
  type IdentityBackend,
  NativeIdentityBackend,
} from "../platform/identity/mod.ts";
import {
  FakeFirewallBackend,
  type FirewallBackend,
  NftFirewallBackend,
} from "../platform/firewall/mod.ts";
import { type FirmwareBackend, NativeFirmwareBackend } from "../platform/firmware/mod.ts";
import { FakeKmodBackend, type KmodBackend, NativeKmodBackend } from "../platform/kmod/mod.ts";
import {
  FakeMemoryBackend,
  type MallocBackend,
  type MemoryBackend,
  NativeMallocBackend,
  NativeMemoryBackend,
} from "../platform/memory/mod.ts";
import { FakeMountBackend, type MountBackend, NativeMountBackend } from "../platform/mount/mod.ts";
import {
  FakeNetworkBackend,
  NativeNetworkBackend,
  type NetworkBackend,
} from "../platform/network/mod.ts";
import { FakePowerBackend, NativePowerBackend, type PowerBackend } from "../platform/power/mod.ts";
import { nativeProcessBackend, type ProcessBackend } from "../platform/process/mod.ts";
import { NativeUeventBackend, type UeventBackend } from "../platform/uevent/mod.ts";
import {
  FakeWireguardBackend,
  WgWireguardBackend,
  type WireguardBackend,
} from "../platform/wireguard/mod.ts";

/** Every privileged surface machined uses. */
export interface NodeBackends {
  mount: MountBackend;
  power: PowerBackend;
  identity: IdentityBackend;
  kmod: KmodBackend;
  clock: ClockBackend;
  network: NetworkBackend;
  block: BlockBackend;
  process: ProcessBackend;
  /** machined's own resident memory (boot/page_out.ts). */
  memory: MemoryBackend;
  /** machined's own malloc heap (boot/malloc_trim.ts). */
  malloc: MallocBackend;
  /** Firmware trust facts (Secure Boot, enrolled keys, lockdown, TPM): read-only. */
  firmware: FirmwareBackend;
  /** The ingress firewall: Debian's nft over machined's own table. */
  firewall: FirewallBackend;
  /** WireGuard keys and peers: Debian's `wg`. */
  wireguard: WireguardBackend;
  /** Kernel uevents (hotplug): read-only, so dev mode listens to the host's too. */
  uevents: UeventBackend;
}

/** The real kernel, for a node running as PID 1. */
export function nativeBackends(): NodeBackends {
  return {
    mount: new NativeMountBackend(),
    power: new NativePowerBackend(),
    identity: new NativeIdentityBackend(),
    kmod: new NativeKmodBackend(),
    clock: new NativeClockBackend(),
    network: new NativeNetworkBackend(),
    block: new NativeBlockBackend(),
    process: nativeProcessBackend(),
    memory: new NativeMemoryBackend(),
    malloc: new NativeMallocBackend(),
    firmware: new NativeFirmwareBackend(),
    firewall: new NftFirewallBackend({ process: nativeProcessBackend() }),
    wireguard: new WgWireguardBackend({ process: nativeProcessBackend() }),
    uevents: new NativeUeventBackend(),
  };
}

/**
 * Dev mode: nothing that would change the host. Processes are real (machined's
 * own children: apid and the configured services, unprivileged); disks are read
 * from the host and never written (EROFS); the host's firmware facts are read (they are
 * read-only); everything else (the firewall included) is an in-memory fake.
 */
export function devBackends(): NodeBackends {
  return {
    mount: new FakeMountBackend(),
    power: new FakePowerBackend(),
    identity: new FakeIdentityBackend(),
    kmod: new FakeKmodBackend(),
    clock: new FakeClockBackend(),
    network: new FakeNetworkBackend(),
    block: new ReadOnlyBlockBackend(new NativeBlockBackend()),
    process: nativeProcessBackend(),
    memory: new FakeMemoryBackend(), // dev figures stay comparable with earlier benches
    malloc: new NativeMallocBackend(), // machined's own heap only: trimmed as on a node
    firmware: new NativeFirmwareBackend(), // read-only: the host's firmware, as a node would see it
    firewall: new FakeFirewallBackend(), // never the host's nftables
    wireguard: new FakeWireguardBackend(), // never the host's WireGuard devices
    uevents: new NativeUeventBackend(), // listening changes nothing; disks are read-only here
  };
}
