/**
 * The slow-handshake attackers of bench/attack_handshakes.ts, in a process of
 * their own, as an attacker is: `deno run -A bench/attack_slow_pool.ts <port>
 * <total>` keeps `total` TCP connections to the edge from 16 loopback source
 * addresses (127.0.0.2–127.0.0.17), each sending a ClientHello's first bytes
 * and then nothing; one the edge closes is reopened after 100 ms. When its
 * stdin closes it prints its counts as one JSON line and exits. Why a process
 * of its own: in the probe's process, its ~15 000 connections a second
 * starved the probe's own TLS client, whose handshake then stalled for up to
 * 5 s while the edge and a client in another process were served in
 * milliseconds (docs/decisions.md, "The edge's listen backlog (issue 25)").
 */
import net from "node:net";

/** The attackers' source addresses: 16 of them, none the probe's 127.0.0.1. */
export const ATTACK_SOURCES = Array.from({ length: 16 }, (_, i) => `127.0.0.${i + 2}`);

/** A TLS record header for a 512-byte handshake, then a ClientHello's first bytes: never finished. */
const PARTIAL_HELLO = new Uint8Array([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03]);

/** What the attackers saw. */
export interface SlowCounts {
  connected: number;
  connectErrors: number;
  /** Closed by the edge while we held them. */
  closedByEdge: number;
  /** Open right now. */
  open: number;
  peakOpen: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Keeps `total` slow handshakes open from {@link ATTACK_SOURCES} until `stop()`. */
export function slowPool(port: number, total: number) {
  const c: SlowCounts = { connected: 0, connectErrors: 0, closedByEdge: 0, open: 0, peakOpen: 0 };
  const sockets = new Set<net.Socket>();
  let stopping = false;
  const open = (localAddress: string) => {
    if (stopping) return;
    const s = net.connect({ host: "127.0.0.1", port, localAddress });
    sockets.add(s);
    let connected = false;
    s.on("connect", () => {
      connected = true;
      c.connected++;
      c.peakOpen = Math.max(c.peakOpen, ++c.open);
      s.write(PARTIAL_HELLO);
    });
    s.on("data", () => {}); // an alert, if any: read and ignored
    s.on("error", () => {
      if (!connected) c.connectErrors++;
    });
    s.on("close", () => {
      sockets.delete(s);
      if (connected) c.open--;
      if (stopping) return;
      if (connected) c.closedByEdge++;
      setTimeout(() => open(localAddress), 100);
    });
  };
  const ramp = (async () => {
    for (let i = 0; i < total && !stopping; i++) {
      open(ATTACK_SOURCES[i % ATTACK_SOURCES.length]);
      if (i % 128 === 127) await sleep(20); // under the listen backlog
    }
  })();
  return {
    counts: c,
    /** Stops reopening and closes every connection; resolves to the counts before the close. */
    async stop(): Promise<SlowCounts> {
      stopping = true;
      await ramp;
      const held = { ...c };
      for (const s of sockets) s.destroy();
      await sleep(200);
      return held;
    },
  };
}

/** Runs {@link slowPool} in a child process until `stop()`, which resolves to its counts. */
export function slowPoolProcess(port: number, total: number) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL(import.meta.url).pathname, String(port), String(total)],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  return {
    pid: child.pid,
    async stop(): Promise<SlowCounts> {
      await child.stdin.close();
      const out = await child.output();
      const line = new TextDecoder().decode(out.stdout).trim().split("\n").at(-1) ?? "";
      if (!out.success || !line.startsWith("{")) {
        throw new Error(`the slow-handshake process failed (${out.code}): ${line}`);
      }
      return JSON.parse(line) as SlowCounts;
    },
  };
}

if (import.meta.main) {
  const [port, total] = Deno.args.map(Number);
  const pool = slowPool(port, total);
  for await (const _ of Deno.stdin.readable) { /* until the parent closes it */ }
  console.log(JSON.stringify(await pool.stop()));
  Deno.exit(0);
}
