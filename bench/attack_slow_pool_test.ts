import { equal, ok } from "node:assert/strict";
import net from "node:net";
import { ATTACK_SOURCES, slowPoolProcess } from "./attack_slow_pool.ts";

Deno.test("slowPoolProcess: holds its connections from 16 sources in a child, reopens what is closed, reports its counts", async () => {
  const sources = new Set<string>();
  let hellos = 0;
  let closeNext = 4; // the first few are closed by the "edge", as its budget would
  const server = net.createServer((s) => {
    sources.add(s.remoteAddress ?? "");
    s.once("data", (d: Uint8Array) => {
      if (d[0] === 0x16) hellos++;
      if (closeNext-- > 0) s.destroy();
    });
    s.on("error", () => {});
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as net.AddressInfo).port;
  const pool = slowPoolProcess(port, 32);
  ok(pool.pid > 0);
  const deadline = Date.now() + 10_000;
  while (hellos < 36 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const counts = await pool.stop();
  await new Promise<void>((r) => server.close(() => r()));
  equal(counts.closedByEdge, 4);
  equal(counts.connected, 36, "32, and the 4 closed reopened");
  equal(counts.open, 32);
  equal(counts.connectErrors, 0);
  equal(hellos, 36);
  equal(sources.size, ATTACK_SOURCES.length, [...sources].join(" "));
});
