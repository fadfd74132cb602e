/**
 * Boots a disk image under QEMU (OVMF firmware, virtio disk and NIC, user
 * networking with the API port forwarded to 127.0.0.1) as a daemon, and
 * drives it: wait for a console line, wait for a TCP port, stop through QMP.
 * The run directory holds everything about one VM (console log, QMP socket,
 * pidfile, firmware variables, state.json), so another process can attach
 * to it later (`deno task down`).
 */
import { connectQmp } from "./qmp.ts";
import { type Arch, hostArch, PROFILES } from "../arch/profiles.ts";
import { CommandError } from "../run.ts";
import { startSwtpm } from "./swtpm.ts";
import { OVMF_SECURE_BOOT_CODE, OVMF_VARS } from "../versions.ts";

/** How to start a VM. */
export interface VmOptions {
  image: string;
  /** @default "build/qemu" */
  runDir?: string;
  /** Host port forwarded to the guest's {@link guestPort} on 127.0.0.1. @default 50000 */
  hostPort?: number;
  /** @default 50000 */
  guestPort?: number;
  /** @default 1024 */
  memoryMiB?: number;
  /** @default 2 */
  cpus?: number;
  /** "auto" uses KVM when /dev/kvm can be opened read-write. @default "auto" */
  accel?: "auto" | "kvm" | "tcg";
  /** Discard disk writes (the image stays as built). @default false */
  snapshot?: boolean;
  /**
   * The guest's architecture: picks the emulator, machine and UEFI firmware
   * (arch/profiles.ts). A foreign one runs under TCG. @default the host's
   */
  arch?: Arch;
  /** @default the architecture's emulator (qemu-system-x86_64 for amd64) */
  qemu?: string;
  /**
   * More raw disk images, attached as further virtio disks (/dev/vdb, /dev/vdc ...):
   * a path, or a path with its firmware boot priority (see {@link bootIndex}).
   */
  extraDisks?: Array<string | { file: string; bootIndex?: number }>;
  /**
   * The firmware boot priority of {@link image} (QEMU's `bootindex`, lowest first). When it or
   * any extra disk has one, OVMF tries the disks in that order and falls through a disk that
   * holds nothing bootable: an install test boots an empty /dev/vdb first, the image second.
   */
  bootIndex?: number;
  /** Start the guest's clock this many seconds off the host's (e.g. -3600). @default 0 */
  clockOffsetS?: number;
  /**
   * The board's SMBIOS UUID (QEMU's `-uuid`): what `nodeid` disk-encryption keys derive from.
   * Without it QEMU reports all zeros, which machined refuses as a placeholder. @default none
   */
  uuid?: string;
  /**
   * Run QEMU inside this network namespace (`ip netns exec`), e.g. the one a
   * `createTapNetwork` (./tap_network.ts) made. The console, QMP and pidfile are paths, so
   * they work from outside it; a user-network port forward then listens on the
   * namespace's loopback, not the host's.
   */
  netns?: string;
  /**
   * Attach the NIC to this tap device (which must exist where QEMU runs, see
   * `netns`) instead of QEMU's user network: no port forward, the guest
   * is reached at the address it gets on the tap's network.
   */
  tap?: { ifname: string; mac?: string };
  /**
   * More NICs, each on its own tap device (`net1`, `net2` ...; QMP `set_link`
   * names them so), e.g. a bond's second port. Needs {@link tap}.
   */
  extraTaps?: Array<{ ifname: string; mac: string }>;
  /**
   * NICs wired point to point to another VM by QEMU `socket` UDP netdevs
   * (`udp=127.0.0.1:<remotePort>,localaddr=127.0.0.1:<localPort>`, on the
   * loopback of the namespace QEMU runs in), after the tap NICs: a cable to
   * a peer whose frames no bridge may touch (LACPDUs). Needs {@link tap}.
   */
  udpNics?: Array<{ mac: string; localPort: number; remotePort: number }>;
  /**
   * Empty PCIe root ports (`hotplug0` ...) a NIC can be hot-added on with QMP
   * `device_add` (q35 hot-plugs only behind a root port). @default 0
   */
  hotplugPorts?: number;
  /**
   * Boot with OVMF's Secure Boot firmware (SMM, a secure pflash) and empty
   * variables, so the firmware starts in Setup Mode and the image's loader
   * enrolls its keys (x86_64 only). `keepVars` keeps the run directory's
   * variables from an earlier launch: the keys stay enrolled.
   */
  secureBoot?: { keepVars?: boolean };
  /**
   * Attach a software TPM 2.0 (swtpm, state in the run directory's `tpm/`,
   * kept across launches like a real TPM's). @default false
   */
  tpm?: boolean;
}

/** What is recorded in the run directory's state.json. */
export interface VmState {
  pid: number;
  image: string;
  hostPort: number;
  accel: "kvm" | "tcg";
  consoleLog: string;
  qmpSocket: string;
  /** Wall-clock start, ms since the epoch. */
  startedAt: number;
}

/** Waiting for the console or a port ran out of time (or the guest failed). */
export class VmTimeoutError extends Error {
  override name = "VmTimeoutError";
  constructor(readonly waitingFor: string, readonly timeoutMs: number, readonly tail: string) {
    super(`Timed out after ${timeoutMs} ms waiting for ${waitingFor}; console ends with:\n${tail}`);
  }
}

/** The console showed a line matching a failure pattern. */
export class VmFailedError extends Error {
  override name = "VmFailedError";
  constructor(readonly line: string) {
    super(`Guest failed: ${line}`);
  }
}

/** A running (or attached) VM. */
export interface Vm {
  readonly state: VmState;
  /**
   * Resolve with the first match of `pattern` in the console log, awaiting
   * file change events. Rejects with VmFailedError when `failOn` matches first.
   */
  waitForConsole(
    pattern: RegExp,
    opts?: { timeoutMs?: number; failOn?: RegExp },
  ): Promise<RegExpExecArray>;
  /**
   * Resolve once the forwarded port answers: with the first bytes it sends,
   * or "" when it stays open without sending (a TLS server). QEMU's user
   * network accepts on the host side even before the guest listens and then
   * closes, so a bare connect proves nothing; there is no event to await,
   * so this retries every 250 ms until the timeout.
   */
  waitForPort(opts?: { timeoutMs?: number; port?: number }): Promise<string>;
  /**
   * Stop cleanly: ACPI power button, then `quit` when the guest has not
   * powered off after `gracefulMs`. Resolves once QEMU has exited.
   */
  stop(opts?: { gracefulMs?: number }): Promise<"powerdown" | "quit" | "not-running">;
  /** The console log so far. */
  console(): Promise<string>;
}

/**
 * Start QEMU as a daemon on `opts.image`. Resolves once QEMU has initialised
 * the machine (the firmware is then running).
 * @throws CommandError when QEMU refuses to start (its stderr is kept).
 */
export async function startVm(opts: VmOptions): Promise<Vm> {
  const auto = opts.accel === "auto" || !opts.accel;
  const foreign = (opts.arch ?? hostArch()) !== hostArch();
  const accel = foreign ? "tcg" : auto ? await detectAccel() : opts.accel as "kvm" | "tcg";
  if (accel !== "kvm") return await launch(opts, accel);
  // A /dev/kvm that opens may still refuse what the machine asks (SMM for Secure Boot).
  const vm = auto ? await launch(opts, "kvm").catch(() => undefined) : await launch(opts, "kvm");
  if (!vm) return await launch(opts, "tcg");
  const status = await settleStatus(vm.state.qmpSocket, KVM_CHECK_MS);
  if (status !== "internal-error") return vm;
  await vm.stop({ gracefulMs: 0 });
  if (!auto) throw new VmFailedError("KVM reported an internal error (use accel tcg)");
  return await launch(opts, "tcg");
}

/**
 * How long a KVM guest must keep running before KVM counts as working.
 * Some hosts expose a /dev/kvm that opens but cannot run a guest (e.g. a
 * paravirtual KVM that fails in the firmware's first instructions); QEMU then
 * parks the VM in "internal-error" within a fraction of a second.
 */
const KVM_CHECK_MS = 1500;

async function settleStatus(qmpSocket: string, ms: number): Promise<string> {
  const qmp = await connectQmp(qmpSocket);
  try {
    let status = "";
    for (const deadline = performance.now() + ms; performance.now() < deadline;) {
      status = ((await qmp.execute("query-status")) as { status: string }).status;
      if (status === "internal-error") break;
      await delay(250);
    }
    return status;
  } finally {
    qmp.close();
  }
}

/** QEMU's `-rtc base=` for a clock `offsetS` seconds off now (UTC, second precision). */
export function rtcBase(offsetS: number, now = Date.now()): string {
  return new Date(now + offsetS * 1000).toISOString().slice(0, 19);
}

/** The QEMU machine and firmware: the architecture's, or OVMF's Secure Boot build. */
function firmwareOf(opts: VmOptions) {
  const arch = opts.arch ?? hostArch();
  const machine = PROFILES[arch].qemu;
  if (!opts.secureBoot) return machine;
  if (arch !== "amd64") throw new TypeError("secureBoot: only x86_64 guests (OVMF) so far");
  return {
    ...machine,
    machine: ["-machine", "q35,smm=on"],
    firmwareCode: OVMF_SECURE_BOOT_CODE,
    firmwareVars: OVMF_VARS,
  };
}

async function launch(opts: VmOptions, accel: "kvm" | "tcg"): Promise<Vm> {
  const runDir = absolute(opts.runDir ?? "build/qemu");
  await Deno.mkdir(runDir, { recursive: true });
  const hostPort = opts.hostPort ?? 50000;
  const paths = runPaths(runDir);
  for (const f of [paths.consoleLog, paths.qmpSocket, paths.pidFile]) {
    await Deno.remove(f).catch(() => {});
  }
  const machine = firmwareOf(opts);
  const keep = opts.secureBoot?.keepVars &&
    await Deno.stat(paths.vars).then(() => true, () => false);
  if (!keep) await Deno.copyFile(machine.firmwareVars, paths.vars);
  const image = absolute(opts.image);
  const args = [
    "-name",
    "machined",
    ...machine.machine,
    ...(opts.secureBoot ? ["-global", "driver=cfi.pflash01,property=secure,value=on"] : []),
    "-accel",
    accel,
    "-m",
    String(opts.memoryMiB ?? 1024),
    "-smp",
    String(opts.cpus ?? 2),
    "-nodefaults",
    "-display",
    "none",
    "-vga",
    "none",
    "-drive",
    `if=pflash,format=raw,unit=0,readonly=on,file=${machine.firmwareCode}`,
    "-drive",
    `if=pflash,format=raw,unit=1,file=${paths.vars}`,
    ...diskArgs(opts, image),
    ...(opts.clockOffsetS ? ["-rtc", `base=${rtcBase(opts.clockOffsetS)}`] : []),
    ...(opts.uuid ? ["-uuid", opts.uuid] : []),
    ...nicArgs(opts, hostPort),
    ...(opts.tpm ? await startSwtpm(runDir) : []),
    "-device",
    "virtio-rng-pci",
    "-chardev",
    `file,id=serial0,path=${paths.consoleLog}`,
    "-serial",
    "chardev:serial0",
    "-qmp",
    `unix:${paths.qmpSocket},server=on,wait=off`,
    "-pidfile",
    paths.pidFile,
    "-daemonize",
  ];
  const qemu = opts.qemu ?? machine.binary;
  const startedAt = Date.now();
  const [cmd, cmdArgs] = opts.netns
    ? ["ip", ["netns", "exec", opts.netns, qemu, ...args]]
    : [qemu, args];
  const out = await new Deno.Command(cmd, {
    args: cmdArgs,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  })
    .output().catch((e) => {
      throw new CommandError(qemu, args, -1, `cannot start: ${e.message}`, { cause: e });
    });
  if (out.code !== 0) {
    throw new CommandError(qemu, args, out.code, new TextDecoder().decode(out.stderr));
  }
  const pid = Number((await Deno.readTextFile(paths.pidFile)).trim());
  const state: VmState = {
    pid,
    image,
    hostPort,
    accel,
    consoleLog: paths.consoleLog,
    qmpSocket: paths.qmpSocket,
    startedAt,
  };
  await Deno.writeTextFile(paths.state, JSON.stringify(state, null, 2) + "\n");
  return vmHandle(state, paths.state);
}

/** The virtio disks in order (vda, vdb, ...), each with its boot index when one is given. */
export function diskArgs(
  opts: Pick<VmOptions, "snapshot" | "extraDisks" | "bootIndex">,
  image: string,
): string[] {
  const disks = [
    { file: image, bootIndex: opts.bootIndex, extra: opts.snapshot ? ",snapshot=on" : "" },
    ...(opts.extraDisks ?? []).map((d) =>
      typeof d === "string"
        ? { file: absolute(d), bootIndex: undefined, extra: "" }
        : { file: absolute(d.file), bootIndex: d.bootIndex, extra: "" }
    ),
  ];
  if (disks.every((d) => d.bootIndex === undefined)) {
    return disks.flatMap((
      d,
    ) => ["-drive", `file=${d.file},format=raw,if=virtio,cache=unsafe${d.extra}`]);
  }
  return disks.flatMap((d, i) => [
    "-drive",
    `file=${d.file},format=raw,if=none,id=disk${i},cache=unsafe${d.extra}`,
    "-device",
    `virtio-blk-pci,drive=disk${i}${d.bootIndex === undefined ? "" : `,bootindex=${d.bootIndex}`}`,
  ]);
}

/** The NIC: QEMU's user network with the API forwarded, or a tap device. */
export function nicArgs(opts: VmOptions, hostPort: number): string[] {
  const mac = opts.tap?.mac ? `,mac=${opts.tap.mac}` : "";
  const netdev = opts.tap
    ? `tap,id=net0,ifname=${opts.tap.ifname},script=no,downscript=no`
    : `user,id=net0,hostfwd=tcp:127.0.0.1:${hostPort}-:${opts.guestPort ?? 50000}`;
  const netdevs = [
    ...(opts.extraTaps ?? []).map((t) => ({
      mac: t.mac,
      device: "",
      netdev: (id: string) => `tap,id=${id},ifname=${t.ifname},script=no,downscript=no`,
    })),
    ...(opts.udpNics ?? []).map((u) => ({
      mac: u.mac,
      // A speed and duplex, as real NICs report: an 802.3ad bond keeps a port whose
      // speed is unknown (virtio's default) down, and LACP never starts on it.
      device: ",speed=1000,duplex=full",
      netdev: (id: string) =>
        `socket,id=${id},udp=127.0.0.1:${u.remotePort},localaddr=127.0.0.1:${u.localPort}`,
    })),
  ];
  const extra = netdevs.flatMap((n, i) => [
    "-netdev",
    n.netdev(`net${i + 1}`),
    "-device",
    `virtio-net-pci,netdev=net${i + 1},romfile=,mac=${n.mac}${n.device}`,
  ]);
  const ports = Array.from({ length: opts.hotplugPorts ?? 0 }, (_, i) => [
    "-device",
    `pcie-root-port,id=hotplug${i},chassis=${i + 1},slot=${i + 1}`,
  ]).flat();
  return [
    "-netdev",
    netdev,
    "-device",
    `virtio-net-pci,netdev=net0,romfile=${mac}`,
    ...extra,
    ...ports,
  ];
}

/**
 * Attach to the VM recorded in `runDir` (started by another process).
 * @throws Deno.errors.NotFound when no VM was started there.
 */
export async function attachVm(runDir = "build/qemu"): Promise<Vm> {
  const paths = runPaths(absolute(runDir));
  const state = JSON.parse(await Deno.readTextFile(paths.state)) as VmState;
  return vmHandle(state, paths.state);
}

/** True while the process `pid` exists and is a QEMU. */
export async function isRunning(pid: number): Promise<boolean> {
  try {
    const cmd = await Deno.readTextFile(`/proc/${pid}/cmdline`);
    return cmd.includes("qemu");
  } catch {
    return false;
  }
}

/** "kvm" when /dev/kvm opens read-write, else "tcg" ({@link startVm} then checks KVM runs). */
export async function detectAccel(): Promise<"kvm" | "tcg"> {
  try {
    (await Deno.open("/dev/kvm", { read: true, write: true })).close();
    return "kvm";
  } catch {
    return "tcg";
  }
}

/** The {@link Vm} of a started QEMU (also for board models started by raspi_vm.ts). */
export function vmHandle(state: VmState, stateFile: string): Vm {
  const readConsole = () => Deno.readTextFile(state.consoleLog).catch(() => "");
  const tail = async () => (await readConsole()).split("\n").slice(-15).join("\n");
  return {
    state,
    console: readConsole,
    async waitForConsole(pattern, opts = {}) {
      const timeoutMs = opts.timeoutMs ?? 120_000;
      const watcher = Deno.watchFs(state.consoleLog);
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        watcher.close();
      }, timeoutMs);
      const check = async () => {
        const all = await readConsole();
        const text = all.slice(0, all.lastIndexOf("\n") + 1); // complete lines only
        const bad = opts.failOn?.exec(text);
        if (bad) {
          const lineEnd = text.indexOf("\n", bad.index);
          throw new VmFailedError(text.slice(bad.index, lineEnd < 0 ? undefined : lineEnd));
        }
        return pattern.exec(text);
      };
      try {
        const first = await check();
        if (first) return first;
        for await (const _ of watcher) {
          const m = await check();
          if (m) return m;
        }
      } finally {
        clearTimeout(timer);
        if (!timedOut) watcher.close();
      }
      throw new VmTimeoutError(`console line ${pattern}`, timeoutMs, await tail());
    },
    async waitForPort(opts = {}) {
      const timeoutMs = opts.timeoutMs ?? 60_000;
      const port = opts.port ?? state.hostPort;
      const deadline = performance.now() + timeoutMs;
      while (performance.now() < deadline) {
        const got = await probePort(port, Math.min(2000, deadline - performance.now()));
        if (got) return got;
        await delay(250);
      }
      throw new VmTimeoutError(`127.0.0.1:${port} to answer`, timeoutMs, await tail());
    },
    async stop(opts = {}) {
      if (!(await isRunning(state.pid))) return "not-running";
      const qmp = await connectQmp(state.qmpSocket);
      try {
        await qmp.execute("system_powerdown");
        if (await settlesWithin(qmp.closed, opts.gracefulMs ?? 10_000)) {
          await waitGone(state.pid);
          return "powerdown";
        }
        await qmp.execute("quit").catch(() => {/* QEMU may close before replying */});
        if (!(await settlesWithin(qmp.closed, 10_000))) {
          throw new VmTimeoutError("QEMU to quit", 10_000, await tail());
        }
        await waitGone(state.pid);
        return "quit";
      } finally {
        qmp.close();
        await Deno.remove(stateFile).catch(() => {});
      }
    },
  };
}

/**
 * One attempt at the forwarded port. With user networking the host side
 * accepts even when nothing listens in the guest, and then closes at once.
 * So the port answers when it sends bytes (a banner) or stays open for
 * {@link QUIET_OPEN_MS} without closing (a TLS server waiting for its client).
 */
async function probePort(port: number, timeoutMs: number): Promise<string | undefined> {
  let conn: Deno.TcpConn | undefined;
  let quietOpen = false;
  const timer = setTimeout(() => conn?.close(), timeoutMs);
  const quiet = setTimeout(() => {
    quietOpen = true;
    conn?.close();
  }, Math.min(QUIET_OPEN_MS, timeoutMs));
  try {
    conn = await Deno.connect({ hostname: "127.0.0.1", port });
    const buf = new Uint8Array(256);
    const n = await conn.read(buf);
    return n ? new TextDecoder().decode(buf.subarray(0, n)) : undefined;
  } catch {
    return quietOpen && conn ? "" : undefined;
  } finally {
    clearTimeout(timer);
    clearTimeout(quiet);
    try {
      conn?.close();
    } catch { /* closed by a timer */ }
  }
}

const QUIET_OPEN_MS = 1000;

/** QEMU closes QMP just before it exits; give the process a moment to be reaped. */
async function waitGone(pid: number): Promise<void> {
  for (let i = 0; i < 50 && (await isRunning(pid)); i++) await delay(100);
}

async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)));
  try {
    return await Promise.race([p.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** The files of one VM's run directory. */
export function runPaths(runDir: string) {
  return {
    consoleLog: `${runDir}/console.log`,
    qmpSocket: `${runDir}/qmp.sock`,
    pidFile: `${runDir}/qemu.pid`,
    vars: `${runDir}/OVMF_VARS.fd`,
    state: `${runDir}/state.json`,
  };
}

function absolute(path: string): string {
  return path.startsWith("/") ? path : `${Deno.cwd()}/${path}`;
}
