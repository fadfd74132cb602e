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
import { devBackends } from "../node/backends.ts";
import { createNodeDomains } from "../node/domains.ts";
import { FakeSysctlBackend } from "../controllers/kernel/mod.ts";
import { startApiHost } from "../api/host/mod.ts";
import { ConfigKeeper } from "../config/keeper/mod.ts";
import { configApplier } from "../config/keeper/mod.ts";
import { Machined } from "../node/machined.ts";
import { reloadConfigFile, watchConfigFile } from "./config_watch.ts";
import { prepareApidPki } from "../api/host/mod.ts";
import { nodeActions } from "../node/node_actions.ts";

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
  const backends = devBackends();
  const processBackend = backends.process;
  // In dev mode machined stands in for PID 1 for its own children.
  await processBackend.setChildSubreaper(true);

  let done!: (code: number) => void;
  const finished = new Promise<number>((r) => (done = r));
  const machined = new Machined({ mode: "dev", pid1: false });
  const domains = createNodeDomains(machined, backends, {
    autoDhcp: false,
    sysctls: new FakeSysctlBackend(),
    paths: {
      resolvConf: join(stateDir, "resolv.conf"),
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
  const load = await keeper.apply(await Deno.readTextFile(configPath), configPath);
  machined.stage.set(load.state === "valid" ? "running" : "maintenance");
  if (load.state === "invalid") {
    machined.logger.warn("config", "invalid config: staying in maintenance", {
      errors: load.errors.map((e) => e.format()).join("; "),
    });
  }
  const hostname = load.state === "valid" ? load.config.machine.hostname : o.hostname;
  const pkiDir = join(stateDir, "pki");
  const pki = await loadOrCreateNodePki(pkiDir, {
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
        endpoints: [o.listen],
      }),
    );
  }

  const stopping = (code: number, stage: "rebooting" | "shuttingDown") => {
    machined.stage.set(stage);
    done(code);
  };
  const api = await startApiHost({
    fileRoot: await devFileRoot(stateDir),
    machined,
    pki,
    pkiDir: apidPkiDir,
    runDir: join(stateDir, "run"),
    listen: o.listen,
    api: load.state === "valid" ? load.config.machine.api : undefined,
    processBackend,
    endpoints: () => [o.listen],
    dropUser: false,
    services: domains.supervisor,
    configs: configApplier(keeper),
    actions: nodeActions({
      hostname: () => hostname,
      logger: machined.logger,
      // Dev mode never reboots the host: both requests stop machined.
      onPower: (what) => stopping(0, what === "reboot" ? "rebooting" : "shuttingDown"),
    }),
  });
  const stopWatch = watchConfigFile(
    configPath,
    async () => void await reloadConfigFile(keeper, configPath),
    200,
    (e) => machined.logger.error("config", `reloading ${configPath} failed`, { error: String(e) }),
  );

  const { port } = await api.ready();
  console.log(
    [
      "",
      `machined (dev mode) is up: API on ${
        o.listen.replace(/:\d+$/, `:${port}`)
      }, state in ${stateDir}`,
      `try:  deno task machinectl --config ${clientConfigPath} get machinestatus`,
      `      deno task machinectl --config ${clientConfigPath} get controllers`,
      "stop with Ctrl-C",
      "",
    ].join("\n"),
  );

  const onSignal = () => done(0);
  Deno.addSignalListener("SIGINT", onSignal);
  Deno.addSignalListener("SIGTERM", onSignal);
  const code = await finished;
  Deno.removeSignalListener("SIGINT", onSignal);
  Deno.removeSignalListener("SIGTERM", onSignal);
  machined.logger.info("dev", "stopping");
  stopWatch();
  await domains.stopServices();
  await api.stop();
  await machined.stop();
  await domains.shutdown();
  await processBackend.close();
  return code;
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
