import { deepEqual, throws } from "node:assert/strict";
import { clone, create } from "@bufbuild/protobuf";
import { LabelOp, LabelTermSchema } from "../gen/machined/v1/machine_pb.ts";
import { ResourceSchema } from "../gen/machined/v1/resources_pb.ts";
import { Store } from "../../runtime/mod.ts";
import { machineConfigFromProto, machineConfigToProto } from "./core_mapping.ts";
import { type MachineResource, RESOURCE_TYPES, type ResourceSpecs } from "../../resources/mod.ts";
import { parseLabelSelector } from "../../runtime/mod.ts";
import {
  fromProtoResource,
  ResourceMappingError,
  selectorFromProto,
  selectorToProto,
  toProtoResource,
  watchEventFromProto,
  watchEventToProto,
} from "./mod.ts";

function sampleStore() {
  const store = new Store<ResourceSpecs>();
  store.create({
    type: "MachineConfig",
    namespace: "config",
    id: "v1alpha1",
    owner: "config",
    spec: {
      source: "/etc/machined.yaml",
      config: {
        version: "v1alpha1",
        machine: { hostname: "node-1" },
      } as unknown as ResourceSpecs["MachineConfig"]["config"],
    },
  });
  store.create({
    type: "ConfigStatus",
    namespace: "config",
    id: "machine",
    owner: "config",
    labels: { a: "b" },
    finalizers: ["x"],
    spec: {
      state: "invalid",
      source: "api",
      errors: [{ path: "machine.hostname", line: 3, column: 5, message: "bad", hint: "fix it" }, {
        path: "x",
        line: 1,
        column: 1,
        message: "no hint",
      }],
    },
  });
  store.create({
    type: "MachineStatus",
    namespace: "runtime",
    id: "machine",
    owner: "m",
    spec: {
      stage: "maintenance",
      ready: false,
      unmetConditions: [{ name: "config", reason: "missing" }],
      pid1: true,
      mode: "node",
    },
  });
  store.create({
    type: "ControllerStatus",
    namespace: "runtime",
    id: "c",
    owner: "m",
    spec: {
      state: "backoff",
      reconciles: 12,
      failures: 2,
      consecutiveFailures: 1,
      lastError: "boom",
      lastReconcile: "2026-01-01T00:00:00.000Z",
      lastDurationMs: 0.25,
      inputs: ["A"],
      outputs: ["B"],
    },
  });
  const net = (type: string, id: string, spec: unknown) =>
    store.create({
      type: type as "LinkSpec",
      namespace: "network",
      id,
      owner: "n",
      spec: spec as never,
    });
  net("LinkSpec", "eth0", { name: "eth0", up: true, mtu: 9000, dhcp: true, origin: "config" });
  net("LinkSpec", "lo", { name: "lo", up: true, dhcp: false, origin: "default" });
  net("LinkSpec", "eth1", { name: "eth1", up: true, dhcp: false, slaac: true, origin: "config" });
  net("RouteSpec", "r", {
    link: "eth0",
    family: "inet6",
    dst: "::",
    dstLen: 0,
    metric: 1024,
    origin: "dhcp",
  });
  net("DhcpLease", "eth0", {
    link: "eth0",
    state: "bound",
    address: "10.0.0.5",
    prefixLen: 24,
    routers: ["10.0.0.1"],
    dnsServers: [],
    leaseSeconds: 3600,
  });
  net("Dhcp6Lease", "eth0", {
    link: "eth0",
    state: "bound",
    address: "fd00::10",
    prefixLen: 128,
    server: "00:03:00:01:02:00:00:00:00:01",
    dnsServers: ["fd00::53"],
    domains: ["lan"],
    validSeconds: 3600,
  });
  net("AddressStatus", "a", {
    link: "eth0",
    linkIndex: 2,
    family: "inet",
    address: "10.0.0.5",
    prefixLen: 24,
    scope: "global",
    flags: 128,
  });
  net("ServiceSpec", "containerd", {
    command: ["/bin/containerd"],
    env: { A: "1" },
    cwd: "/",
    user: 0,
    group: "root",
    dependsOn: [],
    restart: "on-failure",
    stopGraceMs: 1000,
    onDependencyRestart: "hold",
    health: {
      probe: { kind: "cri", socket: "/run/c.sock" },
      intervalMs: 1,
      timeoutMs: 2,
      startPeriodMs: 3,
      successThreshold: 1,
      failureThreshold: 3,
      restartWhenUnhealthy: true,
    },
    limits: { memoryMax: 1 << 30, pidsMax: 100 },
    files: [{ path: "/etc/x", content: "y" }, { path: "/etc/z", content: "", mode: 0o600 }],
    dirs: ["/var/lib/x"],
    builtin: true,
    sandbox: { seccomp: "unconfined", capabilities: null, noNewPrivs: false },
  });
  net("ServiceSpec", "payload", {
    command: ["/bin/p"],
    env: {},
    cwd: "/",
    user: "nobody",
    group: 65534,
    dependsOn: ["containerd"],
    restart: "always",
    stopGraceMs: 1000,
    onDependencyRestart: "restart",
    limits: {},
    files: [],
    dirs: [],
    builtin: false,
    sandbox: { seccomp: "default", capabilities: ["CAP_NET_BIND_SERVICE"], noNewPrivs: true },
  });
  net("ServiceSpec", "confined", {
    command: ["/bin/c"],
    env: {},
    cwd: "/",
    user: "nobody",
    group: 65534,
    dependsOn: [],
    restart: "never",
    stopGraceMs: 1000,
    onDependencyRestart: "hold",
    limits: {},
    files: [],
    dirs: [],
    builtin: false,
    sandbox: {
      seccomp: "no-mkdir",
      capabilities: [],
      noNewPrivs: true,
      readOnlyPaths: ["/etc"],
      maskedPaths: ["/proc/kcore", "/var/lib/secrets"],
      profile: {
        defaultAction: "SCMP_ACT_ERRNO",
        defaultErrnoRet: 38,
        architectures: ["SCMP_ARCH_X86_64"],
        syscalls: [{
          names: ["mkdir", "mkdirat"],
          action: "SCMP_ACT_ERRNO",
          errnoRet: 1,
          args: [{ index: 1, value: 2 ** 40 + 7, valueTwo: 0, op: "SCMP_CMP_NE" }],
        }, { names: ["read"], action: "SCMP_ACT_ALLOW", args: [] }],
      },
    },
  });
  net("ServiceStatus", "confined", {
    state: "finished",
    healthy: false,
    restarts: 0,
    pid: null,
    lastExit: null,
    message: "",
    since: 1,
    logFileError: "",
    sandbox: {
      profile: "no-mkdir",
      seccomp: "filter",
      noNewPrivs: true,
      effective: [],
      bounding: [],
      ambient: [],
    },
  });
  net("ServiceStatus", "containerd", {
    state: "backing-off",
    healthy: false,
    restarts: 2,
    pid: null,
    lastExit: { code: null, signal: "SIGKILL", time: 5, killedAfterGrace: true },
    message: "m",
    since: 7,
    logFileError: "cannot write /var/log/containerd.log: No space left on device",
    sandbox: null,
  });
  net("ServiceStatus", "payload", {
    state: "running",
    healthy: true,
    restarts: 0,
    pid: 42,
    lastExit: null,
    message: "",
    since: 1,
    logFileError: "",
    sandbox: {
      profile: "default",
      seccomp: "filter",
      noNewPrivs: true,
      effective: [],
      bounding: ["CAP_NET_BIND_SERVICE"],
      ambient: [],
      readOnly: ["/etc"],
      masked: ["/srv/secrets"],
    },
  });
  net("RuntimeStatus", "containerd", {
    ready: true,
    networkReady: false,
    runtimeName: "containerd",
    runtimeVersion: "2",
    runtimeApiVersion: "v1",
    socket: "/run/c.sock",
    lastError: "",
    lastProbe: 1700000000000,
    lastAnswer: 1700000000000,
  });
  net("TimeStatus", "node", {
    disabled: false,
    synced: true,
    server: "pool.ntp.org",
    address: "1.2.3.4",
    offsetMs: -1.5,
    delayMs: 3,
    stratum: 2,
    correction: "slew",
    lastSync: 1700000000000,
    syncCount: 4,
    nextSync: null,
    lastError: "",
  });
  net("TimeStatus", "fresh", {
    disabled: false,
    synced: false,
    server: "",
    address: "",
    offsetMs: null,
    delayMs: null,
    stratum: null,
    correction: null,
    lastSync: null,
    syncCount: 0,
    nextSync: 5,
    lastError: "",
  });
  net("KernelParamStatus", "k", {
    key: "net.ipv4.ip_forward",
    desired: "1",
    current: null,
    default: "0",
    applied: false,
    error: "x",
  });
  net("KernelModuleStatus", "m", {
    name: "br_netfilter",
    state: "already-loaded",
    parameters: ["max_loop=8"],
    inForce: ["max_loop=8"],
    dependencies: ["bridge"],
    loadedDependencies: [],
    configured: true,
    error: "",
    message: "",
  });
  net("ResolverStatus", "r", { nameservers: ["1.1.1.1"], search: [], path: "/etc/resolv.conf" });
  net("AddressSpec", "eth0/10.0.0.5/24", {
    link: "eth0",
    family: "inet",
    address: "10.0.0.5",
    prefixLen: 24,
    origin: "static",
  });
  net("HostnameSpec", "hostname", { hostname: "node-1", domainname: "", origin: "dhcp" });
  net("ResolverSpec", "resolvers", { nameservers: ["9.9.9.9"], search: ["lan"] });
  net("LinkStatus", "eth0", {
    name: "eth0",
    index: 2,
    type: "ether",
    kind: "",
    mac: "52:54:00:12:34:56",
    mtu: 1500,
    up: true,
    operstate: "up",
    physical: true,
    master: "",
    ours: false,
  });
  net("LinkStatus", "bond1", {
    name: "bond1",
    index: 7,
    type: "ether",
    kind: "bond",
    mac: "52:54:00:6d:61:04",
    mtu: 1500,
    up: true,
    operstate: "up",
    physical: false,
    master: "",
    ours: true,
    bondMode: "802.3ad",
    lacp: { aggregator: 2, ports: 2, partnerMac: "52:54:00:70:00:01" },
  });
  net("RouteStatus", "default", {
    family: "inet",
    dst: "0.0.0.0",
    dstLen: 0,
    gateway: "10.0.0.1",
    link: "eth0",
    metric: 1024,
    table: 254,
    protocol: "dhcp",
    scope: "universe",
  });
  net("HostnameStatus", "hostname", {
    hostname: "node-1",
    domainname: "lan",
    fqdn: "node-1.lan",
  });
  const blk = (type: string, id: string, spec: unknown) =>
    store.create({
      type: type as "DiskStatus",
      namespace: "block",
      id,
      owner: "b",
      spec: spec as never,
    });
  blk("DiskStatus", "vda", {
    devicePath: "/dev/vda",
    dev: "253:0",
    size: 10 * 2 ** 40,
    logicalSectorSize: 512,
    physicalSectorSize: 4096,
    model: "QEMU",
    serial: "s1",
    wwid: "",
    rotational: false,
    readOnly: false,
    removable: true,
    kind: "virtual",
    backingFile: "",
    partitionTable: "gpt",
    diskGuid: "0FC63DAF-8483-4772-8E79-3D69D8477DE4",
    partitions: 4,
    layout: "machined",
    error: "",
  });
  blk("DiskStatus", "sr0", {
    devicePath: "/dev/sr0",
    dev: "11:0",
    size: 0,
    logicalSectorSize: 2048,
    physicalSectorSize: 2048,
    model: "",
    serial: "",
    wwid: "",
    rotational: true,
    readOnly: true,
    removable: true,
    kind: "cdrom",
    backingFile: "",
    partitionTable: "unknown",
    diskGuid: "",
    partitions: 0,
    layout: "unknown",
    error: "ENOMEDIUM",
  });
  blk("DiscoveredVolume", "vda3", {
    disk: "vda",
    devicePath: "/dev/vda3",
    partitionNumber: 3,
    offset: 2 ** 33 + 512,
    size: 2 ** 32,
    partitionType: "0FC63DAF-8483-4772-8E79-3D69D8477DE4",
    partitionUuid: "u3",
    partitionLabel: "STATE",
    role: "state",
    filesystem: "xfs",
    filesystemLabel: "STATE",
    filesystemUuid: "f3",
    inKernel: true,
  });
  blk("VolumeSpec", "EPHEMERAL", {
    volume: "EPHEMERAL",
    disk: "/dev/disk/by-id/virtio-x",
    wipe: true,
    system: true,
    partitionName: "EPHEMERAL",
    partitionType: "t",
    size: 0,
    filesystem: "ext4",
    mountPoint: "/var",
    mountFlags: ["nosuid", "nodev"],
  });
  const part = {
    number: 3,
    uuid: "u3",
    type: "t",
    name: "STATE",
    firstLba: 2048,
    lastLba: 2 ** 40,
  };
  blk("VolumeStatus", "STATE", {
    volume: "STATE",
    phase: "ready",
    disk: "/dev/vda",
    decision: "create",
    message: "created",
    partitionPath: "/dev/vda3",
    partitionUuid: "u3",
    filesystem: "xfs",
    filesystemUuid: "f3",
    created: part,
    diskGuid: "g",
    error: null,
    acted: { decision: "create", message: "blank disk", at: "2026-12-04T13:00:00.000Z" },
    encrypted: true,
    mappingPath: "/dev/mapper/STATE",
    unlockedBy: { slot: 1, kind: "static" },
    locked: false,
    lockedReason: "",
    keySlots: [{ slot: 0, kind: "nodeid", proven: false }, {
      slot: 1,
      kind: "static",
      proven: true,
    }],
    rotation: { phase: "proving", message: "proving slot 2" },
    keyNotes: ["slot 2 (tpm): The TPM refused to unseal the key (load): a cleared TPM"],
  });
  blk("VolumeStatus", "EPHEMERAL", {
    volume: "EPHEMERAL",
    phase: "locked",
    disk: "/dev/vda",
    decision: "leave",
    message: "",
    partitionPath: "",
    partitionUuid: "",
    filesystem: "",
    filesystemUuid: "",
    created: null,
    diskGuid: "",
    error: { message: "no key opens it", code: "locked", op: "unlock" },
    acted: null,
    encrypted: true,
    mappingPath: "",
    unlockedBy: null,
    locked: true,
    lockedReason: "EPHEMERAL is locked: no key opens it",
    keySlots: [{ slot: 3, kind: "", proven: false }],
    rotation: null,
    keyNotes: [],
  });
  blk("MountStatus", "STATE", {
    volume: "STATE",
    phase: "mounting",
    mounted: false,
    source: "/dev/vda3",
    target: "/system/state",
    filesystem: "xfs",
    flags: ["nosuid"],
    message: "",
    error: { message: "busy", code: "EBUSY", op: "mount" },
  });
  blk("ProvisioningRecord", "install", {
    version: 1,
    disk: "/dev/vda",
    diskGuid: "g",
    updatedAt: 1700000000123,
    partitions: [part, { ...part, number: 4, name: "EPHEMERAL" }],
    path: "/system/state/provisioned.json",
  });
  store.create({
    type: "UpgradeStatus",
    namespace: "runtime",
    id: "upgrade",
    owner: "upgrade",
    spec: {
      booted: "B",
      slots: [
        {
          slot: "A",
          booted: false,
          state: "blessed",
          version: "1.0.0",
          generation: 1,
          triesLeft: 0,
          entry: "machined-a.conf",
        },
        {
          slot: "B",
          booted: true,
          state: "trial",
          version: "2.0.0",
          generation: 2,
          triesLeft: 2,
          entry: "machined-b+2-1.conf",
        },
      ],
      floor: "1.0.0",
      floorSource: "state",
      storedFloor: "1.0.0",
      last: {
        outcome: "armed",
        version: "2.0.0",
        slot: "B",
        reason: "",
        at: "2026-12-02T03:00:00.000Z",
      },
    },
  });
  const db = {
    present: true,
    certificates: [{ subject: "CN=owner db", sha256: `SHA256:${"ab".repeat(32)}`, owner: "o" }],
    hashes: 1,
    other: 2,
    reason: "",
  };
  store.create({
    type: "SecureBootStatus",
    namespace: "runtime",
    id: "secureboot",
    owner: "firmware.SecureBootStatusController",
    spec: {
      efi: true,
      secureBoot: "on",
      setupMode: "off",
      reason: "",
      lockdown: "integrity",
      pk: db,
      kek: { ...db, certificates: [], present: false, reason: "too large" },
      db,
      tpm: true,
      pcrs: [{ index: 7, sha256: "cd".repeat(32) }],
    },
  });
  store.create({
    type: "TrustedRootsStatus",
    namespace: "runtime",
    id: "bundle",
    owner: "trust.TrustedRootsController",
    spec: {
      path: "/run/machined/trust/ca-certificates.crt",
      sha256: "ef".repeat(32),
      systemBundle: "/etc/ssl/certs/ca-certificates.crt",
      systemCertificates: 140,
      systemError: "",
      roots: [{
        name: "registry",
        subject: "CN=registry CA",
        fingerprint: `SHA256:${"01".repeat(32)}`,
        notAfter: "2036-01-01T00:00:00.000Z",
      }],
    },
  });
  store.create({
    type: "FirewallStatus",
    namespace: "network",
    id: "firewall",
    owner: "firewall.FirewallController",
    spec: {
      enabled: true,
      defaultAction: "block",
      rules: [{
        name: "web",
        protocol: "udp",
        ports: ["443", "8000-8100"],
        sources: ["10.0.0.0/8"],
        except: ["10.0.99.0/24"],
      }],
      adminSubnets: ["192.168.1.0/24", "fd00::/8"],
      apiPort: 50000,
      appliedHash: "ab".repeat(32),
      inForce: true,
      driftReapplies: 2,
      error: "",
    },
  });
  store.create({
    type: "KernelCmdlineStatus",
    namespace: "kernel",
    id: "cmdline",
    owner: "kernel.KernelCmdlineController",
    spec: {
      booted: "console=ttyS0 quiet machined.slot=A -- --v8",
      desiredAdd: ["nosmt"],
      desiredRemove: ["quiet"],
      next: "console=ttyS0 machined.slot=A nosmt -- --v8",
      pending: ["nosmt", "-quiet"],
      state: "pending-reboot",
      reason: "written into slot A's loader entry machined-a.conf: booted at the next reboot",
    },
  });
  store.create({
    type: "WireguardStatus",
    namespace: "network",
    id: "wg0",
    owner: "wireguard.WireguardController",
    spec: {
      name: "wg0",
      publicKey: "8XKzhF4LfHnSp7t13ZbBgqFqjmwUgpHLXU2QCwnBKiA=",
      listenPort: 51820,
      configured: true,
      peers: [
        {
          publicKey: "o3J57xUecL0vEvUGqoqsZ+PebZbccn1X0/Xs/ayZvWQ=",
          endpoint: "192.0.2.7:51820",
          allowedIps: ["10.8.0.2/32", "fd08::2/128"],
          lastHandshake: "2026-12-06T01:35:31.000Z",
          rxBytes: 7212,
          txBytes: 2 ** 40,
          persistentKeepalive: 25,
        },
        {
          publicKey: "NSKu4v6eIlwESax3RYYHbxaI98QxxYV4QC6utr5zW1c=",
          allowedIps: [],
          rxBytes: 0,
          txBytes: 0,
        },
      ],
      error: "",
      driftReapplies: 1,
    },
  });
  store.create({
    type: "ExtensionStatus",
    namespace: "runtime",
    id: "hello",
    owner: "extensions.ExtensionStatusController",
    spec: {
      name: "hello",
      version: "1.0",
      sha256: "ab".repeat(32),
      size: 3 * 2 ** 32,
      state: "refused",
      mountPoint: "/opt/extensions/hello",
      reason: "hash mismatch",
    },
  });
  return store;
}

function all(store: Store<ResourceSpecs>): MachineResource[] {
  return RESOURCE_TYPES.flatMap((type) => store.list(type) as MachineResource[]);
}

Deno.test("every resource type round-trips through its proto message", () => {
  const resources = all(sampleStore());
  // The sample covers the whole catalog, so a new type cannot go untested.
  deepEqual(RESOURCE_TYPES.filter((t) => !resources.some((r) => r.metadata.type === t)), []);
  for (const r of resources) {
    deepEqual(fromProtoResource(toProtoResource(r)), JSON.parse(JSON.stringify(r), revive));
  }
});

function revive(key: string, value: unknown) {
  // Metadata times are ISO strings after JSON; VolumeStatus's spec.created is not.
  return (key === "created" || key === "updated") && typeof value === "string"
    ? new Date(value)
    : value;
}

Deno.test("fromProtoResource rejects a spec that does not match metadata.type", () => {
  const store = sampleStore();
  // Converted messages are cached and shared: mutate a copy.
  const msg = clone(
    ResourceSchema,
    toProtoResource(store.get("MachineStatus", "runtime", "machine")),
  );
  msg.metadata!.type = "ControllerStatus";
  throws(() => fromProtoResource(msg), ResourceMappingError);
  throws(
    () => fromProtoResource(create(ResourceSchema, { metadata: msg.metadata })),
    ResourceMappingError,
  );
  throws(() => fromProtoResource(create(ResourceSchema, {})), ResourceMappingError);
});

Deno.test("label selectors round-trip, malformed terms are rejected", () => {
  const selector = parseLabelSelector("a=b,c!=d,e,!f,g in (x|y)");
  deepEqual(selectorFromProto(selectorToProto(selector)), selector);
  throws(
    () => selectorFromProto([create(LabelTermSchema, { key: "a", op: LabelOp.EQUAL })]),
    ResourceMappingError,
  );
  throws(
    () => selectorFromProto([create(LabelTermSchema, { key: "a" })]),
    ResourceMappingError,
  );
  throws(
    () => selectorFromProto([create(LabelTermSchema, { key: "", op: LabelOp.EXISTS })]),
    ResourceMappingError,
  );
});

Deno.test("watch events round-trip", async () => {
  const store = sampleStore();
  const watch = store.watch("MachineStatus");
  const seen = [];
  for (;;) {
    const e = (await watch.next()).value!;
    seen.push(e);
    if (e.kind === "bootstrapped") break;
  }
  await store.modify(
    { type: "MachineStatus", namespace: "runtime", id: "machine" },
    "m",
    (s) => ({ ...s!, ready: true }),
  );
  seen.push((await watch.next()).value!);
  watch.close();
  seen.push({ kind: "overflow" as const, dropped: 7 });
  for (const e of seen) {
    deepEqual(
      JSON.stringify(watchEventFromProto(watchEventToProto(e as never))),
      JSON.stringify(e),
    );
  }
});

Deno.test("block specs map enums, absent errors and byte counts beyond 2^32", () => {
  const store = sampleStore();
  const disk = toProtoResource(store.get("DiskStatus", "block", "vda"));
  deepEqual(disk.spec.case, "diskStatus");
  if (disk.spec.case === "diskStatus") deepEqual(disk.spec.value.size, 10n * 2n ** 40n);
  const vs = toProtoResource(store.get("VolumeStatus", "block", "EPHEMERAL"));
  if (vs.spec.case !== "volumeStatus") throw new Error(vs.spec.case);
  deepEqual(vs.spec.value.created, undefined);
  deepEqual(vs.spec.value.error?.code, "locked");
  deepEqual(vs.spec.value.unlockedBy, undefined);
  deepEqual(vs.spec.value.locked, true);
  deepEqual(vs.spec.value.rotation, undefined);
  deepEqual(vs.spec.value.keySlots.map((k) => [k.slot, k.kind, k.proven]), [[3, "", false]]);
  const st = clone(ResourceSchema, toProtoResource(store.get("VolumeStatus", "block", "STATE")));
  if (st.spec.case !== "volumeStatus") throw new Error(st.spec.case);
  st.spec.value.rotation!.phase = 0;
  throws(() => fromProtoResource(st), ResourceMappingError);
  const rec = clone(
    ResourceSchema,
    toProtoResource(store.get("ProvisioningRecord", "block", "install")),
  );
  if (rec.spec.case !== "provisioningRecord") throw new Error(rec.spec.case);
  rec.spec.value.version = 2;
  throws(() => fromProtoResource(rec), /Unknown provisioning record version 2/);
  const ms = clone(ResourceSchema, toProtoResource(store.get("MountStatus", "block", "STATE")));
  if (ms.spec.case !== "mountStatus") throw new Error(ms.spec.case);
  ms.spec.value.volume = 0;
  throws(() => fromProtoResource(ms), ResourceMappingError);
});

Deno.test("MachineConfig's pending try (with its deadline) and staged round-trip", () => {
  const config = {
    version: "v1alpha1",
    machine: { hostname: "n" },
  } as unknown as ResourceSpecs["MachineConfig"]["config"];
  for (
    const pending of [
      { mode: "try", changed: ["machine.hostname"], deadline: "2026-01-01T00:01:00.000Z" },
      { mode: "staged", changed: ["machine.api.listen"] },
      undefined,
    ] as const
  ) {
    const spec = { source: "api", config, ...(pending ? { pending } : {}) };
    deepEqual(machineConfigFromProto(machineConfigToProto(spec)), spec);
  }
});
