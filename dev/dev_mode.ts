/**
 * Dev mode: machined unprivileged on a laptop. It generates a config and PKI in
 * the state dir on first run (and reuses them after), runs the controllers with
 * backends that observe the host read-only and fake every change, serves the
 * API through apid, writes an admin client config, and prints how to use it.
 * Editing STATE/config.yaml applies the new config without a restart.
 */
import { join } from "node:path";
import { defaultDevConfig } from "../config/mod.ts";
import {
  generateClientConfig,
  loadOrCreateNodePki,
  pathExists,
  writeClientConfig,
} from "../pki/mod.ts";
import { createNodeDomains, devBackends, nodeActions, startMallocTrim } from "../node/mod.ts";
import { FakeSysctlBackend } from "../controllers/kernel/mod.ts";
import { prepareApidPki, startApiHost } from "../api/host/mod.ts";
import { configApplier, ConfigKeeper } from "../config/keeper/mod.ts";
import { Machined } from "../core/mod.ts";
import { reloadConfigFile, watchConfigFile } from "./config_watch.ts";

/** What `main.ts dev` takes. */
export interface DevOptions {
  stateDir: string;
  /** `host:port` for the API. @default "127.0.0.1:50000" */
  listen: string;
  /** Node name for a first-run config. @default "machined-dev" */
  hostname: string;
}

/** Runs until SIGINT/SIGTERM or a Shutdown RPC; returns the exit code. */
export async function runDevMode(o: DevOptions): Promise<number> {
  const stateDir = await Deno.realPath(await ensureDir(o.stateDir));
  const configPath = join(stateDir, "config.yaml");
  if (!(await pathExists(configPath))) {
    await Deno.writeTextFile(configPath, defaultDevConfig(o.hostname), { mode: 0o600 });
  }
  const node = await startDevNode(stateDir, configPath, o.hostname);
  const { machined, keeper } = node;
  const pki = await prepareDevPki(stateDir, node.hostname, node.load, o.listen);

  let done!: (code: number) => void;
  const finished = new Promise<number>((r) => (done = r));
  const stopping = (code: number, stage: "rebooting" | "shuttingDown") => {
    machined.stage.set(stage);
    done(code);
  };
  const api = await startDevApi(node, pki, stateDir, o.listen, stopping);
  const stopMallocTrim = startMallocTrim({ malloc: node.malloc, logger: machined.logger });
  const stopWatch = watchConfigFile(
    configPath,
    async () => void await reloadConfigFile(keeper, configPath),
    200,
    (e) => machined.logger.error("config", `reloading ${configPath} failed`, { error: String(e) }),
  );
  const { port } = await api.ready();
  printBanner(o.listen.replace(/:\d+$/, `:${port}`), stateDir, pki.clientConfigPath);

  const code = await untilSignal(finished, () => done(0));
  machined.logger.info("dev", "stopping");
  stopWatch();
  stopMallocTrim();
  await node.domains.stopServices();
  await api.stop();
  await machined.stop();
  await node.domains.shutdown();
  await node.processBackend.close();
  return code;
}

/** machined with dev backends and its controllers running, the config in `configPath` applied. */
async function startDevNode(stateDir: string, configPath: string, fallbackHostname: string) {
  const backends = devBackends();
  const processBackend = backends.process;
  // In dev mode machined stands in for PID 1 for its own children.
  await processBackend.setChildSubreaper(true);
  const machined = new Machined({ mode: "dev", pid1: false });
  // The keeper is made after the domains; WireGuard and encryption read its keys once it exists.
  const late: { keeper?: ConfigKeeper } = {};
  const domains = createNodeDomains(machined, backends, {
    autoDhcp: false,
    fullConfig: () => late.keeper?.config,
    sysctls: new FakeSysctlBackend(),
    paths: {
      resolvConf: join(stateDir, "resolv.conf"),
      trustedRoots: join(stateDir, "trust", "ca-certificates.crt"),
      containerd: {
        root: join(stateDir, "containerd", "root"),
        state: join(stateDir, "containerd", "state"),
        configPath: join(stateDir, "containerd", "config.toml"),
      },
    },
  });
  machined.register(domains.controllers);
  machined.start();
  const keeper = new ConfigKeeper(machined);
  late.keeper = keeper;
  const load = await keeper.apply(await Deno.readTextFile(configPath), configPath);
  machined.stage.set(load.state === "valid" ? "running" : "maintenance");
  if (load.state === "invalid") {
    machined.logger.warn("config", "invalid config: staying in maintenance", {
      errors: load.errors.map((e) => e.format()).join("; "),
    });
  }
  const hostname = load.state === "valid" ? load.config.machine.hostname : fallbackHostname;
  return { machined, domains, keeper, load, hostname, processBackend, malloc: backends.malloc };
}

type DevNode = Awaited<ReturnType<typeof startDevNode>>;

/** The node PKI (created on first run), apid's copy without the CA key, and an admin client config. */
async function prepareDevPki(
  stateDir: string,
  hostname: string,
  load: DevNode["load"],
  listen: string,
) {
  const pki = await loadOrCreateNodePki(join(stateDir, "pki"), {
    hostnames: [hostname, "localhost"],
    addresses: ["127.0.0.1", "::1"],
    ca: load.state === "valid" && load.config.machine.ca
      ? { certPem: load.config.machine.ca.crt, keyPem: load.config.machine.ca.key }
      : undefined,
  });
  // apid gets the CA certificate and its server pair only, never the CA key.
  const apidPkiDir = join(stateDir, "run", "apid-pki");
  await prepareApidPki(pki, apidPkiDir);
  const clientConfigPath = join(stateDir, "machinectl.yaml");
  if (!(await pathExists(clientConfigPath))) {
    await writeClientConfig(
      clientConfigPath,
      await generateClientConfig({
        secrets: { ca: pki.ca },
        role: "os:admin",
        name: "admin",
        context: hostname,
        endpoints: [listen],
      }),
    );
  }
  return { pki, apidPkiDir, clientConfigPath };
}

async function startDevApi(
  node: DevNode,
  pki: Awaited<ReturnType<typeof prepareDevPki>>,
  stateDir: string,
  listen: string,
  stopping: (code: number, stage: "rebooting" | "shuttingDown") => void,
) {
  const { machined, load } = node;
  return startApiHost({
    fileRoot: await devFileRoot(stateDir),
    machined,
    pki: pki.pki,
    pkiDir: pki.apidPkiDir,
    runDir: join(stateDir, "run"),
    listen,
    api: load.state === "valid" ? load.config.machine.api : undefined,
    processBackend: node.processBackend,
    malloc: node.malloc,
    endpoints: () => [listen],
    dropUser: false,
    services: node.domains.supervisor,
    configs: configApplier(node.keeper),
    actions: nodeActions({
      hostname: () => node.hostname,
      logger: machined.logger,
      // Dev mode never reboots the host: both requests stop machined.
      onPower: (what) => stopping(0, what === "reboot" ? "rebooting" : "shuttingDown"),
      unlockVolume: node.domains.unlockVolume,
    }),
  });
}

function printBanner(address: string, stateDir: string, clientConfigPath: string): void {
  console.log(
    [
      "",
      `machined (dev mode) is up: API on ${address}, state in ${stateDir}`,
      `try:  deno task machinectl --config ${clientConfigPath} get machinestatus`,
      `      deno task machinectl --config ${clientConfigPath} get controllers`,
      "stop with Ctrl-C",
      "",
    ].join("\n"),
  );
}

/** `finished`'s code; SIGINT and SIGTERM call `onSignal` meanwhile. */
async function untilSignal(finished: Promise<number>, onSignal: () => void): Promise<number> {
  Deno.addSignalListener("SIGINT", onSignal);
  Deno.addSignalListener("SIGTERM", onSignal);
  try {
    return await finished;
  } finally {
    Deno.removeSignalListener("SIGINT", onSignal);
    Deno.removeSignalListener("SIGTERM", onSignal);
  }
}

async function ensureDir(path: string): Promise<string> {
  await Deno.mkdir(path, { recursive: true, mode: 0o700 });
  return path;
}

/**
 * The `/` dev mode's FileList and FileRead see: never the host's. A directory
 * of the state with an empty `/var/log` and `/system/state` leading to the
 * state directory itself (its config.yaml and pki, redacted as on a node).
 */
export async function devFileRoot(stateDir: string): Promise<string> {
  const root = join(stateDir, "node-root");
  await Deno.mkdir(join(root, "var", "log"), { recursive: true });
  await Deno.mkdir(join(root, "system"), { recursive: true });
  await Deno.symlink(stateDir, join(root, "system", "state")).catch((e) => {
    if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
  });
  return root;
}
