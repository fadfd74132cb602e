/**
 * Test fixtures for the API: a throwaway PKI (CA, server, one client per role,
 * plus the bad certificates the mTLS matrix needs), a store with a few
 * resources, recording node actions, machined's internal server on a temp
 * socket, and apid (machined-edge, a child process) on a random loopback
 * port. Not for production.
 */
import { EventBus } from "../events/mod.ts";
import { join } from "node:path";
import {
  type CertificateAuthority,
  createCertificateAuthority,
  DAY_MS,
  generateKeyPair,
  issueClientCertificate,
  issueLeafCertificate,
  issueServerCertificate,
  type KeyedCertificate,
  privateKeyToPem,
  type Role,
  x509,
} from "../pki/mod.ts";
import { Store } from "../runtime/mod.ts";
import {
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  type MachineStore,
  type ResourceSpecs,
} from "../resources/mod.ts";
import { parseMachineConfig } from "../config/mod.ts";
import { createMachineClient, type MachineClient } from "./client/mod.ts";
import {
  type ActionRequester,
  type ConfigApplier,
  createClientConfigIssuer,
  type InternalApiServer,
  type NodeActions,
  type RebootMode,
  type ResetAnswer,
  type ResetRequestData,
  type RollbackAnswer,
  startInternalApiServer,
  type UnlockVolumeAnswer,
  type UpgradeAnswer,
  type VersionInfo,
} from "./server/mod.ts";
import { type EdgeServer, startEdgeServer, withTimeout } from "./edge/testing.ts";

export { withTimeout };
import { FakeKmsgBackend } from "../platform/kmsg/mod.ts";
import type { FakeProcBackend } from "../platform/procfs/mod.ts";
import { Observer } from "../observe/mod.ts";
import { fakeFsUsage, SAMPLE_PIDS, seededCgroups, seededProc } from "../observe/testing.ts";
import type { FileBounds, TimeQuerier, TokenBucket } from "./server/mod.ts";
import { createCriClient } from "../cri/mod.ts";
import { type FakeCriServer, SAMPLE_LISTING, startFakeCriServer } from "../cri/testing.ts";
import { MetricsRegistry } from "../metrics/mod.ts";
import { seedFileRoot } from "./server/files/testing.ts";
import { createLogger, type Logger, type LogRing } from "../logs/mod.ts";
import {
  FakeLogSource,
  FakeServiceControl,
  fakeServiceSpec,
  RecordingConfigApplier,
} from "./testing_node.ts";

export {
  FakeLogSource,
  FakeServiceControl,
  fakeServiceSpec,
  RecordingConfigApplier,
} from "./testing_node.ts";

/** Every credential a test may present. */
export interface TestPki {
  readonly dir: string;
  readonly ca: CertificateAuthority;
  readonly server: KeyedCertificate;
  readonly clients: Readonly<Record<Role, KeyedCertificate>>;
  /** Signed by an unrelated CA. */
  readonly otherCa: KeyedCertificate;
  /** Expired yesterday. */
  readonly expired: KeyedCertificate;
  /** serverAuth usage only. */
  readonly serverOnly: KeyedCertificate;
  /** No extended key usage at all (rustls accepts it; verifyClientCertificate must not). */
  readonly noEku: KeyedCertificate;
  /** clientAuth and an admin role, but a KeyUsage of keyEncipherment only (no digitalSignature). */
  readonly noDigitalSignature: KeyedCertificate;
}

/** A clientAuth admin certificate whose KeyUsage lacks digitalSignature (issueLeafCertificate always sets it). */
async function issueWithoutDigitalSignature(ca: CertificateAuthority): Promise<KeyedCertificate> {
  const keys = await generateKeyPair();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: "0badc0de01",
    subject: [{ O: ["os:admin"] }, { CN: ["no-digital-signature"] }],
    issuer: ca.cert.subjectName,
    notBefore: new Date(Date.now() - 5 * 60_000),
    notAfter: new Date(Date.now() + DAY_MS),
    publicKey: keys.publicKey,
    signingKey: ca.key,
    signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth], false),
    ],
  });
  return {
    cert,
    certPem: cert.toString("pem"),
    key: keys.privateKey,
    keyPem: await privateKeyToPem(keys.privateKey),
  };
}

/** Writes the PKI into a fresh temp dir (ca.crt, ca.key, server.crt, server.key). */
export async function createTestPki(): Promise<TestPki> {
  const dir = await Deno.makeTempDir({ prefix: "machined-api-" });
  const ca = await createCertificateAuthority({});
  const server = await issueServerCertificate({
    ca,
    hostnames: ["localhost"],
    addresses: ["127.0.0.1"],
  });
  const role = (r: Role) => issueClientCertificate({ ca, name: r.slice(3), role: r });
  const clients = {
    "os:admin": await role("os:admin"),
    "os:operator": await role("os:operator"),
    "os:reader": await role("os:reader"),
  };
  const foreign = await createCertificateAuthority({});
  const otherCa = await issueClientCertificate({ ca: foreign, name: "mallory", role: "os:admin" });
  const expired = await issueClientCertificate({
    ca,
    name: "old",
    role: "os:admin",
    now: new Date(Date.now() - 30 * DAY_MS),
    lifetimeMs: DAY_MS,
  });
  const serverOnly = await issueLeafCertificate({
    ca,
    subject: [{ O: ["os:admin"] }, { CN: ["server-only"] }],
    extendedKeyUsages: [x509.ExtendedKeyUsage.serverAuth],
  });
  const noEku = await issueLeafCertificate({
    ca,
    subject: [{ O: ["os:admin"] }, { CN: ["no-eku"] }],
    extendedKeyUsages: [],
  });
  const noDigitalSignature = await issueWithoutDigitalSignature(ca);
  await Deno.writeTextFile(join(dir, "ca.crt"), ca.certPem);
  await Deno.writeTextFile(join(dir, "ca.key"), ca.keyPem, { mode: 0o600 });
  await Deno.writeTextFile(join(dir, "server.crt"), server.certPem);
  await Deno.writeTextFile(join(dir, "server.key"), server.keyPem, { mode: 0o600 });
  const bad = { otherCa, expired, serverOnly, noEku, noDigitalSignature };
  for (const [name, c] of Object.entries({ ...clients, ...bad })) {
    const base = name.replace(":", "-");
    await Deno.writeTextFile(join(dir, `${base}.crt`), c.certPem);
    await Deno.writeTextFile(join(dir, `${base}.key`), c.keyPem);
  }
  return { dir, ca, server, clients, ...bad };
}

/** Node actions that record what was asked. */
export class RecordingActions implements NodeActions {
  readonly calls: {
    action: "reboot" | "shutdown" | "reset" | "upgrade" | "rollback" | "unlockVolume";
    by: ActionRequester;
  }[] = [];
  /** The mode of each Reboot (`default` when not given). */
  readonly rebootModes: RebootMode[] = [];
  /** The reboot mode of each Upgrade (`default` when not given). */
  readonly upgradeRebootModes: RebootMode[] = [];
  /** The bytes of each Upgrade stream received. */
  readonly upgrades: { bytes: number; stage: boolean }[] = [];
  /** What `reset` answers (a preview by default). */
  resetAnswer: ResetAnswer = {
    partitions: [],
    challenge: "test-challenge",
    expires: 0,
    bootId: "test-boot",
    accepted: false,
    progress: "",
  };
  version(): VersionInfo {
    return {
      version: "0.1.0-test",
      commit: "test",
      denoVersion: Deno.version.deno,
      os: Deno.build.os,
      arch: Deno.build.arch,
      hostname: "test-node",
    };
  }
  reboot(by: ActionRequester, mode: RebootMode = "default"): Promise<void> {
    this.calls.push({ action: "reboot", by });
    this.rebootModes.push(mode);
    return Promise.resolve();
  }
  shutdown(by: ActionRequester): Promise<void> {
    this.calls.push({ action: "shutdown", by });
    return Promise.resolve();
  }
  reset(_request: ResetRequestData, by: ActionRequester): Promise<ResetAnswer> {
    this.calls.push({ action: "reset", by });
    return Promise.resolve(this.resetAnswer);
  }
  async upgrade(
    bundle: AsyncIterable<Uint8Array>,
    options: { stage: boolean; fromUrl?: string; force?: boolean; rebootMode?: RebootMode },
    by: ActionRequester,
  ): Promise<UpgradeAnswer> {
    this.calls.push({ action: "upgrade", by });
    this.upgradeRebootModes.push(options.rebootMode ?? "default");
    let bytes = 0;
    for await (const c of bundle) bytes += c.length;
    this.upgrades.push({ bytes, stage: options.stage });
    return {
      version: "2.0.0",
      slot: "B",
      entry: "machined-b+3.conf",
      bytes,
      rebooting: !options.stage,
      bootId: "test-boot",
      keyId: "ed25519:test",
    };
  }
  rollback(options: { stage: boolean }, by: ActionRequester): Promise<RollbackAnswer> {
    this.calls.push({ action: "rollback", by });
    return Promise.resolve({ slot: "A", rebooting: !options.stage, bootId: "test-boot" });
  }
  /** Opens `volume` in slot 1 (the tests' volume is always locked). */
  unlockVolume(
    request: { volume: string; passphrase: Uint8Array },
    by: ActionRequester,
  ): Promise<UnlockVolumeAnswer> {
    this.calls.push({ action: "unlockVolume", by });
    return Promise.resolve({
      volume: request.volume,
      slot: 1,
      mappingPath: `/dev/mapper/${request.volume}`,
    });
  }
}

/** A store holding one MachineStatus and two ControllerStatus resources. */
export function seededStore(): MachineStore {
  const store = new Store<ResourceSpecs>();
  store.create({
    type: "MachineStatus",
    namespace: "runtime",
    id: "machine",
    owner: "test",
    labels: { tier: "core" },
    spec: { stage: "running", ready: true, unmetConditions: [], pid1: false, mode: "dev" },
  });
  for (const id of ["network.AddressSpecController", "time.SyncController"]) {
    store.create({
      type: "ControllerStatus",
      namespace: "runtime",
      id,
      owner: "test",
      labels: { domain: id.split(".")[0] },
      spec: {
        state: "idle",
        reconciles: 3,
        failures: 0,
        consecutiveFailures: 0,
        lastError: "",
        lastReconcile: "",
        lastDurationMs: 1.5,
        inputs: [],
        outputs: [],
      },
    });
  }
  return store;
}

/** Everything a test needs, torn down by {@link ApiFixture.close}. */
export interface ApiFixture {
  readonly pki: TestPki;
  readonly store: MachineStore;
  readonly actions: RecordingActions;
  readonly events: EventBus;
  /** Behind the service RPCs: containerd and payload, running. */
  readonly services: FakeServiceControl;
  /** Behind Logs: `machined` (the logger's ring); services have none until a test pushes lines. */
  readonly logs: FakeLogSource;
  /** Behind Dmesg: empty until a test logs records. */
  readonly kernelLog: FakeKmsgBackend;
  /** Behind ApplyConfiguration. */
  readonly configs: RecordingConfigApplier;
  /** Behind the observability RPCs (Memory, Stats...): observe/testing.ts's sample node. */
  readonly proc: FakeProcBackend;
  /** Behind Containers and Images: a fake CRI listing SAMPLE_LISTING (RuntimeStatus names it). */
  readonly cri: FakeCriServer;
  /** Behind Metrics; API calls are counted into it. */
  readonly registry: MetricsRegistry;
  /** machined's logger (silent): its ring is what `machinectl logs machined` serves. */
  readonly logger: Logger & { ring: LogRing };
  readonly internal: InternalApiServer;
  /** machined-edge in front, as on a node. */
  readonly apid: EdgeServer;
  readonly socketPath: string;
  /** The node's `/` behind FileList and FileRead, seeded by files/testing.ts. */
  readonly fileRoot: string;
  /** `127.0.0.1:<port>`. */
  readonly endpoint: string;
  /** A client presenting `cert` (default: the admin's). Closed by close(). */
  client(cert?: KeyedCertificate): MachineClient;
  close(): Promise<void>;
}

/** Puts a running MachineConfig whose `machine.time.servers` are `servers` in `store`. */
export function seedTimeServers(store: MachineStore, servers: readonly string[]): void {
  const yaml = `version: v1alpha1\nmachine:\n  hostname: n\n  time:\n    servers: ${
    JSON.stringify(servers)
  }\n`;
  const r = parseMachineConfig(yaml, "test");
  if (!r.ok) throw new Error(r.errors.map((e) => e.format()).join("\n"));
  store.create({
    type: MACHINE_CONFIG,
    namespace: "config",
    id: MACHINE_CONFIG_ID,
    owner: "test",
    spec: { source: "test", config: r.config },
  });
}

/** Options of {@link startApiFixture}. */
export interface ApiFixtureOptions {
  readMaxBytes?: number;
  writeMaxBytes?: number;
  maxConcurrentStreams?: number;
  /** Behind Time's on-demand query; none: a Time request naming a server is Unimplemented. */
  timeQuerier?: TimeQuerier;
  /** Time's per-node budget of queries naming a server (default: the real one). */
  timeBudget?: TokenBucket;
  /** Wire services, logs, kernel log and config applier (false: those RPCs are Unimplemented). @default true */
  nodeServices?: boolean;
  /** Serve this store instead of a seeded one (e.g. a Machined's). */
  store?: MachineStore;
  /** Serve ApplyConfiguration with this applier (`configs` is then unused). */
  configApplier?: ConfigApplier;
  /** FileList/FileRead bounds (default: the real ones). */
  fileBounds?: FileBounds;
}

/** Starts machined's internal server and machined-edge over a fresh PKI. */
export async function startApiFixture(options: ApiFixtureOptions = {}): Promise<ApiFixture> {
  const pki = await createTestPki();
  const store = options.store ?? seededStore();
  const actions = new RecordingActions();
  const events = new EventBus();
  const services = new FakeServiceControl()
    .add("containerd", fakeServiceSpec(["/bin/containerd"]))
    .add("payload", fakeServiceSpec(["/bin/payload"], ["containerd"]), { restarts: 2 });
  const logs = new FakeLogSource();
  const kernelLog = new FakeKmsgBackend();
  const configs = new RecordingConfigApplier();
  const proc = seededProc();
  const observer = new Observer({
    proc,
    services: () => services.list().map((s) => ({ id: s.id, pid: s.status.pid })),
    components: () => ({ machined: SAMPLE_PIDS.machined, apid: SAMPLE_PIDS.apid }),
    cgroups: seededCgroups(),
    fsUsage: fakeFsUsage,
  });
  const logger = createLogger({ console: false });
  logs.serve("machined", logger.ring);
  const socketPath = join(pki.dir, "run", "api.sock");
  const fileRoot = join(pki.dir, "node-root");
  await seedFileRoot(fileRoot);
  const cri = await startFakeCriServer(join(pki.dir, "cri.sock"));
  Object.assign(cri, structuredClone(SAMPLE_LISTING));
  store.create({
    type: "RuntimeStatus",
    namespace: "runtime",
    id: "containerd",
    owner: "test",
    spec: {
      ready: true,
      networkReady: true,
      runtimeName: "fake",
      runtimeVersion: "0.0.1",
      runtimeApiVersion: "v1",
      socket: cri.socket,
      lastError: "",
      lastProbe: 0,
      lastAnswer: 0,
    },
  });
  const registry = new MetricsRegistry();
  const internal = await startInternalApiServer({
    socketPath,
    registry,
    // Behind machined-edge, machined is what bounds messages.
    readMaxBytes: options.readMaxBytes,
    writeMaxBytes: options.writeMaxBytes,
    deps: {
      cri: (socket) => createCriClient(socket),
      metrics: registry,
      graph: () => ({
        controllers: [{
          name: "test.A",
          inputs: [{ type: "MachineConfig", kind: "weak" }],
          outputs: [{ type: "MachineStatus", kind: "exclusive" }],
        }],
        edges: [],
      }),
      store,
      actions,
      events,
      clientConfigs: createClientConfigIssuer(pki.ca, () => ["127.0.0.1"]),
      audit: logger,
      timeQuerier: options.timeQuerier,
      timeBudget: options.timeBudget,
      secrets: () => services.list().flatMap((s) => Object.values(s.spec.env)),
      files: { root: fileRoot, bounds: options.fileBounds },
      ...(options.nodeServices === false
        ? {}
        : { services, logs, kernelLog, configs: options.configApplier ?? configs, observer }),
    },
  });
  const apid = await startEdgeServer({
    ca: pki.ca,
    server: pki.server,
    socketPath,
    pkiDir: join(pki.dir, "edge-pki"),
    maxConcurrentStreams: options.maxConcurrentStreams,
    readMaxBytes: options.readMaxBytes,
    writeMaxBytes: options.writeMaxBytes,
  });
  const endpoint = `127.0.0.1:${apid.port}`;
  const clients: MachineClient[] = [];
  return {
    pki,
    store,
    actions,
    events,
    services,
    logs,
    kernelLog,
    configs,
    proc,
    cri,
    registry,
    logger,
    internal,
    apid,
    socketPath,
    fileRoot,
    endpoint,
    client(cert = pki.clients["os:admin"]) {
      const c = createMachineClient({
        endpoint,
        caPem: pki.ca.certPem,
        certPem: cert.certPem,
        keyPem: cert.keyPem,
      });
      clients.push(c);
      return c;
    },
    async close() {
      for (const c of clients) c.close();
      await apid.close();
      await internal.close();
      await cri.close();
      await Deno.remove(pki.dir, { recursive: true });
    },
  };
}

/** The Connect code of a failed call, or "ok". */
export async function outcome(call: () => Promise<unknown>): Promise<string> {
  try {
    await call();
    return "ok";
  } catch (e) {
    const { ConnectError, Code } = await import("@connectrpc/connect");
    return e instanceof ConnectError
      ? Code[e.code] + (Deno.env.get("API_DEBUG") ? " " + e.message : "")
      : `thrown: ${e}`;
  }
}
