/**
 * The full-node QEMU tier: one image, one boot and one reboot under TCG in a
 * 512 MiB guest (the smallest board machined targets, the Raspberry Pi 3 A+,
 * has 512 MiB), checked from the host through the API only (machinectl and
 * the API client):
 *
 * - network: DHCP from QEMU's user network (10.0.2.15/24, default route via
 *   10.0.2.2, resolver 10.0.2.3), the lease in `get dhcp`;
 * - disks: a blank second disk (the install disk) gets STATE and EPHEMERAL,
 *   formatted and mounted, EPHEMERAL LUKS2-encrypted with a `nodeid` key (the
 *   VM's SMBIOS UUID): a real dm-crypt mapping at /var, opened again after the
 *   reboot, a LUKS2 header on the disk after power-off; a third disk holding someone's ext4 filesystem is
 *   classified `foreign` by discovery, and at the end, named as the install
 *   disk by `apply-config --mode no-reboot`, is refused (the install disk is
 *   chosen at boot: the reply names `machine.install.disk`). Its bytes are
 *   hashed before the VM starts and after it has powered off: they must not change;
 * - kernel: a sysctl and a module from the config, applied and loaded; an
 *   argument the config adds is on the booted command line (dmesg); an argument
 *   added by the config applied on the running node is written into the booted
 *   slot's entry, KernelCmdlineStatus pending-reboot before the reboot and
 *   booted after it (and in dmesg);
 * - time: the VM's clock starts an hour behind; an SNTP responder on the host
 *   (10.0.2.2:123 from the guest) steps it by about +3600 s, and the next sync
 *   measures a small offset;
 * - services: nothing starts before /var is mounted; containerd, then a
 *   payload depending on it (order from the Events history), its log, a
 *   containerd restart seen in RuntimeStatus;
 * - observe: `machinectl memory` and `ps` attribute processes to machined
 *   (PID 1), apid, containerd and the payload, with RSS, PSS and CPU shares;
 *   MemAvailable with all of them running (and the footprint line's, once
 *   containerd was ready) goes into the figures, and no cgroup counts an OOM
 *   kill;
 * - apply modes: a `try` (a sysctl) applies live, shows as pending in
 *   MachineConfig and reverts when its timeout passes; then a `staged` config
 *   (a new sysctl) is persisted but not applied, and a second `try` is
 *   running when the node reboots: the reboot boots the persisted (staged)
 *   config, with nothing pending;
 * - persistence: a config applied over the API before the reboot is in force
 *   after it (ConfigStatus source is the copy on STATE), the same client
 *   certificate still works, and the payload finds the marker it wrote to
 *   /var on the first boot;
 * - observability: `machinectl containers` and `images` answer from containerd's
 *   CRI, and `support` writes a bundle with containerd's log and the graph;
 * - no ControllerStatus shows a failure, before or after the reboot; after
 *   power-off STATE and EPHEMERAL have no ext4 journal left to replay.
 *
 * The CA and the client certificate are backdated by two hours: the guest's
 * clock starts an hour behind, and TLS would otherwise refuse a certificate
 * that is "not yet valid" until the first sync.
 *
 * Figures go to bench/results/node_full.json. Run: `deno test -A e2e/node_full_test.ts`
 * (about 2.5-3 min under TCG; root, for the SNTP responder on port 123);
 * `E2E_VERBOSE_CONSOLE=1` keeps the kernel's messages in build/e2e/full/qemu/console.log
 * (removed after a pass unless `E2E_KEEP_SCRATCH=1`).
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { stringify } from "yaml";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { buildImage, isRunning, startVm, type Vm } from "../imager/mod.ts";
import { generateNodeBundle } from "../pki/mod.ts";
import { connectToNode, type NodeConnection, readTarGz } from "../machinectl/mod.ts";
import { fromProtoResource } from "../api/mapping/mod.ts";
import type { MachineResource } from "../resources/mod.ts";
import { serveHostTime } from "./host_time.ts";
import { readGpt } from "../platform/block/mod.ts";
import { freePort, machinectl, parseDocs, removeScratch } from "./helpers.ts";
import { FOOTPRINT } from "./boot_figures.ts";
import {
  checkTrusted,
  checkUntrusted,
  payloadFetchLoop,
  type PrivateCaSite,
  startPrivateCaSite,
} from "./private_ca_step.ts";
import { memoryMiB, oomKills, readMemory } from "./memory_figures.ts";

const WORK = "build/e2e/full";
const HOSTNAME = "e2e-full";
const CLOCK_OFFSET_S = -3600;
const API_READY = /machined: API ready pid=(\d+) port=\d+ machined_ms=(\d+) uptime_s=([\d.]+)/;
const FAIL = /Kernel panic|machined: FATAL|machined-init: FATAL|soft lockup/;
/** The whole run's budget; every wait also ends when it runs out or the guest fails. */
const BUDGET_MS = 15 * 60_000;
const MODULE = "dummy";
/**
 * A module loaded with a parameter the kernel shows in sysfs (issue 32): brd with `rd_nr=0`
 * makes no RAM disk, and /sys/module/brd/parameters/rd_nr reads 0 (dummy's numdummies is mode 0).
 */
const PARAM_MODULE = { name: "brd", parameters: ["rd_nr=0"] };
const SYSCTL = "net.ipv4.ip_forward";
/** Added by the config applied over the API before the reboot. */
const SYSCTL_AFTER = "net.core.somaxconn";
/** Added by the staged config: applied only after the reboot. */
const SYSCTL_STAGED = "net.ipv4.tcp_keepalive_time";

/** The guest's memory: the full node (containerd and a payload) must fit 512 MiB (issue 27). */
const MEMORY_MIB = 512;

const hasQemu = await Deno.stat("/usr/bin/qemu-system-x86_64").then(() => true, () => false);

/**
 * The payload: writes a marker into /var on its first start, reports it on later ones, and
 * fetches the private-CA site's page every 2 s (e2e/private_ca_step.ts).
 */
const payload = (site: PrivateCaSite) =>
  `
const dir = "/var/lib/payload";
const marker = dir + "/marker";
const boot = Deno.readTextFileSync("/proc/sys/kernel/random/boot_id").trim();
Deno.mkdirSync(dir, { recursive: true });
let found = null;
try { found = Deno.readTextFileSync(marker).trim(); } catch { /* first start */ }
if (found === null) {
  Deno.writeTextFileSync(marker, boot + "\\n");
  const f = Deno.openSync(marker, { read: true }); f.syncSync(); f.close();
  console.log("payload: boot " + boot + ": no marker; wrote one");
} else {
  console.log("payload: boot " + boot + ": found marker from boot " + found);
}
setInterval(() => {}, 3600000);
${payloadFetchLoop(site.pageUrl)}
`.trim();

/** A harmless kernel parameter the config adds: the booted command line must carry it. */
const KERNEL_ARG = "printk.devkmsg=on";
/**
 * Added by the config applied on the running node: written into the booted slot's entry, pending
 * until the reboot, booted after it (a dotted word for no module: the kernel keeps it unused).
 */
const KERNEL_ARG_LIVE = "e2e_live.cmdline=1";

/** The board's SMBIOS UUID, which EPHEMERAL's `nodeid` key derives from. */
const BOARD_UUID = "6d616368-696e-6564-2d66-756c6c2d6e64";

function machineConfig(
  ca: { certPem: string; keyPem: string },
  site: PrivateCaSite,
  over: {
    installDisk?: string;
    extraSysctls?: Record<string, string>;
    liveArg?: boolean;
    /** Trust the private-CA site (applied on the running node, issue 32). */
    trustSite?: boolean;
  } = {},
): string {
  return stringify({
    version: "v1alpha1",
    machine: {
      hostname: HOSTNAME,
      install: {
        disk: over.installDisk ?? "/dev/vdb",
        wipe: false,
        // A real dm-crypt mapping under /var: containerd and the payload run on it (issue 29).
        encryption: { ephemeral: { keys: [{ slot: 0, kind: "nodeid" }] } },
      },
      network: { interfaces: [{ name: "eth0", dhcp: true }] },
      time: { servers: ["10.0.2.2"], sync_interval: "20s" },
      sysctls: { [SYSCTL]: "1", ...over.extraSysctls },
      // A kernel argument from the baked config, on the image's command line (issue 32).
      kernel: {
        modules: [{ name: MODULE }, PARAM_MODULE],
        args: { add: over.liveArg ? [KERNEL_ARG, KERNEL_ARG_LIVE] : [KERNEL_ARG] },
      },
      ...(over.trustSite ? { trusted_roots: [{ name: "e2e-private", pem: site.caPem }] } : {}),
      runtime: { containerd: { enabled: true } },
      services: [{
        id: "payload",
        command: ["/usr/bin/deno", "eval", payload(site)],
        env: { DENO_DIR: "/var/cache/deno", NO_COLOR: "1" },
        depends_on: ["containerd"],
        restart: "always",
        stop_grace_period: "5s",
      }],
      api: { listen: "0.0.0.0:50000" },
      ca: { crt: ca.certPem, key: ca.keyPem },
    },
  });
}

async function sha256(path: string): Promise<string> {
  const h = createHash("sha256");
  using f = await Deno.open(path);
  for await (const chunk of f.readable) h.update(chunk);
  return h.digest("hex");
}

async function run(cmd: string, args: string[]): Promise<void> {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  if (!out.success) {
    throw new Error(`${cmd} ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
}

/** One machine event as the test keeps it. */
interface Ev {
  seq: number;
  time: number;
  /** machined's monotonic milliseconds: differences are durations, across clock steps. */
  monoMs: number;
  kind: string;
  subject: string;
  action: string;
  message: string;
}

/** A connection to the node: resource waits over Watch and the Events history. */
class NodeApi {
  readonly events: Ev[] = [];
  #abort = new AbortController();
  #eventWaiters = new Set<() => void>();
  #eventsDone: Promise<void>;

  private constructor(readonly conn: NodeConnection, readonly guard: AbortSignal) {
    this.#eventsDone = this.#followEvents();
    guard.addEventListener("abort", () => this.#abort.abort(), { once: true });
  }

  /** A connection whose waits all end (with the guard's reason) once `guard` aborts. */
  static async open(config: string, port: number, guard: AbortSignal): Promise<NodeApi> {
    guard.throwIfAborted();
    const conn = await connectToNode({ config, endpoints: [`127.0.0.1:${port}`] });
    return new NodeApi(conn, guard);
  }

  /**
   * Follows Events from the start of the node's history; a stream cut by an
   * apid restart (the server certificate is re-issued once DHCP gives the node
   * its address) is reopened, and replayed events already seen are skipped.
   */
  async #followEvents(): Promise<void> {
    let last = -1;
    while (!this.#abort.signal.aborted) {
      try {
        for await (const r of this.conn.client.events({}, { signal: this.#abort.signal })) {
          const e = r.event;
          if (!e || Number(e.seq) <= last) continue;
          last = Number(e.seq);
          this.events.push({
            seq: Number(e.seq),
            time: e.time ? timestampDate(e.time).getTime() : 0,
            monoMs: e.monoMs,
            kind: e.kind,
            subject: e.subject,
            action: e.action,
            message: e.message,
          });
          for (const w of this.#eventWaiters) w();
        }
      } catch (e) {
        if (this.#abort.signal.aborted) return;
        console.error(`events stream ended: ${e}; reopening`);
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  }

  /** The first event matching `pred` (history included), awaited up to `timeoutMs`. */
  async waitForEvent(pred: (e: Ev) => boolean, what: string, timeoutMs = 60_000): Promise<Ev> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.events.find(pred);
      if (hit) return hit;
      this.guard.throwIfAborted();
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for event ${what}`);
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.#eventWaiters.delete(done);
          this.guard.removeEventListener("abort", done);
          resolve();
        };
        const timer = setTimeout(done, left);
        this.#eventWaiters.add(done);
        this.guard.addEventListener("abort", done, { once: true });
      });
    }
  }

  /** List, retried a few times across an apid restart (see {@link waitFor}). */
  async list(type: string): Promise<MachineResource[]> {
    for (let attempt = 1;; attempt++) {
      try {
        const r = await this.conn.client.list({ type, namespace: "", selector: [] }, {
          timeoutMs: 15_000,
        });
        return r.resources.map(fromProtoResource);
      } catch (e) {
        if (attempt >= 5 || !(e instanceof ConnectError) || e.code === Code.PermissionDenied) {
          throw e;
        }
        this.guard.throwIfAborted();
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  /**
   * Watches `type` until `check` returns something other than undefined for
   * the current set of resources; returns that.
   */
  async waitFor<T>(
    type: string,
    check: (rs: Array<{ id: string; spec: Record<string, unknown> }>) => T | undefined,
    what: string,
    timeoutMs = 120_000,
  ): Promise<T> {
    const abort = new AbortController();
    const stop = () => abort.abort();
    this.#abort.signal.addEventListener("abort", stop);
    const timer = setTimeout(stop, timeoutMs);
    const current = new Map<string, { id: string; spec: Record<string, unknown> }>();
    let bootstrapped = false;
    const put = (r: Parameters<typeof fromProtoResource>[0] | undefined) => {
      if (!r) return;
      const res = fromProtoResource(r);
      current.set(res.metadata.id, {
        id: res.metadata.id,
        spec: res.spec as unknown as Record<string, unknown>,
      });
    };
    try {
      for (;;) {
        try {
          for await (
            const ev of this.conn.client.watch({ type, namespace: "", id: "" }, {
              signal: abort.signal,
            })
          ) {
            const e = ev.event;
            if (e.case === "created") put(e.value);
            else if (e.case === "updated") put(e.value.resource);
            else if (e.case === "destroyed") current.delete(e.value.metadata?.id ?? "");
            else if (e.case === "bootstrapped") bootstrapped = true;
            else if (e.case === "overflow") {
              current.clear();
              for (const r of await this.list(type)) {
                current.set(r.metadata.id, {
                  id: r.metadata.id,
                  spec: r.spec as unknown as Record<string, unknown>,
                });
              }
            }
            if (!bootstrapped) continue;
            const got = check([...current.values()]);
            if (got !== undefined) return got;
          }
          throw new Error(`the watch of ${type} ended while waiting for ${what}`);
        } catch (e) {
          this.guard.throwIfAborted();
          if (abort.signal.aborted) {
            throw new Error(
              `timed out after ${timeoutMs} ms waiting for ${what}; ${type} is: ` +
                JSON.stringify([...current.values()]),
            );
          }
          // apid restarts when the server certificate is re-issued: watch again.
          if (!(e instanceof ConnectError) || e.code === Code.PermissionDenied) throw e;
          console.error(`watch of ${type} cut (${e.message}); watching again`);
          await new Promise((r) => setTimeout(r, 1000));
          current.clear();
          bootstrapped = false;
        }
      }
    } finally {
      clearTimeout(timer);
      this.#abort.signal.removeEventListener("abort", stop);
    }
  }

  async close(): Promise<void> {
    this.#abort.abort();
    this.conn.close();
    await this.#eventsDone;
  }
}

/** `get TYPE -o json` as objects. */
async function getJson(config: string, port: number, ...args: string[]) {
  const r = await machinectl(config, port, "get", ...args, "-o", "json");
  assert.equal(r.code, 0, `get ${args.join(" ")}: ${r.err}`);
  return parseDocs(r.out);
}

/**
 * The time from event `a` to event `b` on machined's monotonic clock. Their
 * wall-clock `time`s are no measure: the SNTP step between them moves it.
 */
function elapsedMs(a: Ev, b: Ev): number {
  return Math.round(b.monoMs - a.monoMs);
}

const byId = (rs: Array<{ id: string; spec: Record<string, unknown> }>, id: string) =>
  rs.find((r) => r.id === id)?.spec;

Deno.test({
  name:
    "a full node in a 512 MiB QEMU guest: network, disks, kernel, time, services, persistence " +
    "across reboot (needs qemu-system-x86_64)",
  ignore: !hasQemu,
  sanitizeOps: false,
  sanitizeResources: false,
}, async (t) => {
  await Deno.remove(WORK, { recursive: true }).catch(() => {});
  await Deno.mkdir(WORK, { recursive: true });
  const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
  const site = await startPrivateCaSite();
  let ca!: { certPem: string; keyPem: string };
  const bundle = await generateNodeBundle({
    name: HOSTNAME,
    endpoint: "127.0.0.1:50000",
    outDir: join(WORK, "pki"),
    now: twoHoursAgo,
    renderMachineConfig: ({ ca: c }) => {
      ca = c;
      return machineConfig(c, site);
    },
  });
  const clientConfig = bundle.paths.clientConfig;

  // Disks: vdb blank (sparse, 1 GiB), vdc someone's ext4 filesystem with a file on it.
  const blank = join(WORK, "blank.img");
  const foreign = join(WORK, "foreign.img");
  await run("truncate", ["-s", "1G", blank]);
  const foreignContent = join(WORK, "foreign-content");
  await Deno.mkdir(foreignContent);
  await Deno.writeTextFile(join(foreignContent, "precious.txt"), "do not touch\n");
  await run("truncate", ["-s", "64M", foreign]);
  await run("mkfs.ext4", ["-q", "-F", "-L", "foreign", "-d", foreignContent, foreign]);
  const foreignHash = await sha256(foreign);

  // Time: the host's clock on 10.0.2.2:123 (QEMU's user network forwards it to 127.0.0.1).
  const sntp = await serveHostTime();

  const t0 = performance.now();
  const image = await buildImage({
    program: new URL("../main.ts", import.meta.url).pathname,
    config: bundle.paths.machineConfig,
    out: join(WORK, "node.img"),
    onDemandModules: [MODULE, PARAM_MODULE.name],
    // E2E_VERBOSE_CONSOLE=1 keeps the kernel's messages (backtraces) on the console log.
    quietConsole: !Deno.env.get("E2E_VERBOSE_CONSOLE"),
    force: true,
  });
  const port = freePort();
  const qemuStart = performance.now();
  const vm: Vm = await startVm({
    image: image.out,
    runDir: join(WORK, "qemu"),
    hostPort: port,
    accel: "auto",
    snapshot: true,
    extraDisks: [blank, foreign],
    uuid: BOARD_UUID,
    clockOffsetS: CLOCK_OFFSET_S,
    memoryMiB: MEMORY_MIB,
  });
  const figures: Record<string, unknown> = {
    at: new Date().toISOString(),
    accel: vm.state.accel,
    memoryMiB: MEMORY_MIB,
  };
  let api: NodeApi | undefined;
  // One guard for the run: the budget, or a failure on the guest's console, ends every wait
  // and fails the remaining steps at once instead of each waiting out its own timeout.
  const guard = new AbortController();
  const budget = setTimeout(
    () => guard.abort(new Error(`the run's ${BUDGET_MS / 60_000}-minute budget ran out`)),
    BUDGET_MS,
  );
  const watchConsole = setInterval(async () => {
    const text = await vm.console();
    const bad = FAIL.exec(text);
    if (bad && !guard.signal.aborted) {
      const line = text.slice(bad.index, text.indexOf("\n", bad.index));
      guard.abort(new Error(`the guest failed: ${line}`));
    }
  }, 2000);
  const step = (name: string, fn: () => Promise<void>) =>
    t.step(name, async () => {
      guard.signal.throwIfAborted();
      await fn();
    });
  try {
    const ready = await vm.waitForConsole(new RegExp(API_READY.source), {
      timeoutMs: 240_000,
      failOn: FAIL,
    });
    figures.qemuStartToApiReadyS = +((performance.now() - qemuStart) / 1000).toFixed(1);
    figures.imageBuildS = +((qemuStart - t0) / 1000).toFixed(1);
    assert.equal(ready[1], "1", "machined must run as PID 1");
    api = await NodeApi.open(clientConfig, port, guard.signal);
    const a = api;

    await step("network: DHCP address, default route, resolvers, lease", async () => {
      await a.waitFor("DhcpLease", (rs) => {
        const l = byId(rs, "eth0");
        return l?.state === "bound" ? l : undefined;
      }, "a bound DHCP lease on eth0");
      const [lease] = await getJson(clientConfig, port, "dhcp", "eth0");
      assert.equal(lease.spec.address, "10.0.2.15");
      assert.equal(lease.spec.prefixLen, 24);
      assert.deepEqual(lease.spec.routers, ["10.0.2.2"]);
      assert.ok((lease.spec.dnsServers as string[]).includes("10.0.2.3"));
      await a.waitFor(
        "AddressStatus",
        (rs) =>
          rs.find((r) =>
            r.spec.link === "eth0" && r.spec.address === "10.0.2.15" &&
            r.spec.prefixLen === 24
          ),
        "10.0.2.15/24 on eth0",
      );
      await a.waitFor(
        "RouteStatus",
        (rs) =>
          rs.find((r) =>
            r.spec.family === "inet" && r.spec.dstLen === 0 && r.spec.gateway === "10.0.2.2" &&
            r.spec.link === "eth0"
          ),
        "a default route via 10.0.2.2",
      );
      await a.waitFor(
        "ResolverStatus",
        (rs) => rs.find((r) => (r.spec.nameservers as string[]).includes("10.0.2.3")),
        "10.0.2.3 in ResolverStatus",
      );
      const boot = await a.waitForEvent(
        (e) => e.kind === "phase" && e.subject === "boot" && e.action === "started",
        "boot started",
      );
      const acquired = await a.waitForEvent(
        (e) => e.subject === "dhcp/eth0" && e.action === "acquired",
        "dhcp acquired",
      );
      figures.machinedStartToDhcpLeaseMs = elapsedMs(boot, acquired);
    });

    await step(
      "disks: the blank disk provisioned and mounted; the foreign one left",
      async () => {
        const volumes = await a.waitFor(
          "VolumeStatus",
          (rs) => {
            const s = byId(rs, "STATE"), e = byId(rs, "EPHEMERAL");
            if (s?.phase === "failed" || e?.phase === "failed") {
              throw new Error(`provisioning failed: ${JSON.stringify(rs)}`);
            }
            return s?.phase === "ready" && e?.phase === "ready" ? { s, e } : undefined;
          },
          "STATE and EPHEMERAL ready",
          180_000,
        );
        assert.equal(volumes.s.disk, "/dev/vdb");
        // The cycle after provisioning reads our layout and leaves it; `created` remembers.
        assert.ok(volumes.s.created && volumes.e.created, JSON.stringify(volumes));
        assert.equal(volumes.s.filesystem, "ext4");
        assert.equal(volumes.e.filesystem, "ext4");
        assert.equal(volumes.s.encrypted, false);
        assert.equal(volumes.e.encrypted, true, JSON.stringify(volumes.e));
        assert.equal(volumes.e.mappingPath, "/dev/mapper/EPHEMERAL");
        assert.deepEqual(volumes.e.unlockedBy, { slot: 0, kind: "nodeid" });
        const mounts = await a.waitFor("MountStatus", (rs) => {
          const s = byId(rs, "STATE"), e = byId(rs, "EPHEMERAL");
          return s?.phase === "ready" && e?.phase === "ready" ? { s, e } : undefined;
        }, "STATE and EPHEMERAL mounted");
        assert.equal(mounts.s.target, "/system/state");
        assert.equal(mounts.e.target, "/var");
        assert.match(String(mounts.s.source), /^\/dev\/vdb\d$/);
        assert.equal(mounts.e.source, "/dev/mapper/EPHEMERAL");
        const disks = await getJson(clientConfig, port, "disks");
        const vdb = disks.find((d) => d.metadata.id === "vdb");
        const vdc = disks.find((d) => d.metadata.id === "vdc");
        assert.equal(vdb?.spec.layout, "machined");
        assert.equal(vdc?.spec.layout, "foreign", JSON.stringify(vdc));
        const decided = await a.waitForEvent(
          (e) => e.subject === "provision /dev/vdb" && e.action === "create",
          "provision create",
        );
        const mounted = await a.waitForEvent(
          (e) => e.subject === "mount /var" && e.action === "done",
          "/var mounted",
        );
        figures.provisioningMs = elapsedMs(decided, mounted);
      },
    );

    await step("kernel: the config's sysctl, a module, and brd's rd_nr=0 in force", async () => {
      const p = await a.waitFor("KernelParamStatus", (rs) => {
        const s = byId(rs, SYSCTL);
        return s?.applied ? s : undefined;
      }, `${SYSCTL} applied`);
      assert.equal(p.current, "1");
      const [viaCli] = await getJson(clientConfig, port, "kernelparamstatus", SYSCTL);
      assert.equal(viaCli.spec.current, "1");
      const m = await a.waitFor("KernelModuleStatus", (rs) => {
        const s = byId(rs, MODULE);
        return s && s.state !== "failed" ? s : undefined;
      }, `module ${MODULE} loaded`);
      assert.equal(m.state, "loaded", JSON.stringify(m));
      // The parameter given to finit_module, read back from sysfs on the node's own kernel.
      const b = await a.waitFor("KernelModuleStatus", (rs) => {
        const s = byId(rs, PARAM_MODULE.name);
        return s && s.state !== "failed" ? s : undefined;
      }, `module ${PARAM_MODULE.name} loaded`);
      assert.equal(b.state, "loaded", JSON.stringify(b));
      assert.deepEqual(b.inForce, PARAM_MODULE.parameters, JSON.stringify(b));
    });

    await step("time: stepped by about +1 h from the host, then in step", async () => {
      const first = await a.waitForEvent(
        (e) => e.action === "stepped",
        "clock stepped",
        120_000,
      );
      const stepMs = Number(/stepped by (-?[\d.]+) ms/.exec(first.message)?.[1]);
      assert.ok(Math.abs(stepMs - 3600_000) < 30_000, `step of ${stepMs} ms`);
      figures.clockStepMs = Math.round(stepMs);
      const st = await a.waitFor(
        "TimeStatus",
        (rs) => {
          const s = byId(rs, "node");
          return s?.synced && Number(s.syncCount) >= 2 ? s : undefined;
        },
        "a second sync",
        120_000,
      );
      assert.equal(st.server, "10.0.2.2");
      assert.ok(Math.abs(Number(st.offsetMs)) < 2000, `offset after the step: ${st.offsetMs} ms`);
      assert.ok(
        Math.abs(Number(st.lastSync) - Date.now()) < 60_000,
        `the node's clock reads ${new Date(Number(st.lastSync)).toISOString()}`,
      );
      figures.offsetAfterStepMs = st.offsetMs;
      // Not `sntp.requests`: the Pi case's responder may share the port (e2e/host_time.ts).
    });

    await step("services: containerd then payload, logs, containerd restart", async () => {
      await a.waitFor(
        "RuntimeStatus",
        (rs) => {
          const s = byId(rs, "containerd");
          return s?.ready ? s : undefined;
        },
        "RuntimeStatus ready",
        180_000,
      );
      const payloadRunning = await a.waitFor(
        "ServiceStatus",
        (rs) => {
          const s = byId(rs, "payload");
          return s?.state === "running" ? s : undefined;
        },
        "payload running",
        120_000,
      );
      assert.ok(payloadRunning.pid);
      const cStart = await a.waitForEvent(
        (e) => e.kind === "service" && e.subject === "containerd" && e.action === "starting",
        "containerd starting",
      );
      const cReady = await a.waitForEvent(
        (e) => e.kind === "service" && e.subject === "containerd" && e.action === "ready",
        "containerd ready",
      );
      const pStart = await a.waitForEvent(
        (e) => e.kind === "service" && e.subject === "payload" && e.action === "starting",
        "payload starting",
      );
      assert.ok(cReady.seq < pStart.seq, "containerd is ready before payload starts");
      const varReady = await a.waitForEvent(
        (e) => e.subject === "mount /var" && e.action === "done",
        "/var mounted",
      );
      assert.ok(varReady.seq < cStart.seq, "no service starts before /var is mounted");
      figures.containerdStartToRuntimeReadyMs = elapsedMs(cStart, cReady);
      figures.runtimeReadyToPayloadStartMs = elapsedMs(cReady, pStart);

      const deadline = Date.now() + 60_000;
      let logs = { code: 1, out: "", err: "" };
      while (Date.now() < deadline) {
        logs = await machinectl(clientConfig, port, "logs", "payload");
        if (/payload: boot \S+: no marker; wrote one/.test(logs.out)) break;
        guard.signal.throwIfAborted();
        await new Promise((r) => setTimeout(r, 1000));
      }
      assert.match(logs.out, /payload: boot \S+: no marker; wrote one/, logs.out + logs.err);

      const services = await machinectl(clientConfig, port, "get", "services");
      assert.equal(services.code, 0, services.err);
      assert.match(services.out, /containerd\s+\d+\s+running\s+true/);
      assert.match(services.out, /payload\s+\d+\s+running\s+true/);
      const runtime = await getJson(clientConfig, port, "runtimestatus");
      assert.equal(runtime[0].spec.runtimeName, "containerd");
      assert.ok(runtime[0].spec.runtimeVersion);

      const seqBefore = a.events.at(-1)?.seq ?? 0;
      // Watch before restarting, so the not-ready moment cannot slip past.
      const notReady = a.waitFor(
        "RuntimeStatus",
        (rs) => {
          const s = byId(rs, "containerd");
          return s && !s.ready ? s : undefined;
        },
        "RuntimeStatus not ready after the restart",
        60_000,
      );
      const restart = await machinectl(clientConfig, port, "service", "restart", "containerd");
      assert.equal(restart.code, 0, restart.err);
      await notReady;
      const back = await a.waitForEvent(
        (e) => e.seq > seqBefore && e.subject === "containerd" && e.action === "ready",
        "containerd ready again",
        120_000,
      );
      await a.waitFor(
        "RuntimeStatus",
        (rs) => {
          const s = byId(rs, "containerd");
          return s?.ready ? s : undefined;
        },
        "RuntimeStatus ready again",
        60_000,
      );
      const down = a.events.find((x) =>
        x.seq > seqBefore && x.subject === "containerd" && x.action !== "ready"
      );
      if (down) figures.containerdRestartToReadyMs = elapsedMs(down, back);
    });

    await step(
      "observe: memory and ps name machined, apid, containerd and the payload",
      async () => {
        const m = await readMemory(clientConfig, port);
        const mem = memoryMiB(m);
        assert.ok(mem.memTotalMiB > 0 && mem.memAvailableMiB > 0, JSON.stringify(m.meminfo));
        // With machined, apid, containerd and the payload running.
        figures.memTotalMiB = mem.memTotalMiB;
        figures.memAvailableAllRunningMiB = mem.memAvailableMiB;
        // machined's own line, 5 s after containerd was first ready (the boot test's figure).
        const foot = await vm.waitForConsole(FOOTPRINT, { timeoutMs: 30_000, failOn: FAIL });
        figures.memAvailableWithContainerdMiB = +(Number(foot[1]) / 1024).toFixed(1);
        const killed = await oomKills(clientConfig, port);
        assert.deepEqual(killed, [], `OOM kills at ${MEMORY_MIB} MiB`);
        const owners = m.owners.map((o: { owner: string }) => o.owner);
        for (const o of ["apid", "containerd", "machined", "payload"]) {
          assert.ok(owners.includes(o), `memory lists ${o}: ${owners}`);
        }
        const pid1 = m.processes.find((p) => p.pid === 1);
        assert.equal(pid1?.owner, "machined");
        assert.ok(pid1 && pid1.rssBytes > 0 && pid1.pssBytes > 0, JSON.stringify(pid1));
        const ps = await machinectl(clientConfig, port, "ps", "-o", "json");
        assert.equal(ps.code, 0, ps.err);
        const procs: { pid: number; owner: string; args: string[]; cpuPercent?: number }[] =
          JSON.parse(ps.out).processes;
        const [svc] = await getJson(clientConfig, port, "services", "payload");
        assert.equal(procs.find((p) => p.pid === Number(svc.spec.pid))?.owner, "payload");
        assert.ok(procs.some((p) => p.owner === "containerd" && /containerd/.test(p.args[0])));
        assert.ok(procs.some((p) => p.cpuPercent !== undefined), "ps shows CPU shares");
        const table = await machinectl(clientConfig, port, "ps", "--sort", "pid");
        assert.match(table.out, /^1\s+0\s+machined\s+/m, table.out);
      },
    );

    await step("private CA: the payload's fetch and containerd's pull refused", async () => {
      await checkUntrusted(site, clientConfig, port);
    });

    let trustedAt = 0;
    await step("apply a config over the API (persisted on STATE)", async () => {
      const file = join(WORK, "config-2.yaml");
      await Deno.writeTextFile(
        file,
        machineConfig(ca, site, {
          extraSysctls: { [SYSCTL_AFTER]: "1234" },
          liveArg: true,
          trustSite: true,
        }),
      );
      // Before: the baked argument is booted, the live one nowhere.
      const before = await a.waitFor(
        "KernelCmdlineStatus",
        (rs) => {
          const s = byId(rs, "cmdline");
          return s?.state === "booted" ? s : undefined;
        },
        "KernelCmdlineStatus booted with the baked argument",
        120_000,
      );
      assert.ok(String(before.booted).split(" ").includes(KERNEL_ARG), String(before.booted));
      assert.ok(!String(before.next).includes(KERNEL_ARG_LIVE), String(before.next));
      const applied = performance.now();
      trustedAt = applied;
      const r = await machinectl(clientConfig, port, "apply-config", "-f", file);
      assert.equal(r.code, 0, r.err + r.out);
      // A kernel argument applies live: written into the booted slot's entry, pending a reboot.
      const pending = await a.waitFor(
        "KernelCmdlineStatus",
        (rs) => {
          const s = byId(rs, "cmdline");
          return s?.state === "pending-reboot" ? s : undefined;
        },
        `${KERNEL_ARG_LIVE} written into the booted entry, pending a reboot`,
        60_000,
      );
      figures.kernelArgWrittenMs = Math.round(performance.now() - applied);
      assert.deepEqual(pending.pending, [KERNEL_ARG_LIVE]);
      assert.ok(String(pending.next).split(" ").includes(KERNEL_ARG_LIVE), String(pending.next));
      assert.match(String(pending.reason), /loader entry machined-a(\+\d+-\d+)?\.conf/);
      const cli = await machinectl(clientConfig, port, "get", "kernelcmdlinestatus");
      assert.equal(cli.code, 0, cli.err);
      assert.match(cli.out, new RegExp(`pending-reboot\\s+${KERNEL_ARG_LIVE}\\s`), cli.out);
      await a.waitFor("KernelParamStatus", (rs) => {
        const s = byId(rs, SYSCTL_AFTER);
        return s?.applied ? s : undefined;
      }, `${SYSCTL_AFTER} applied`);
      const [cs] = await getJson(clientConfig, port, "configstatus");
      assert.equal(cs.spec.source, "api");
    });

    await step("private CA: trusted once configured, without a payload restart", async () => {
      Object.assign(figures, await checkTrusted(site, clientConfig, port, trustedAt));
    });

    await step(
      "apply modes: a try applies live, is pending, and reverts at its timeout",
      async () => {
        const file = join(WORK, "config-try.yaml");
        await Deno.writeTextFile(
          file,
          machineConfig(ca, site, {
            extraSysctls: { [SYSCTL_AFTER]: "2345" },
            liveArg: true,
            trustSite: true,
          }),
        );
        const t0 = performance.now();
        const r = await machinectl(
          clientConfig,
          port,
          "apply-config",
          "-f",
          file,
          "--mode",
          "try",
          "--timeout",
          "20s",
        );
        assert.equal(r.code, 0, r.err + r.out);
        assert.match(r.out, /applied with mode try/);
        assert.match(
          r.out,
          new RegExp(`changed: machine\\.sysctls\\.${SYSCTL_AFTER.replaceAll(".", "\\.")}`),
        );
        await a.waitFor(
          "KernelParamStatus",
          (rs) => {
            const s = byId(rs, SYSCTL_AFTER);
            return s?.current === "2345" ? s : undefined;
          },
          `${SYSCTL_AFTER} tried live`,
          30_000,
        );
        const [mc] = await getJson(clientConfig, port, "machineconfig");
        assert.equal(
          (mc.spec.pending as { mode?: string } | undefined)?.mode,
          "try",
          JSON.stringify(mc.spec.pending),
        );
        await a.waitFor(
          "KernelParamStatus",
          (rs) => {
            const s = byId(rs, SYSCTL_AFTER);
            return s?.current === "1234" ? s : undefined;
          },
          `${SYSCTL_AFTER} reverted`,
          90_000,
        );
        figures.tryRevertedAfterS = +((performance.now() - t0) / 1000).toFixed(1);
        const [after] = await getJson(clientConfig, port, "machineconfig");
        assert.equal(after.spec.pending, undefined);
      },
    );

    await step(
      "apply modes: staged is persisted, not applied; then a try is left running",
      async () => {
        const staged = join(WORK, "config-staged.yaml");
        await Deno.writeTextFile(
          staged,
          machineConfig(ca, site, {
            extraSysctls: { [SYSCTL_AFTER]: "1234", [SYSCTL_STAGED]: "600" },
            liveArg: true,
            trustSite: true,
          }),
        );
        let r = await machinectl(
          clientConfig,
          port,
          "apply-config",
          "-f",
          staged,
          "--mode",
          "staged",
        );
        assert.equal(r.code, 0, r.err + r.out);
        assert.match(r.out, /applied with mode staged/);
        let [mc] = await getJson(clientConfig, port, "machineconfig");
        assert.deepEqual(mc.spec.pending, {
          mode: "staged",
          changed: [`machine.sysctls.${SYSCTL_STAGED}`],
        });
        const tried = join(WORK, "config-try-2.yaml");
        await Deno.writeTextFile(
          tried,
          machineConfig(ca, site, {
            extraSysctls: { [SYSCTL_AFTER]: "999" },
            liveArg: true,
            trustSite: true,
          }),
        );
        r = await machinectl(
          clientConfig,
          port,
          "apply-config",
          "-f",
          tried,
          "--mode",
          "try",
          "--timeout",
          "10m",
        );
        assert.equal(r.code, 0, r.err + r.out);
        await a.waitFor(
          "KernelParamStatus",
          (rs) => {
            const s = byId(rs, SYSCTL_AFTER);
            return s?.current === "999" ? s : undefined;
          },
          `${SYSCTL_AFTER} tried live`,
          30_000,
        );
        const params = await a.list("KernelParamStatus");
        assert.ok(!params.some((p) => p.metadata.id === SYSCTL_STAGED), "staged is not applied");
        [mc] = await getJson(clientConfig, port, "machineconfig");
        assert.equal((mc.spec.pending as { mode?: string } | undefined)?.mode, "try");
      },
    );

    await step("no controller has failed so far", () => controllersHealthy(a));

    await step("reboot: config, certificate and /var survive", async () => {
      await a.close();
      await Deno.writeTextFile(join(WORK, "events-boot1.json"), JSON.stringify(a.events, null, 1));
      api = undefined;
      const reboot = await machinectl(clientConfig, port, "reboot");
      assert.equal(reboot.code, 0, reboot.err);
      await vm.waitForConsole(
        new RegExp(`${API_READY.source}[\\s\\S]*${API_READY.source}`),
        { timeoutMs: 420_000, failOn: FAIL },
      );
      const b = api = await NodeApi.open(clientConfig, port, guard.signal);
      await b.waitFor(
        "MountStatus",
        (rs) => {
          const e = byId(rs, "EPHEMERAL");
          return e?.phase === "ready" ? e : undefined;
        },
        "EPHEMERAL mounted after the reboot",
        120_000,
      );
      const vs = await b.waitFor("VolumeStatus", (rs) => {
        const s = byId(rs, "STATE");
        return s?.phase === "ready" ? s : undefined;
      }, "STATE ready after the reboot");
      assert.equal(vs.decision, "leave");
      // EPHEMERAL's LUKS2 header opened again by the board's UUID: the payload's marker is in it.
      const eph = await b.waitFor("VolumeStatus", (rs) => {
        const e = byId(rs, "EPHEMERAL");
        return e?.phase === "ready" ? e : undefined;
      }, "EPHEMERAL unlocked after the reboot");
      assert.equal(eph.encrypted, true);
      assert.deepEqual(eph.unlockedBy, { slot: 0, kind: "nodeid" });
      const cs = await b.waitFor(
        "ConfigStatus",
        (rs) => {
          const s = byId(rs, "machine");
          return s?.source === "/system/state/config.yaml" ? s : undefined;
        },
        "the config on STATE in force",
        60_000,
      );
      assert.equal(cs.state, "valid");
      await b.waitFor("KernelParamStatus", (rs) => {
        const s = byId(rs, SYSCTL_AFTER);
        return s?.applied && s.current === "1234" ? s : undefined;
      }, `${SYSCTL_AFTER} applied after the reboot (the persisted config, not the try)`);
      await b.waitFor("KernelParamStatus", (rs) => {
        const s = byId(rs, SYSCTL_STAGED);
        return s?.applied && s.current === "600" ? s : undefined;
      }, `${SYSCTL_STAGED} (staged) applied after the reboot`);
      const [mc] = await getJson(clientConfig, port, "machineconfig");
      assert.equal(mc.spec.pending, undefined, "nothing pending after the reboot");
      // The argument added on the running node is booted after this one reboot.
      const cmdline = await b.waitFor(
        "KernelCmdlineStatus",
        (rs) => {
          const s = byId(rs, "cmdline");
          return s?.state === "booted" ? s : undefined;
        },
        `${KERNEL_ARG_LIVE} booted after the reboot`,
        60_000,
      );
      const words = String(cmdline.booted).split(" ");
      assert.ok(words.includes(KERNEL_ARG_LIVE) && words.includes(KERNEL_ARG), words.join(" "));
      const deadline = Date.now() + 120_000;
      let logs = { code: 1, out: "", err: "" };
      while (Date.now() < deadline) {
        logs = await machinectl(clientConfig, port, "logs", "payload");
        if (/found marker from boot/.test(logs.out)) break;
        guard.signal.throwIfAborted();
        await new Promise((r) => setTimeout(r, 1000));
      }
      assert.match(logs.out, /payload: boot (\S+): found marker from boot (\S+)/, logs.out);
      const [, now, then] = /payload: boot (\S+): found marker from boot (\S+)/.exec(logs.out)!;
      assert.notEqual(now, then, "the marker comes from the previous boot");
      // The kernel copies a synchronised clock to the RTC (11-minute mode), so the
      // second boot starts close to the host's time: recorded, not asserted.
      const synced = await b.waitForEvent((e) => e.action === "synced", "synced", 120_000);
      const m = /(step|slew) by (-?[\d.]+) ms/.exec(synced.message);
      if (m) figures.secondBootFirstOffsetMs = Number(m[2]);
    });

    await step("no controller has failed after the reboot", () => controllersHealthy(api!));

    await step(
      "refusal: no-reboot naming the foreign disk as install disk is refused",
      async () => {
        const file = join(WORK, "config-3.yaml");
        await Deno.writeTextFile(
          file,
          machineConfig(ca, site, {
            installDisk: "/dev/vdc",
            extraSysctls: { [SYSCTL_AFTER]: "1234", [SYSCTL_STAGED]: "600" },
            trustSite: true,
          }),
        );
        const r = await machinectl(
          clientConfig,
          port,
          "apply-config",
          "-f",
          file,
          "--mode",
          "no-reboot",
        );
        assert.equal(r.code, 1, r.err + r.out);
        assert.match(r.err, /needs a reboot: machine\.install\.disk/);
        const [vs] = await getJson(clientConfig, port, "volumestatus", "STATE");
        assert.equal(vs.spec.disk, "/dev/vdb", JSON.stringify(vs.spec));
        const [vdc] = await getJson(clientConfig, port, "disks", "vdc");
        assert.equal(vdc.spec.layout, "foreign");
        // The refusal changes nothing: /var stays mounted from vdb, the services keep running.
        const mounts = await getJson(clientConfig, port, "mountstatus");
        assert.deepEqual(
          mounts.map((m) => [m.metadata.id, m.spec.mounted, m.spec.source]).sort(),
          [["EPHEMERAL", true, "/dev/mapper/EPHEMERAL"], ["STATE", true, "/dev/vdb1"]],
        );
        const svcs = await getJson(clientConfig, port, "services");
        assert.deepEqual(svcs.map((x) => [x.metadata.id, x.spec.state]).sort(), [
          ["containerd", "running"],
          ["payload", "running"],
        ]);
      },
    );

    await step(
      "observability: containers and images from containerd's CRI, support bundle, metrics",
      () => checkObservability(clientConfig, port),
    );

    await step("shutdown: QEMU exits; the foreign disk is byte-for-byte unchanged", async () => {
      if (api) {
        await api.close();
        await Deno.writeTextFile(
          join(WORK, "events-boot2.json"),
          JSON.stringify(api.events, null, 1),
        );
      }
      api = undefined;
      const shutdown = await machinectl(clientConfig, port, "shutdown");
      assert.equal(shutdown.code, 0, shutdown.err);
      const deadline = Date.now() + 120_000;
      while (Date.now() < deadline && (await isRunning(vm.state.pid))) {
        await new Promise((r) => setTimeout(r, 500));
      }
      assert.equal(await isRunning(vm.state.pid), false, "QEMU exits after shutdown");
      assert.equal(await sha256(foreign), foreignHash, "the foreign disk was not written");
      // STATE was unmounted cleanly (no ext4 journal left to replay); EPHEMERAL is LUKS2 on disk.
      assert.deepEqual(await ext4NeedsRecovery(blank), { STATE: false, EPHEMERAL: "luks2" });
    });

    console.log(JSON.stringify({ suite: "node_full", ...figures }));
    await Deno.mkdir("bench/results", { recursive: true });
    await Deno.writeTextFile(
      "bench/results/node_full.json",
      JSON.stringify(figures, null, 2) + "\n",
    );
  } finally {
    clearTimeout(budget);
    clearInterval(watchConsole);
    await api?.close();
    await sntp.close();
    await site.close();
    if (await isRunning(vm.state.pid)) await vm.stop({ gracefulMs: 1000 });
  }
  await removeScratch(WORK);
});

/** Every ControllerStatus of the node shows no failure. */
async function controllersHealthy(api: NodeApi): Promise<void> {
  const failing = (await api.list("ControllerStatus"))
    .map((r) => ({ id: r.metadata.id, spec: r.spec as unknown as Record<string, unknown> }))
    .filter((r) => Number(r.spec.failures) > 0 || r.spec.state === "backoff")
    .map((r) => `${r.id}: ${r.spec.failures} failures, last: ${r.spec.lastError}`);
  assert.deepEqual(failing, [], failing.join("\n"));
}

/**
 * For each partition of `image`'s GPT holding ext4: whether its journal needs recovery;
 * a partition holding a LUKS2 header is `"luks2"` (its filesystem is encrypted).
 */
async function ext4NeedsRecovery(image: string): Promise<Record<string, boolean | "luks2">> {
  using f = await Deno.open(image);
  const read = async (offset: number, length: number) => {
    const buf = new Uint8Array(length);
    await f.seek(offset, Deno.SeekMode.Start);
    let got = 0;
    while (got < length) {
      const n = await f.read(buf.subarray(got));
      if (n === null) break;
      got += n;
    }
    return buf;
  };
  const gpt = await readGpt(read, (await f.stat()).size, 512);
  assert.ok(gpt, `no GPT on ${image}`);
  const out: Record<string, boolean | "luks2"> = {};
  const LUKS_MAGIC = [0x4c, 0x55, 0x4b, 0x53, 0xba, 0xbe, 0x00, 0x02]; // "LUKS\xba\xbe", version 2
  for (const p of gpt.table.partitions) {
    const head = await read(p.firstLba * 512, 8);
    if (LUKS_MAGIC.every((b, i) => head[i] === b)) {
      out[p.name] = "luks2";
      continue;
    }
    const sb = await read(p.firstLba * 512 + 1024, 1024);
    const v = new DataView(sb.buffer);
    if (v.getUint16(0x38, true) !== 0xef53) continue;
    out[p.name] = (v.getUint32(0x60, true) & 0x4) !== 0; // INCOMPAT_RECOVER
  }
  return out;
}

/** containers and images answer from the node's containerd; a support bundle has every part. */
async function checkObservability(config: string, port: number): Promise<void> {
  const c = await machinectl(config, port, "containers", "-o", "json");
  assert.equal(c.code, 0, c.err);
  const doc = JSON.parse(c.out);
  assert.ok(Array.isArray(doc.pods) && Array.isArray(doc.containers), c.out);
  const images = await machinectl(config, port, "images", "-o", "json");
  assert.equal(images.code, 0, images.err);
  const file = join(WORK, "support.tar.gz");
  const s = await machinectl(config, port, "support", "-o", file);
  assert.equal(s.code, 0, s.err);
  const entries = await readTarGz(await Deno.readFile(file));
  const files = new Map(entries.map((e) => [e.name, new TextDecoder().decode(e.data)]));
  for (const n of ["containers.yaml", "logs/containerd.log", "dmesg.txt", "controllers.dot"]) {
    assert.ok(files.has(n), `${n} in ${[...files.keys()].join(", ")}`);
  }
  const errors = files.get("errors.txt")!;
  for (const part of ["resources/", "logs/", "config.yaml", "dmesg.txt", "containers", "metrics"]) {
    assert.ok(!errors.includes(part), `${part} not collected: ${errors}`);
  }
  // Node metrics and containerd's cgroup usage, as a Prometheus scrape would see them.
  // The kernel booted with the config's argument (the kernel logs its command line first).
  assert.match(files.get("dmesg.txt")!, new RegExp(`Command line: .*\\b${KERNEL_ARG}\\b`));
  // After the reboot: also the argument the config added on the running node.
  assert.match(files.get("dmesg.txt")!, new RegExp(`Command line: .*\\b${KERNEL_ARG_LIVE}\\b`));
  const metrics = files.get("metrics.txt")!;
  // Disk hotplug is driven by uevents on the node: provisioning alone produced some.
  assert.match(metrics, /\nmachined_uevents_total\{outcome="received"\} [1-9]/);
  assert.match(metrics, /\nmachined_node_memory_total_bytes [1-9]/);
  assert.match(metrics, /\nmachined_service_cpu_seconds_total\{service="containerd"\} [0-9.]+\n/);
}
