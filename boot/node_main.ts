/**
 * machined as PID 1: mount the early filesystems, delegate cgroups, route
 * Ctrl-Alt-Del to a signal, load the image's kernel modules, load and validate
 * the config (maintenance when it is bad), set up the node PKI, start apid and
 * then the controllers, then wait for a shutdown request. PID 1 never exits:
 * a fatal error reboots the node after a delay.
 */
import { createLogger, type Logger, type RingLogger } from "../logs/mod.ts";
import {
  createNodeDomains,
  followVolumes,
  nativeBackends,
  NODE_PATHS,
  nodeActions,
  type NodeBackends,
  startMallocTrim,
  UNREADY_CONDITION,
  unreadyReason,
} from "../node/mod.ts";
import { Machined } from "../core/mod.ts";
import {
  configApplier,
  ConfigKeeper,
  readFirstConfig,
  recordMissingConfig,
  startLateConfig,
} from "../config/keeper/mod.ts";
import { NativeKmsgBackend } from "../platform/kmsg/mod.ts";
import {
  announceFingerprint,
  type ApiHost,
  issueProbeCredentials,
  type NodeApiPki,
  NodeMaintenanceGate,
  readImageCa,
  reportApiReady,
  startApiHost,
  startNodeApiPki,
} from "../api/host/mod.ts";
import { startInstallToDisk } from "../install/mod.ts";
import { createTrustedFetch } from "../pki/mod.ts";
import { DEFAULT_API_LISTEN, type MachineConfig } from "../config/mod.ts";
import { configCandidates, parseCmdline } from "../layout/mod.ts";
import {
  delegateCgroupControllers,
  EARLY_MOUNTS,
  FIRMWARE_MOUNTS,
  mountEarly,
  mountFirmwareFilesystems,
} from "./early_mounts.ts";
import { NativeCgroupBackend } from "../platform/cgroup/mod.ts";
import { fatalReboot, installPid1Guards } from "./pid1_guard.ts";
import { NativePowerBackend, type PowerBackend } from "../platform/power/mod.ts";
import { runSequence, task } from "./sequence.ts";
import { type PowerAction, type ShutdownDeps, shutdownNode } from "./shutdown.ts";
import { nodeReset } from "../reset/mod.ts";
import { nodeBootCmdline, nodeEsp, nodeUpgradeService } from "../upgrade/mod.ts";
import { isTestImage, withNodeWatchdog } from "../watchdog/mod.ts";
import { ProcBootIdSource } from "../platform/identity/mod.ts";
import { NativeCryptBackend } from "../platform/crypt/mod.ts";
import { NativeProcBackend } from "../platform/procfs/mod.ts";
import type { EspBackend } from "../platform/esp/mod.ts";
import { ProcSysctlBackend } from "../controllers/kernel/mod.ts";
import { startPageOut } from "./page_out.ts";
import { startImageModules } from "./image_modules.ts";

/** Where the image puts its files (see imager/initramfs). */
export const IMAGE_PATHS = {
  modules: "/etc/machined/modules",
  pki: "/etc/machined/pki",
} as const;

/**
 * apid's cgroup (machined-edge): beside the services' tree, not in it, so a
 * reset's kill of every service leaves the API up. 64 MiB is four times what
 * it holds with 1 000 Watch streams (docs/decisions.md); one OOM kill
 * restarts it, machined is untouched.
 */
export const APID_CGROUP = {
  root: "/sys/fs/cgroup/system",
  name: "apid",
  limits: { memoryMax: 64 * 1024 * 1024, pidsMax: 256 },
} as const;

/**
 * Deadlines of the boot steps. An optional step that overruns is left behind;
 * a required one (the early mounts, the config) fails boot to the fatal path.
 */
export const BOOT_DEADLINES_MS = {
  mountFilesystems: 30_000,
  cgroups: 10_000,
  ctrlAltDel: 5_000,
  firmwareMounts: 5_000,
  cmdline: 5_000,
  loadConfig: 60_000,
} as const;

/** Runtime directories machined owns. */
export const RUN_PATHS = {
  root: "/run/machined",
  pki: "/run/machined/pki",
  apidPki: "/run/machined/apid-pki",
} as const;

/** What {@link runNode} is made of; tests replace pieces to drive PID 1's failure paths. */
export interface RunNodeDeps {
  /** The privileged backends (the addon loads here, so this may throw). */
  createBackends: () => NodeBackends;
  bootNode: (backends: NodeBackends, logger: RingLogger) => Promise<PowerAction>;
  fatalReboot: (error: unknown, power: PowerBackend, logger: Logger) => Promise<unknown>;
  /** The power backend for the fatal path when `createBackends` itself threw. */
  fallbackPower: () => PowerBackend;
  createLogger: () => RingLogger;
  installGuards: (logger: Logger) => void;
  /** What PID 1 does once there is nothing left to do: idle forever. */
  idle: () => Promise<void>;
}

const RUN_NODE_DEPS: RunNodeDeps = {
  createBackends: nativeBackends,
  bootNode,
  fatalReboot,
  fallbackPower: () => new NativePowerBackend(),
  createLogger: () => createLogger(),
  installGuards: installPid1Guards,
  idle: async () => {
    for (;;) await new Promise((r) => setTimeout(r, 3_600_000));
  },
};

/**
 * The PID 1 entry: never returns while the machine runs. Everything after the
 * logger (guards, backends, boot, shutdown) runs inside one guard, so nothing
 * in PID 1's start can throw past it: any error goes to the fatal path (a
 * reboot after a delay), never out of PID 1 (a kernel panic).
 */
export async function runNode(overrides: Partial<RunNodeDeps> = {}): Promise<number> {
  const deps = { ...RUN_NODE_DEPS, ...overrides };
  const logger = deps.createLogger();
  let backends: NodeBackends | undefined;
  try {
    deps.installGuards(logger);
    backends = deps.createBackends();
    const action = await deps.bootNode(backends, logger);
    logger.info("pid1", `machine going down: ${action}`);
  } catch (e) {
    try {
      await deps.fatalReboot(e, backends?.power ?? fallbackPower(deps, logger), logger);
    } catch (fatal) {
      logger.error("pid1", "the fatal path failed", { error: fatal });
    }
  }
  // reboot(2) does not return; if it somehow did, idle rather than exit.
  await deps.idle();
  return 1;
}

/** A power backend for the fatal path; one whose calls fail when even that cannot load. */
function fallbackPower(deps: RunNodeDeps, logger: Logger): PowerBackend {
  try {
    return deps.fallbackPower();
  } catch (e) {
    logger.error("pid1", "no power backend: cannot reboot", { error: e });
    const fail = () => Promise.reject(e);
    return {
      sync: fail,
      restart: fail,
      powerOff: fail,
      halt: fail,
      kexec: fail,
      setCtrlAltDel: fail,
    };
  }
}

/** Boots the node and resolves when a shutdown has been carried out. */
export async function bootNode(
  backends: NodeBackends,
  logger: RingLogger,
): Promise<PowerAction> {
  const started = performance.now();
  backends = withNodeWatchdog(backends, logger); // pets machined-init's watchdog (watchdog)
  const node = composeNode(backends, logger);
  // Loaded beside the config, the PKI and the API host; awaited before the controllers.
  const modules = startImageModules({
    kmod: backends.kmod,
    listPath: IMAGE_PATHS.modules,
    events: node.machined.events,
    logger,
  });
  const { config, cmdline } = await runBootSequence(node, backends, logger);
  const unready = unreadyReason(cmdline, isTestImage(), logger); // a test image's hook only
  if (unready) node.machined.conditions.set(UNREADY_CONDITION, unready);
  await prepareRunDir();
  const hostname = config?.machine.hostname ?? "machined";
  const control = wireNodeControl(node, backends, logger, hostname);
  const api = await startApi(node, backends, logger, { config, started, control });
  await modules; // VLANs, bonds, WireGuard, dm-crypt, overlay: the controllers need them
  // The controllers start once apid is spawned: they would otherwise hold the
  // one JS thread while the server certificate is made (2-3 s under TCG), and
  // apid's own start (a separate process) then overlaps their first reconciles.
  node.machined.start();
  // No config at boot: a CIDATA volume, then machined.config=http(s)://… (config/keeper/config_sources.ts).
  if (!config) {
    const { machined, keeper } = node;
    startLateConfig({
      machined,
      keeper,
      cmdline,
      mount: backends.mount,
      gate: control.gate,
      fetch: createTrustedFetch({ bundlePath: NODE_PATHS.trustedRoots }),
      // An encrypted STATE holding the config: opened by its header's tokens, or `locked`
      // (maintenance) until UnlockVolume's passphrase opens it (docs/encryption.md).
      encryptedState: node.domains.stateOpener,
      disksScanned: node.domains.disksScanned,
    });
  }
  // machine.install.system naming another disk: write the system there and reboot from it.
  startInstallToDisk(node, backends, () => control.requestPower("reboot"));
  // Ctrl-Alt-Del arrives as SIGINT once routed to a signal.
  Deno.addSignalListener("SIGINT", () => control.requestPower("reboot"));
  Deno.addSignalListener("SIGTERM", () => control.requestPower("poweroff"));
  node.machined.stage.set(config ? "running" : "maintenance");
  const stopPageOut = startPageOut({ memory: backends.memory, logger });
  const stopMallocTrim = startMallocTrim({ malloc: backends.malloc, logger });
  const action = await control.requested;
  stopPageOut();
  stopMallocTrim();
  await shutdownComposedNode(node, backends, api, control, action);
  return action;
}

/** machined, its domains and config keeper, wired but not started. */
interface ComposedNode {
  machined: Machined;
  domains: ReturnType<typeof createNodeDomains>;
  keeper: ConfigKeeper;
  stopFollowingVolumes: () => void;
  /** The ESP, shared by the upgrade service and the kernel-cmdline controller. */
  esp: EspBackend;
}

/** Step 1: build machined and every domain over the real backends. */
function composeNode(backends: NodeBackends, logger: RingLogger): ComposedNode {
  const machined = new Machined({ mode: "node", pid1: Deno.pid === 1, logger });
  const esp = nodeEsp(machined, backends.mount);
  // The keeper is made after the domains; WireGuard and encryption read its keys once it exists.
  const late: { keeper?: ConfigKeeper } = {};
  const domains = createNodeDomains(machined, backends, {
    paths: NODE_PATHS,
    autoDhcp: true,
    sysctls: new ProcSysctlBackend(),
    servicesWaitForVar: true,
    cmdline: { proc: new NativeProcBackend(), boot: nodeBootCmdline(esp) },
    // The store's config has its secrets redacted; WireGuard and the provisioner need them.
    fullConfig: () => late.keeper?.config,
  });
  machined.register(domains.controllers);
  const keeper = late.keeper = new ConfigKeeper(machined);
  const stopFollowingVolumes = followVolumes(machined, {
    config: keeper,
    supervisor: domains.supervisor,
    beforeServices: domains.closeTpmUnseal,
  });
  return { machined, domains, keeper, stopFollowingVolumes, esp };
}

/** What the boot sequence found: the valid config, if any, and the kernel command line. */
interface BootFound {
  config: MachineConfig | undefined;
  cmdline: Map<string, string>;
}

/**
 * Step 2: the boot sequence (early mounts; cgroups, Ctrl-Alt-Del, the command
 * line; the config). The image's modules load beside it (boot/image_modules.ts).
 */
async function runBootSequence(
  node: ComposedNode,
  backends: NodeBackends,
  logger: Logger,
): Promise<BootFound> {
  let cmdline = new Map<string, string>();
  let config: MachineConfig | undefined;
  await runSequence("boot", [
    {
      name: "earlyMounts",
      tasks: [task("mountFilesystems", async () => {
        const mounted = await mountEarly(backends.mount);
        logger.info("boot", "mounted", { targets: mounted.join(",") });
      }, { deadlineMs: BOOT_DEADLINES_MS.mountFilesystems })],
    },
    {
      name: "kernel",
      tasks: [
        task("cgroups", async () => {
          const c = await delegateCgroupControllers();
          logger.info("boot", "cgroup controllers delegated", { controllers: c.join(",") });
        }, { optional: true, deadlineMs: BOOT_DEADLINES_MS.cgroups }),
        task("firmwareMounts", async () => {
          const mounted = await mountFirmwareFilesystems(backends.mount);
          logger.info("boot", "mounted", { targets: mounted.join(",") });
        }, { optional: true, deadlineMs: BOOT_DEADLINES_MS.firmwareMounts }),
        task("ctrlAltDel", () => backends.power.setCtrlAltDel("signal"), {
          optional: true,
          deadlineMs: BOOT_DEADLINES_MS.ctrlAltDel,
        }),
        task("cmdline", async () => {
          cmdline = parseCmdline(await Deno.readTextFile("/proc/cmdline"));
        }, { optional: true, deadlineMs: BOOT_DEADLINES_MS.cmdline }),
      ],
    },
    {
      name: "config",
      tasks: [task("loadConfig", async () => {
        config = await loadBootConfig(node, cmdline, logger);
      }, { deadlineMs: BOOT_DEADLINES_MS.loadConfig })],
    },
  ], { events: node.machined.events, logger });
  return { config, cmdline };
}

/** The first config found (command line, STATE, image), applied; undefined means maintenance. */
async function loadBootConfig(
  node: ComposedNode,
  cmdline: Map<string, string>,
  logger: Logger,
): Promise<MachineConfig | undefined> {
  const sources = configCandidates(cmdline);
  const found = sources.inline
    ? { text: atob(sources.inline), path: "cmdline" }
    : await readFirstConfig(sources.paths);
  if (!found) {
    await recordMissingConfig(node.machined.store, sources.paths);
    logger.warn("boot", "no config found: maintenance", { tried: sources.paths.join(",") });
    return undefined;
  }
  // /proc/cmdline is world-readable: a config there may not carry the CA key.
  const publicSource = found.path === "cmdline" ? "kernel command line" : undefined;
  const loaded = await node.keeper.apply(found.text, found.path, { publicSource });
  if (loaded.state === "valid") return loaded.config;
  if (loaded.state === "invalid") {
    logger.warn("boot", "invalid config: maintenance", {
      errors: loaded.errors.map((e) => e.format()).join("; "),
    });
  }
  return undefined;
}

/** Step 3: /run/machined, which apid (another user) must be able to traverse to its own files. */
async function prepareRunDir(): Promise<void> {
  await Deno.mkdir(RUN_PATHS.root, { recursive: true, mode: 0o755 });
  await Deno.chmod(RUN_PATHS.root, 0o755);
}

/** Power requests, reset, the node's actions, config applies and the maintenance gate. */
interface NodeControl {
  /** Resolves with the first power action requested (RPC, signal, reset). */
  requested: Promise<PowerAction>;
  requestPower(action: PowerAction): void;
  reset: ReturnType<typeof nodeReset>;
  actions: ReturnType<typeof nodeActions>;
  configs: ReturnType<typeof configApplier>;
  gate: NodeMaintenanceGate;
  kexec: ShutdownDeps["kexec"];
}

/**
 * Step 4: what the API drives, built once: the power request, reset
 * (reset), the actions with the boot id, the config applier
 * (config/keeper/config_modes.ts) and the maintenance gate.
 */
function wireNodeControl(
  node: ComposedNode,
  backends: NodeBackends,
  logger: Logger,
  hostname: string,
): NodeControl {
  const { machined, keeper } = node;
  let requestPower!: (action: PowerAction) => void;
  let shuttingDown = false;
  const requested = new Promise<PowerAction>((r) => (requestPower = r))
    .finally(() => (shuttingDown = true));
  const bootId = new ProcBootIdSource();
  const reset = nodeReset({
    machined,
    block: backends.block,
    crypt: new NativeCryptBackend({ process: backends.process }),
    bootId,
    node: () => hostname,
    requestPower: (what) => requestPower(what),
    shuttingDown: () => shuttingDown,
    serviceCgroups: NODE_PATHS.serviceCgroups,
  });
  const upgrades = nodeUpgradeService({
    machined,
    esp: node.esp,
    mount: backends.mount,
    keeper,
    bootId,
    reboot: () => requestPower("reboot"),
    kmod: backends.kmod,
    firmware: backends.firmware,
    fetch: createTrustedFetch({ bundlePath: NODE_PATHS.trustedRoots }),
  });
  void upgrades.watchAndBless(); // blesses a booted trial slot once the node is ready
  const actions = nodeActions({
    hostname: () => hostname,
    logger,
    onPower: (what, _by, mode) => (upgrades.kexec.request(mode), requestPower(what)),
    bootId: () => bootId.bootId(),
    reset: (r, by) => reset.coordinator.request(r, by),
    upgrade: (b, o, by) => upgrades.upgrade.upgrade(b, o, by),
    rollback: (o, by) => upgrades.upgrade.rollback(o, by),
    unlockVolume: node.domains.unlockVolume,
  });
  // A `reboot` apply reboots through the same path as the Reboot RPC.
  const configs = configApplier(keeper, { reboot: (by) => actions.reboot(by) });
  const gate = new NodeMaintenanceGate(() => keeper.config !== undefined);
  return {
    requested,
    requestPower: (what) => requestPower(what),
    reset,
    actions,
    configs,
    gate,
    kexec: upgrades.kexec,
  };
}

/** The API's PKI and apid, as shutdown stops them. */
interface StartedApi {
  stop(): Promise<void>;
}

/**
 * Step 5: the node PKI and apid. machined, not apid, holds the CA key
 * (api/host/api_pki.ts): it picks the CA, issues and re-issues the server
 * certificate and restarts apid with it. Without any CA it serves
 * maintenance mode (api/host/maintenance_api.ts).
 */
async function startApi(
  node: ComposedNode,
  backends: NodeBackends,
  logger: Logger,
  o: { config: MachineConfig | undefined; started: number; control: NodeControl },
): Promise<StartedApi> {
  const { machined, domains, keeper } = node;
  const { gate, configs, actions } = o.control;
  const listen = o.config?.machine.api?.listen ?? DEFAULT_API_LISTEN;
  let api: ApiHost | undefined;
  // Set once the first evaluation returns (the API starts inside it).
  let owner: NodeApiPki | undefined;
  const apiPki = owner = await startNodeApiPki({
    machined,
    keeper,
    gate,
    announce: announceFingerprint,
    pkiDir: RUN_PATHS.pki,
    apidPkiDir: RUN_PATHS.apidPki,
    imageCa: await readImageCa(IMAGE_PATHS.pki, (error) => {
      logger.error("pki", `cannot read the image's CA in ${IMAGE_PATHS.pki}`, { error });
    }),
    fallbackHostname: "machined",
    startApi: async (pki) => {
      const host = api = await startApiHost({
        fileRoot: "/",
        machined,
        pki,
        pkiDir: RUN_PATHS.apidPki,
        runDir: RUN_PATHS.root,
        listen,
        api: o.config?.machine.api,
        processBackend: backends.process,
        endpoints: () => [listen.replace(/^0\.0\.0\.0:/, "127.0.0.1:")],
        dropUser: Deno.uid() === 0,
        services: domains.supervisor,
        kernelLog: new NativeKmsgBackend(),
        serviceCgroups: NODE_PATHS.serviceCgroups,
        configs,
        maintenance: gate,
        cgroup: { ...APID_CGROUP, backend: new NativeCgroupBackend(APID_CGROUP.root) },
        actions,
        malloc: backends.malloc,
      });
      // Beside boot, never blocking it: "API ready" once a call through the edge is answered.
      void reportApiReady({
        api: host,
        started: o.started,
        logger,
        machined,
        listen,
        credentials: () =>
          gate.active
            ? Promise.resolve({ kind: "maintenance", serverPem: pki.server.certPem })
            : issueProbeCredentials(pki.ca),
        // Maintenance serves its own certificate, whose names are not the node's. The
        // owner is set before the controllers start, so before any routable address.
        servedNames: () => gate.active ? undefined : owner?.servedNames,
      });
      return {
        // A re-issued certificate, another CA, maintenance's end: reloaded, not restarted.
        restartApid: () => host.reload(),
      };
    },
  });
  return {
    stop: async () => {
      await apiPki.stop();
      await api?.stop();
    },
  };
}

/** Step 6: services, API, controllers, reset's wipe if asked, then the power action (boot/shutdown.ts). */
async function shutdownComposedNode(
  node: ComposedNode,
  backends: NodeBackends,
  api: StartedApi,
  control: NodeControl,
  action: PowerAction,
): Promise<void> {
  await shutdownNode(action, {
    machined: node.machined,
    power: backends.power,
    mount: backends.mount,
    stopServices: () => node.domains.stopServices(),
    stopApi: () => api.stop(),
    afterControllers: () => {
      node.stopFollowingVolumes();
      return node.domains.shutdown();
    },
    keepMounted: [...EARLY_MOUNTS, ...FIRMWARE_MOUNTS].map((m) => m.target),
    reset: control.reset.sequence(),
    kexec: control.kexec,
  });
}
