/**
 * The composition root for machined's domains: which controllers a node runs
 * and the long-running components beside them (the service supervisor), built
 * from the node's backends. Both PID 1 and dev mode use it, so they run the
 * same code against different backends.
 */
import { blockControllers, StateBootOpener, VolumeUnlocker } from "../controllers/block/mod.ts";
import type { NodeActions } from "../api/server/mod.ts";
import { unlockAction } from "./unlock_action.ts";
import { firewallControllers } from "../controllers/firewall/mod.ts";
import { wireguardControllers } from "../controllers/wireguard/mod.ts";
import { firmwareControllers } from "../controllers/firmware/mod.ts";
import { DiskExtensionFiles, extensionsControllers } from "../controllers/extensions/mod.ts";
import {
  kernelControllers,
  type KernelDeps,
  type SysctlBackend,
} from "../controllers/kernel/mod.ts";
import { createNetworkControllers } from "../controllers/network/mod.ts";
import { runtimeControllers } from "../controllers/services/mod.ts";
import { timeControllers, UdpNtpTransport } from "../controllers/time/mod.ts";
import {
  DiskBundleFiles,
  NODE_TRUSTED_ROOTS_BUNDLE,
  trustControllers,
} from "../controllers/trust/mod.ts";
import { NativeCgroupBackend } from "../platform/cgroup/mod.ts";
import {
  NativeCryptBackend,
  nodeTpmKeys,
  readSmbiosUuid,
  type TpmKeys,
} from "../platform/crypt/mod.ts";
import { CountingUeventBackend, type UeventBackend } from "../platform/uevent/mod.ts";
import { ueventFamily } from "../metrics/mod.ts";
import type { MachineController } from "../resources/mod.ts";
import { createSupervisor, type Supervisor } from "../supervisor/mod.ts";
import type { NodeBackends } from "./backends.ts";
import type { Machined } from "../core/mod.ts";
import { varMountedGate } from "./var_gate.ts";
import { TpmUnsealCloser } from "./tpm_close.ts";
import { followLoggingConfig } from "../config/keeper/mod.ts";
import type { MachineConfig } from "../config/mod.ts";

/** Where a domain keeps its files; dev mode points these into its state dir. */
export interface DomainPaths {
  /** Where resolv.conf is written (a node: /run/resolv.conf, which /etc/resolv.conf links to). */
  resolvConf: string;
  /** containerd's root and state directories and config file. */
  containerd: { root: string; state: string; configPath: string };
  /** cgroup v2 directory for services; none means no per-service cgroups. */
  serviceCgroups?: string;
  /** Where disks are discovered. @default /sys */
  sysfsRoot?: string;
  /**
   * The CA bundle (system bundle plus `machine.trusted_roots`) services and machined's HTTPS
   * clients trust. @default none: services get no SSL_CERT_FILE and no bundle is written
   */
  trustedRoots?: string;
  /** The system bundle the node's is built from. @default /etc/ssl/certs/ca-certificates.crt */
  systemTrustedRoots?: string;
}

/** What a node runs besides the core controllers. */
export interface NodeDomains {
  controllers: MachineController[];
  supervisor: Supervisor;
  /** Stops the services (reverse dependency order); the API is still up. */
  stopServices(): Promise<void>;
  /** After the controllers stopped: DHCP releases, supervisor close. */
  shutdown(): Promise<void>;
  /** The UnlockVolume action over the block domain's locked volumes. */
  unlockVolume: NonNullable<NodeActions["unlockVolume"]>;
  /** Opens an encrypted STATE before any config (by its tokens, or UnlockVolume's passphrase). */
  stateOpener: StateBootOpener;
  /** Resolves once disk discovery's first full scan is in the store (late config's STATE lookup). */
  disksScanned: Promise<void>;
  /** Closes PCR 11 to `tpm` keys (EPHEMERAL mounted, before services); the start gate waits. */
  closeTpmUnseal(): Promise<void>;
}

/** Paths on a real node. */
export const NODE_PATHS: DomainPaths & { trustedRoots: string } = {
  // The root image is read-only: /etc/resolv.conf is a link to this file, and
  // containerd's generated config lives on /run too.
  resolvConf: "/run/resolv.conf",
  containerd: {
    root: "/var/lib/containerd",
    state: "/run/containerd",
    configPath: "/run/machined/containerd/config.toml",
  },
  serviceCgroups: "/sys/fs/cgroup/machined",
  trustedRoots: NODE_TRUSTED_ROOTS_BUNDLE,
};

/** Builds every domain for `machined` over `backends`. */
export function createNodeDomains(
  machined: Machined,
  backends: NodeBackends,
  options: {
    paths: DomainPaths;
    autoDhcp: boolean;
    /** /proc/sys on a node; a fake in dev mode (never the host's sysctls). */
    sysctls: SysctlBackend;
    /**
     * Hold every service until EPHEMERAL is mounted at /var when the config
     * installs to a disk (a node; dev mode never mounts it). @default false
     */
    servicesWaitForVar?: boolean;
    /**
     * The booted and next kernel command line (a node: /proc and the booted slot's loader
     * entry). @default none: no KernelCmdlineStatus (dev mode boots no slot)
     */
    cmdline?: KernelDeps["cmdline"];
    /**
     * The config in force with its secrets (the keeper's; the store's copy is redacted):
     * WireGuard's keys and the encryption keys.
     */
    fullConfig?: () => MachineConfig | undefined;
  },
): NodeDomains {
  const { events, logger } = machined;
  const trusted = options.paths.trustedRoots;
  const network = createNetworkControllers({
    backend: backends.network,
    identity: backends.identity,
    resolvConfPath: options.paths.resolvConf,
    autoDhcp: options.autoDhcp,
    events,
  });
  // `tpm` slots: sealed and unsealed through tpm2-tools on /dev/tpmrm0; skipped with the
  // reason while the device or the tools are missing (docs/encryption.md, "TPM keys").
  const tpm = nodeTpmKeys(backends.process);
  const closer = new TpmUnsealCloser(tpm, machined);
  const supervisor = serviceSupervisor(machined, backends, options, closer);
  const stopFollowingLogging = followLoggingConfig(machined.store, { logger, supervisor });
  const block = blockDomain(machined, backends, { ...options, tpm });
  return {
    controllers: [
      ...network.controllers,
      ...timeControllers({ clock: backends.clock, transport: new UdpNtpTransport(), events }),
      ...kernelControllers({ ...pickKernel(options), kmod: backends.kmod, events }),
      ...block.controllers,
      ...trustedRootControllers(options.paths, events),
      ...runtimeControllers({
        containerd: options.paths.containerd,
        ...(trusted ? { trustedRoots: { bundlePath: trusted } } : {}),
      }),
      ...firmwareControllers({ firmware: backends.firmware }),
      ...extensionsControllers({ files: new DiskExtensionFiles(), events }),
      ...firewallControllers({ backend: backends.firewall }),
      ...wireguardControllers({
        backend: backends.wireguard,
        secrets: options.fullConfig ?? (() => undefined),
      }),
    ],
    supervisor,
    stopServices: () => supervisor.stopAll(),
    unlockVolume: block.unlockVolume,
    stateOpener: block.stateOpener,
    disksScanned: block.disksScanned,
    closeTpmUnseal: () => closer.close(),
    async shutdown() {
      stopFollowingLogging();
      await network.shutdown();
      await supervisor.close();
    },
  };
}

/**
 * The service supervisor; on a node that installs to a disk its start gate
 * holds every service until /var is mounted and PCR 11 is closed to unsealing.
 */
function serviceSupervisor(
  machined: Machined,
  backends: NodeBackends,
  options: { paths: DomainPaths; servicesWaitForVar?: boolean },
  closer: TpmUnsealCloser,
) {
  const { events, logger } = machined;
  return createSupervisor({
    store: machined.store,
    process: backends.process,
    cgroups: options.paths.serviceCgroups
      ? new NativeCgroupBackend(options.paths.serviceCgroups)
      : undefined,
    events,
    logger,
    logs: { machinedLog: logger.ring },
    ...(options.servicesWaitForVar
      ? { startGate: varMountedGate(machined.store, () => closer.closed) }
      : {}),
  });
}

/**
 * The block domain: its controllers over one crypt backend, and the two ways into a locked
 * volume that share its unlocker (the UnlockVolume action, and boot's STATE opener).
 */
function blockDomain(
  machined: Machined,
  backends: NodeBackends,
  options: { paths: DomainPaths; fullConfig?: () => MachineConfig | undefined; tpm: TpmKeys },
): Pick<NodeDomains, "controllers" | "unlockVolume" | "stateOpener" | "disksScanned"> {
  const { events } = machined;
  const crypt = new NativeCryptBackend({ process: backends.process });
  const keys = { smbiosUuid: () => readSmbiosUuid(), tpm: options.tpm };
  const unlocker = new VolumeUnlocker({ crypt });
  const sysfsRoot = options.paths.sysfsRoot;
  const scanned = Promise.withResolvers<void>();
  return {
    controllers: blockControllers({
      onFirstScan: scanned.resolve,
      block: backends.block,
      mounts: backends.mount,
      process: backends.process,
      crypt,
      keys,
      unlocker,
      fullConfig: options.fullConfig,
      events,
      // A fake sysfs tree (tests) has no kernel behind it: rescan it instead.
      ...(sysfsRoot ? { sysfsRoot } : { uevents: countedUevents(machined, backends.uevents) }),
    }),
    unlockVolume: unlockAction(unlocker, events),
    stateOpener: new StateBootOpener({
      crypt,
      block: backends.block,
      keys,
      unlocker,
      condition: (name, reason) => machined.conditions.set(name, reason),
      events,
    }),
    disksScanned: scanned.promise,
  };
}

/**
 * The node's uevents, counted across subscriptions (a failed stream is restarted, and each
 * subscription's counters die with it) into `machined_uevents_total`.
 */
function countedUevents(machined: Machined, uevents: UeventBackend): UeventBackend {
  const counted = new CountingUeventBackend(uevents);
  machined.metrics.collect(() => [ueventFamily(counted.totals())]);
  return counted;
}

/** The trusted-roots controllers when the node has a bundle path; none otherwise. */
function trustedRootControllers(
  paths: DomainPaths,
  events: Machined["events"],
): MachineController[] {
  if (!paths.trustedRoots) return [];
  return trustControllers({
    files: new DiskBundleFiles(),
    bundlePath: paths.trustedRoots,
    events,
    ...(paths.systemTrustedRoots ? { systemBundlePath: paths.systemTrustedRoots } : {}),
  });
}

/** The kernel domain's part of the options: /proc/sys and the command line's backends. */
function pickKernel(o: { sysctls: SysctlBackend; cmdline?: KernelDeps["cmdline"] }) {
  return { sysctls: o.sysctls, ...(o.cmdline ? { cmdline: o.cmdline } : {}) };
}
