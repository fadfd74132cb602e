/**
 * A throwaway L2 network for a VM that is not QEMU's user network: a network
 * namespace holding a bridge (the gateway address), a tap device on it, and
 * dnsmasq serving DHCP on the bridge. QEMU runs inside the namespace
 * (`VmOptions.netns`) and opens the tap there; anything that talks to the
 * guest (machinectl) runs there too, with {@link TapNetwork.command}. The
 * host's own interfaces, routes and addresses are never touched: everything
 * lives in the namespace, and {@link TapNetwork.close} deletes it.
 *
 * Needs root, iproute2 and dnsmasq (Debian `dnsmasq-base`).
 */
import { CommandError } from "../run.ts";

/** Where dnsmasq may live. */
export const DNSMASQ_PATHS = ["/usr/sbin/dnsmasq", "/usr/bin/dnsmasq"];

/** Options of {@link createTapNetwork}. */
export interface TapNetworkOptions {
  /** Namespace name. @default "machined-tap-<random>" */
  netns?: string;
  /** The /24 to serve, as its first three octets. @default "10.99.0" */
  subnet?: string;
  /** Directory for dnsmasq's log. @default a new temp directory */
  dir?: string;
  /** The lease time dnsmasq hands out. @default "10m" */
  leaseTime?: string;
  /**
   * Also an IPv6 /64 (its prefix, e.g. `fd99::`): the bridge takes `<prefix>1`
   * and dnsmasq sends router advertisements for it (SLAAC, no DHCPv6).
   * @default none: IPv4 only
   */
  ipv6Prefix?: string;
  /**
   * Also stateful DHCPv6 (IA_NA) from a second /64 (its prefix, e.g. `fd98::`;
   * needs {@link ipv6Prefix}): the bridge takes `<prefix>1`, dnsmasq leases
   * `<prefix>100`–`<prefix>1ff` with DNS server `<ipv6Prefix>1`, and its
   * advertisements then carry the M flag (the SLAAC prefix keeps its A flag;
   * this one is on-link only).
   * @default none
   */
  dhcp6Prefix?: string;
}

/** One DHCPACK dnsmasq logged. */
export interface TapLease {
  address: string;
  mac: string;
}

/** A namespace with a bridge, a tap on it and a DHCP server. */
export interface TapNetwork {
  readonly netns: string;
  /** The tap device QEMU opens (inside {@link netns}). */
  readonly tap: string;
  readonly bridge: string;
  /** The bridge's address: the guest's router and DNS server. */
  readonly gateway: string;
  /** dnsmasq's log file (its DHCP transactions). */
  readonly log: string;
  /** Every DHCPACK logged so far. */
  leases(): Promise<TapLease[]>;
  /** The first DHCPACK for `mac` (any when omitted), awaited up to `timeoutMs`. */
  waitForLease(opts?: { mac?: string; timeoutMs?: number }): Promise<TapLease>;
  /** `cmd args` run inside the namespace. */
  command(cmd: string, args: string[], options?: Deno.CommandOptions): Deno.Command;
  /** Stops dnsmasq and deletes the namespace (the tap and bridge with it). Idempotent. */
  close(): Promise<void>;
}

/**
 * Create the namespace, bridge, tap and dnsmasq. On any failure what was made
 * is removed again before rethrowing.
 * @throws CommandError from `ip`, or Error when dnsmasq is not installed.
 */
export async function createTapNetwork(opts: TapNetworkOptions = {}): Promise<TapNetwork> {
  const dnsmasq = DNSMASQ_PATHS.find(isFile);
  if (!dnsmasq) throw new Error(`dnsmasq is not installed (tried ${DNSMASQ_PATHS.join(", ")})`);
  const netns = opts.netns ?? `machined-tap-${crypto.randomUUID().slice(0, 8)}`;
  const subnet = opts.subnet ?? "10.99.0";
  const gateway = `${subnet}.1`;
  const [bridge, tap] = ["br0", "tap0"];
  const dir = opts.dir ?? await Deno.makeTempDir({ prefix: "machined-tap-" });
  await Deno.mkdir(dir, { recursive: true });
  // Absolute: dnsmasq changes to / before it opens its log.
  const log = `${await Deno.realPath(dir)}/dnsmasq.log`;
  await ip("netns", "add", netns);
  let server: Deno.ChildProcess | undefined;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    if (server) {
      try {
        server.kill("SIGTERM");
      } catch { /* already gone */ }
      await server.status;
    }
    await ip("netns", "del", netns).catch(() => {});
  };
  try {
    await makeBridgeAndTap(netns, { bridge, tap, gateway, ...opts });
    await Deno.writeTextFile(log, "");
    // A log file, not stderr: dnsmasq buffers its stderr log until it exits.
    server = new Deno.Command("ip", {
      args: [
        "netns",
        "exec",
        netns,
        dnsmasq,
        ...dnsmasqArgs(bridge, subnet, log, opts.leaseTime),
        ...ipv6Args(opts),
      ],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    await waitForLog(log, /started, version|DHCP, IP range/, 10_000, server);
  } catch (e) {
    await close();
    throw e;
  }
  const leases = async () => parseLeases(await Deno.readTextFile(log).catch(() => ""));
  return {
    netns,
    tap,
    bridge,
    gateway,
    log,
    leases,
    async waitForLease(o = {}) {
      const want = o.mac?.toLowerCase();
      const deadline = performance.now() + (o.timeoutMs ?? 120_000);
      while (performance.now() < deadline) {
        const hit = (await leases()).find((l) => !want || l.mac === want);
        if (hit) return hit;
        await new Promise((r) => setTimeout(r, 500));
      }
      throw new Error(
        `no DHCP lease${want ? ` for ${want}` : ""} in ${netns} after ${o.timeoutMs ?? 120_000} ms`,
      );
    },
    command: (cmd, args, options = {}) =>
      new Deno.Command("ip", { ...options, args: ["netns", "exec", netns, cmd, ...args] }),
    close,
  };
}

/** Inside `netns`: loopback up, the bridge with the gateway address (and IPv6 prefix), the tap on it. */
async function makeBridgeAndTap(
  netns: string,
  o: { bridge: string; tap: string; gateway: string; ipv6Prefix?: string; dhcp6Prefix?: string },
): Promise<void> {
  const n = (...args: string[]) => ip("-n", netns, ...args);
  await n("link", "set", "lo", "up");
  await n("link", "add", o.bridge, "type", "bridge", "forward_delay", "0");
  await n("addr", "add", `${o.gateway}/24`, "dev", o.bridge);
  for (const prefix of [o.ipv6Prefix, o.dhcp6Prefix]) {
    if (prefix) await n("addr", "add", `${prefix}1/64`, "dev", o.bridge, "nodad");
  }
  await n("link", "set", o.bridge, "up");
  await n("tuntap", "add", "dev", o.tap, "mode", "tap");
  await n("link", "set", o.tap, "master", o.bridge);
  await n("link", "set", o.tap, "up");
}

/** dnsmasq as a DHCP server only (no DNS port, no lease file), logging to `log`. */
function dnsmasqArgs(bridge: string, subnet: string, log: string, leaseTime = "10m"): string[] {
  return [
    "--keep-in-foreground",
    "--conf-file=/dev/null",
    "--port=0",
    `--interface=${bridge}`,
    "--bind-interfaces",
    "--user=root",
    "--group=root",
    `--dhcp-range=${subnet}.50,${subnet}.99,255.255.255.0,${leaseTime}`,
    `--dhcp-option=option:router,${subnet}.1`,
    "--dhcp-leasefile=/dev/null",
    "--pid-file=",
    "--log-dhcp",
    `--log-facility=${log}`,
  ];
}

/**
 * dnsmasq's IPv6 arguments: router advertisements for the SLAAC prefix and,
 * with `dhcp6Prefix`, a stateful range and its DNS server (option 23).
 * @throws RangeError for `dhcp6Prefix` without `ipv6Prefix`.
 */
export function ipv6Args(o: { ipv6Prefix?: string; dhcp6Prefix?: string }): string[] {
  if (!o.ipv6Prefix) {
    if (o.dhcp6Prefix) throw new RangeError(`dhcp6Prefix "${o.dhcp6Prefix}" needs ipv6Prefix`);
    return [];
  }
  const ra = ["--enable-ra", `--dhcp-range=${o.ipv6Prefix},ra-only,64,10m`, "--ra-param=*,10"];
  if (!o.dhcp6Prefix) return ra;
  return [
    ...ra,
    `--dhcp-range=${o.dhcp6Prefix}100,${o.dhcp6Prefix}1ff,64,10m`,
    `--dhcp-option=option6:dns-server,[${o.ipv6Prefix}1]`,
  ];
}

/** `DHCPACK(br0) 10.99.0.57 52:54:00:12:34:56 host` lines, in order. */
export function parseLeases(log: string): TapLease[] {
  const out: TapLease[] = [];
  for (const m of log.matchAll(/DHCPACK\([^)]*\) (\d+\.\d+\.\d+\.\d+) ([0-9a-f:]{17})/gi)) {
    out.push({ address: m[1], mac: m[2].toLowerCase() });
  }
  return out;
}

async function waitForLog(
  path: string,
  pattern: RegExp,
  timeoutMs: number,
  proc: Deno.ChildProcess,
): Promise<void> {
  let exited: string | undefined;
  const stderr = new Response(proc.stderr).text().catch(() => "");
  proc.status.then(async () => (exited = await stderr));
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const text = await Deno.readTextFile(path).catch(() => "");
    if (pattern.test(text)) return;
    if (exited !== undefined) throw new Error(`dnsmasq exited: ${exited}${text}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`dnsmasq did not start within ${timeoutMs} ms`);
}

async function ip(...args: string[]): Promise<void> {
  const out = await new Deno.Command("ip", { args, stdout: "null", stderr: "piped" }).output();
  if (!out.success) {
    throw new CommandError("ip", args, out.code, new TextDecoder().decode(out.stderr));
  }
}

function isFile(p: string): boolean {
  try {
    return Deno.statSync(p).isFile;
  } catch {
    return false;
  }
}
