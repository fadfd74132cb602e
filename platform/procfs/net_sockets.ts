/**
 * Open sockets from /proc/net/{tcp,tcp6,udp,udp6}, and the process holding
 * each, found by its inode among the `socket:[N]` links of /proc/PID/fd.
 * Another user's fds are only readable as root: without it such sockets show
 * no process.
 * @module
 */
import { isProcDenied, isProcGone, type ProcBackend } from "./backend.ts";
import { listPids, mapConcurrent } from "./process.ts";

/** The socket tables read, in order. */
export const SOCKET_PROTOCOLS = ["tcp", "tcp6", "udp", "udp6"] as const;
/** One of {@link SOCKET_PROTOCOLS}. */
export type SocketProtocol = typeof SOCKET_PROTOCOLS[number];

/** One socket. */
export interface SocketInfo {
  readonly protocol: SocketProtocol;
  readonly localAddress: string;
  readonly localPort: number;
  readonly remoteAddress: string;
  readonly remotePort: number;
  readonly state: string;
  readonly txQueue: number;
  readonly rxQueue: number;
  readonly uid: number;
  readonly inode: number;
}

/** The kernel's TCP states by number (include/net/tcp_states.h). */
const TCP_STATES = [
  "",
  "ESTABLISHED",
  "SYN_SENT",
  "SYN_RECV",
  "FIN_WAIT1",
  "FIN_WAIT2",
  "TIME_WAIT",
  "CLOSE",
  "CLOSE_WAIT",
  "LAST_ACK",
  "LISTEN",
  "CLOSING",
  "NEW_SYN_RECV",
];

/**
 * A /proc/net address (`0100007F:1F90`, or 32 hex digits for IPv6) as text
 * and port. The kernel prints each 32-bit word in host (little-endian) order.
 * Pure. @throws RangeError when malformed.
 */
export function parseProcNetAddress(text: string): { address: string; port: number } {
  const [hex, portHex] = text.split(":");
  if (!portHex || (hex.length !== 8 && hex.length !== 32) || !/^[0-9A-Fa-f]+$/.test(hex)) {
    throw new RangeError(`Invalid /proc/net address "${text}"`);
  }
  const bytes: number[] = [];
  for (let w = 0; w < hex.length; w += 8) {
    const word = hex.slice(w, w + 8);
    for (let b = 6; b >= 0; b -= 2) bytes.push(parseInt(word.slice(b, b + 2), 16));
  }
  const port = parseInt(portHex, 16);
  if (bytes.length === 4) return { address: bytes.join("."), port };
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] << 8) | bytes[i + 1]).toString(16));
  return { address: compressIpv6(groups), port };
}

/** `0:0:0:0:0:0:0:1` → `::1` (the longest run of zero groups). Pure. */
function compressIpv6(groups: string[]): string {
  let best = { at: -1, len: 0 };
  for (let i = 0; i < 8;) {
    if (groups[i] !== "0") {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === "0") j++;
    if (j - i > best.len && j - i > 1) best = { at: i, len: j - i };
    i = j;
  }
  if (best.at < 0) return groups.join(":");
  const head = groups.slice(0, best.at).join(":");
  const tail = groups.slice(best.at + best.len).join(":");
  // IPv4-mapped: ::ffff:a.b.c.d
  if (head === "" && tail.startsWith("ffff:") && groups.length - best.len === 3) {
    const v4 = groups.slice(6).flatMap((g) => {
      const n = parseInt(g, 16);
      return [n >> 8, n & 255];
    });
    return `::ffff:${v4.join(".")}`;
  }
  return `${head}::${tail}`;
}

/** Parses one /proc/net/{tcp,udp}[6] table; malformed lines are skipped. Pure. */
export function parseSocketTable(protocol: SocketProtocol, text: string): SocketInfo[] {
  const out: SocketInfo[] = [];
  for (const line of text.split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10) continue;
    try {
      const local = parseProcNetAddress(f[1]);
      const remote = parseProcNetAddress(f[2]);
      const [tx, rx] = f[4].split(":").map((h) => parseInt(h, 16));
      const st = parseInt(f[3], 16);
      out.push({
        protocol,
        localAddress: local.address,
        localPort: local.port,
        remoteAddress: remote.address,
        remotePort: remote.port,
        state: TCP_STATES[st] ?? String(st),
        txQueue: tx,
        rxQueue: rx,
        uid: Number(f[7]),
        inode: Number(f[9]),
      });
    } catch (e) {
      if (!(e instanceof RangeError)) throw e;
    }
  }
  return out;
}

/** Every socket of the four tables (a missing table, e.g. no IPv6, is empty). @throws ProcError */
export async function readSockets(proc: ProcBackend): Promise<SocketInfo[]> {
  const out: SocketInfo[] = [];
  for (const protocol of SOCKET_PROTOCOLS) {
    try {
      out.push(...parseSocketTable(protocol, await proc.readText(`net/${protocol}`)));
    } catch (e) {
      if (!isProcGone(e)) throw e;
    }
  }
  return out;
}

/**
 * Socket inode → pid, from every readable /proc/PID/fd (the first holder
 * wins for a socket shared across a fork). Unreadable fds are skipped.
 */
export async function socketOwners(proc: ProcBackend): Promise<Map<number, number>> {
  const perPid = await mapConcurrent(await listPids(proc), async (pid) => {
    const inodes: number[] = [];
    let fds: string[];
    try {
      fds = await proc.list(`${pid}/fd`);
    } catch (e) {
      if (isProcGone(e) || isProcDenied(e)) return { pid, inodes };
      throw e;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(await proc.readLink(`${pid}/fd/${fd}`));
        if (m) inodes.push(Number(m[1]));
      } catch (e) {
        if (!isProcGone(e) && !isProcDenied(e)) throw e;
      }
    }
    return { pid, inodes };
  });
  const owners = new Map<number, number>();
  for (const { pid, inodes } of perPid) {
    for (const inode of inodes) if (!owners.has(inode)) owners.set(inode, pid);
  }
  return owners;
}
