/**
 * The edge's accept queue through the real machined-edge: a burst of
 * connections it has not accepted yet (the process stopped) all complete in
 * the kernel, so none waits for its SYN to be resent (1 s, then 2 s) — what
 * made the certificate client of issue 25's handshake flood take up to 3.9 s
 * with tokio's default backlog of 128 (native-ops/edge/src/listen.rs).
 */
import { equal } from "node:assert/strict";
import net from "node:net";
import { edgeBinaryBuilt } from "./testing.ts";
import { version, withEdge } from "../testing_budgets.ts";

/** Far more than tokio's default backlog (128), less than machined-edge's (4096). */
const BURST = 2000;

function somaxconn(): number {
  try {
    return Number(Deno.readTextFileSync("/proc/sys/net/core/somaxconn").trim());
  } catch {
    return 0;
  }
}

/** A TCP connection to `port` that completes within `ms`, or a rejection saying which. */
function connectWithin(port: number, ms: number, i: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`connection ${i} of ${BURST} not queued within ${ms} ms (SYN dropped)`));
    }, ms);
    socket.once("connect", () => (clearTimeout(timer), resolve(socket)));
    socket.once("error", (e) => (clearTimeout(timer), reject(e)));
  });
}

Deno.test({
  name:
    `edge accept queue: ${BURST} connections the edge has not accepted yet all complete at once; then a certificate client is served (needs the edge binary)`,
  // The kernel caps every listen backlog at net.core.somaxconn (4096 by default since Linux 5.4).
  ignore: !edgeBinaryBuilt() || somaxconn() <= BURST,
}, async () => {
  await withEdge({}, async (f, edge) => {
    const sockets: net.Socket[] = [];
    Deno.kill(edge.pid, "SIGSTOP"); // accepts nothing: every connection waits in the queue
    try {
      for (let i = 0; i < BURST; i++) sockets.push(await connectWithin(edge.port, 500, i));
    } finally {
      Deno.kill(edge.pid, "SIGCONT");
      sockets.forEach((s) => s.destroy());
    }
    equal(sockets.length, BURST);
    const r = await version(f, edge.port);
    equal(r.status, "0", r.message);
  });
});
