/**
 * machined as PID 1: mount the early filesystems, delegate cgroups, route
 * Ctrl-Alt-Del to a signal, load the image's kernel modules, load and validate
 * the config (maintenance when it is bad), set up the node PKI, start apid and
 * then the controllers, then wait for a shutdown request. PID 1 never exits:
 * a fatal error reboots the node after a delay.
 */
import { join } from "node:path";
import { createLogger, type Logger, type LogRing } from "../logs/mod.ts";
import { nativeBackends, type NodeBackends } from "../node/backends.ts";
import { Machined } from "../node/machined.ts";
import { readFirstConfig, recordMissingConfig } from "../node/config_loader.ts";
import { configApplier, ConfigKeeper } from "../node/config_keeper.ts";
import { NativeKmsgBackend } from "../platform/kmsg/mod.ts";
import { followVolumes } from "../node/volume_hooks.ts";
import { startApiHost } from "../node/api_host.ts";
import {
  createServerCertRenewer,
  loadOrCreateNodePki,
  type NodePki,
  pathExists,
} from "../pki/mod.ts";
import type { MachineConfig } from "../config/mod.ts";
import { configCandidates, parseCmdline } from "./cmdline.ts";
import { delegateCgroupControllers, EARLY_MOUNTS, mountEarly } from "./early_mounts.ts";
import { fatalReboot, installPid1Guards } from "./pid1_guard.ts";
import { runSequence, task } from "./sequence.ts";
import { type PowerAction, shutdownNode } from "./shutdown.ts";
import { prepareApidPki } from "./apid_pki.ts";
import { nodeActions } from "../node/node_actions.ts";
import { rssKiB, uptimeSeconds } from "../node/proc_stats.ts";
import { createNodeDomains, NODE_PATHS } from "../node/domains.ts";
import { ProcSysctlBackend } from "../controllers/kernel/mod.ts";

/** Where the image puts its files (see imager/initramfs). */
export const IMAGE_PATHS = {
  modules: "/etc/machined/modules",
  pki: "/etc/machined/pki",
  /** apid's DENO_DIR (owned by machined-api), beside /machined/apid.js, outside /var. */
  apidDenoDir: "/machined/deno-apid",
} as const;

/** Runtime directories machined owns. */
export const RUN_PATHS = {
  root: "/run/machined",
  pki: "/run/machined/pki",
  apidPki: "/run/machined/apid-pki",
} as const;

/** The PID 1 entry: never returns while the machine runs. */
export async function runNode(): Promise<number> {
  const logger = createLogger();
  installPid1Guards(logger);
  const backends = nativeBackends();
  try {
    const action = await bootNode(backends, logger);
    logger.info("pid1", `machine going down: ${action}`);
  } catch (e) {
    await fatalReboot(e, backends.power, logger);
  }
  // reboot(2) does not return; if it somehow did, idle rather than exit.
  for (;;) await new Promise((r) => setTimeout(r, 3_600_000));
}

/** Boots the node and resolves when a shutdown has been carried out. */
export async function bootNode(
  backends: NodeBackends,
  logger: Logger & { ring: LogRing },
): Promise<PowerAction> {
  const started = performance.now();
  const machined = new Machined({
    mode: "node",
    pid1: Deno.pid === 1,
    logger,
  });
  const domains = createNodeDomains(machined, backends, {
    paths: NODE_PATHS,
    autoDhcp: true,
    sysctls: new ProcSysctlBackend(),
    servicesWaitForVar: true,
  });
  machined.register(domains.controllers);
  const keeper = new ConfigKeeper(machined);
  const stopFollowingVolumes = followVolumes(machined, {
    config: keeper,
    supervisor: domains.supervisor,
  });
  const { events } = machined;
  let cmdline = new Map<string, string>();
  let config: MachineConfig | undefined;

  await runSequence("boot", [
    {
      name: "earlyMounts",
      tasks: [task("mountFilesystems", async () => {
        const mounted = await mountEarly(backends.mount);
        logger.info("boot", "mounted", { targets: mounted.join(",") });
      })],
    },
    {
      name: "kernel",
      tasks: [
        task("cgroups", async () => {
          const c = await delegateCgroupControllers();
          logger.info("boot", "cgroup controllers delegated", { controllers: c.join(",") });
        }, { optional: true }),
        task("ctrlAltDel", () => backends.power.setCtrlAltDel("signal"), { optional: true }),
        task("cmdline", async () => {
          cmdline = parseCmdline(await Deno.readTextFile("/proc/cmdline"));
        }, { optional: true }),
        task("imageModules", () => loadImageModules(backends, logger), { optional: true }),
      ],
    },
    {
      name: "config",
      tasks: [task("loadConfig", async () => {
        const sources = configCandidates(cmdline);
        const found = sources.inline
          ? { text: atob(sources.inline), path: "cmdline" }
          : await readFirstConfig(sources.paths);
        if (!found) {
          await recordMissingConfig(machined.store, sources.paths);
          logger.warn("boot", "no config found: maintenance", { tried: sources.paths.join(",") });
          return;
        }
        const loaded = await keeper.apply(found.text, found.path);
        if (loaded.state === "valid") config = loaded.config;
        else if (loaded.state === "invalid") {
          logger.warn("boot", "invalid config: maintenance", {
            errors: loaded.errors.map((e) => e.format()).join("; "),
          });
        }
      })],
    },
  ], { events, logger });

  const hostname = config?.machine.hostname ?? "machined";
  // apid (another user) must be able to traverse /run/machined to its own files.
  await Deno.mkdir(RUN_PATHS.root, { recursive: true, mode: 0o755 });
  await Deno.chmod(RUN_PATHS.root, 0o755);
  const pki = await nodePki(hostname, config, logger);
  await prepareApidPki(pki, RUN_PATHS.apidPki);

  let shutdownRequest!: (action: PowerAction) => void;
  const requested = new Promise<PowerAction>((r) => (shutdownRequest = r));
  const listen = config?.machine.api?.listen ?? "0.0.0.0:50000";
  const api = await startApiHost({
    machined,
    pki,
    pkiDir: RUN_PATHS.apidPki,
    runDir: RUN_PATHS.root,
    listen,
    api: config?.machine.api,
    processBackend: backends.process,
    endpoints: () => [listen.replace(/^0\.0\.0\.0:/, "127.0.0.1:")],
    dropUser: Deno.uid() === 0,
    services: domains.supervisor,
    kernelLog: new NativeKmsgBackend(),
    configs: configApplier(keeper),
    apidEntry: bundledApidEntry(),
    actions: nodeActions({
      hostname: () => hostname,
      logger,
      onPower: (what) => shutdownRequest(what),
    }),
  });
  // The controllers start once apid is spawned: they would otherwise hold the
  // one JS thread while the server certificate is made (2-3 s under TCG), and
  // apid's own start (a separate process) then overlaps their first reconciles.
  machined.start();
  // machined, not apid, holds the CA key: it renews the server certificate and
  // restarts apid with the new pair.
  const renewer = createServerCertRenewer({
    ca: pki.ca,
    current: pki.server,
    hostnames: [hostname, "localhost"],
    addresses: ["127.0.0.1", "::1"],
    dir: RUN_PATHS.pki,
    onRenewed: async (server) => {
      await prepareApidPki({ ...pki, server }, RUN_PATHS.apidPki);
      await api.supervisor.stop();
      api.supervisor.start();
      events.emit(
        "api",
        "apid",
        "certificateRenewed",
        "server certificate renewed; apid restarted",
      );
    },
    onError: (e) => logger.error("pki", "server certificate renewal failed", { error: e }),
  });
  // Ctrl-Alt-Del arrives as SIGINT once routed to a signal.
  Deno.addSignalListener("SIGINT", () => shutdownRequest("reboot"));
  Deno.addSignalListener("SIGTERM", () => shutdownRequest("poweroff"));

  machined.stage.set(config ? "running" : "maintenance");
  api.ready().then(async ({ port, pid }) => {
    const ms = (performance.now() - started).toFixed(0);
    const uptime = await uptimeSeconds();
    logger.info("boot", `API ready on port ${port}`, { msSinceMachinedStart: ms, uptime });
    // One machine-readable line on the console for boot measurements (e2e reads it).
    console.log(
      `machined: API ready pid=${Deno.pid} port=${port} machined_ms=${ms} uptime_s=${uptime}`,
    );
    setTimeout(async () => {
      console.log(
        `machined: rss machined_kib=${await rssKiB()} apid_kib=${await rssKiB(pid)}`,
      );
    }, 5_000);
  });

  const action = await requested;
  await shutdownNode(action, {
    machined,
    power: backends.power,
    mount: backends.mount,
    stopServices: () => domains.stopServices(),
    stopApi: () => {
      renewer.stop();
      return api.stop();
    },
    afterControllers: () => {
      stopFollowingVolumes();
      return domains.shutdown();
    },
    keepMounted: EARLY_MOUNTS.map((m) => m.target),
  });
  return action;
}

/**
 * Loads the modules the image lists (absolute paths, dependencies first, as the
 * imager resolved them). Already loaded or built-in modules are fine.
 */
async function loadImageModules(backends: NodeBackends, logger: Logger): Promise<void> {
  if (!(await pathExists(IMAGE_PATHS.modules))) return;
  const paths = (await Deno.readTextFile(IMAGE_PATHS.modules)).split("\n").map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
  let loaded = 0;
  for (const path of paths) {
    try {
      if (await backends.kmod.loadModule(path) === "loaded") loaded++;
    } catch (e) {
      logger.warn("boot", `module ${path} failed to load`, { error: e });
    }
  }
  logger.info("boot", "image modules loaded", { listed: paths.length, loaded });
}

/** The CA comes from the config, else the image; the server certificate is made at boot. */
async function nodePki(
  hostname: string,
  config: MachineConfig | undefined,
  logger: Logger,
): Promise<NodePki> {
  let ca = config?.machine.ca
    ? { certPem: config.machine.ca.crt, keyPem: config.machine.ca.key }
    : undefined;
  if (!ca && await pathExists(join(IMAGE_PATHS.pki, "ca.key"))) {
    ca = {
      certPem: await Deno.readTextFile(join(IMAGE_PATHS.pki, "ca.crt")),
      keyPem: await Deno.readTextFile(join(IMAGE_PATHS.pki, "ca.key")),
    };
  }
  if (!ca) logger.warn("boot", "no CA in the config or the image: creating one for this boot");
  return await loadOrCreateNodePki(RUN_PATHS.pki, {
    hostnames: [hostname, "localhost"],
    addresses: ["127.0.0.1", "::1"],
    ca,
  });
}

/**
 * In the image, apid is its own smaller bundle beside main.js (apid.js), run
 * with its own pre-warmed DENO_DIR that it owns; an image without it runs the
 * bundled program's `apid` command.
 */
function bundledApidEntry() {
  const main = new URL(import.meta.url);
  if (main.protocol !== "file:" || !main.pathname.endsWith(".js")) return undefined;
  const apid = new URL("./apid.js", main).pathname;
  try {
    Deno.statSync(apid);
  } catch {
    return { entry: main.pathname, config: null, subcommand: ["apid"] };
  }
  return { entry: apid, config: null, subcommand: [], denoDir: apidDenoDir() };
}

function apidDenoDir(): string | undefined {
  try {
    return Deno.statSync(IMAGE_PATHS.apidDenoDir).isDirectory ? IMAGE_PATHS.apidDenoDir : undefined;
  } catch {
    return undefined;
  }
}
