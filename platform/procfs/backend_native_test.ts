/**
 * Smoke test of the parsers on this machine's real /proc (read-only, no
 * root needed): what the fake holds must be what the kernel writes.
 */
import { equal, ok, rejects } from "node:assert/strict";
import { NativeProcBackend } from "./backend_native.ts";
import { isProcGone } from "./backend.ts";
import { readMeminfo } from "./meminfo.ts";
import { readProcess, readProcesses } from "./process.ts";
import { readSystemStats } from "./system_stats.ts";
import { readSockets, socketOwners } from "./net_sockets.ts";
import { nativeFsUsage } from "./fs_usage.ts";

const proc = new NativeProcBackend();

Deno.test("real /proc: meminfo, this process and the system counters parse", async () => {
  const m = await readMeminfo(proc);
  ok(m.totalBytes > 0 && m.availableBytes > 0 && m.availableBytes <= m.totalBytes);
  const self = await readProcess(proc, Deno.pid);
  ok(self);
  equal(self.pid, Deno.pid);
  ok(self.rssBytes > 1024 * 1024, `rss ${self.rssBytes}`);
  ok(self.pssBytes! > 0, "smaps_rollup of our own process is readable");
  ok(self.threads >= 1);
  ok(self.argv.length > 0 && self.argv[0].includes("deno"), self.argv.join(" "));
  const all = await readProcesses(proc, { pss: false });
  ok(all.some((p) => p.pid === 1));
  const s = await readSystemStats(proc);
  ok(s.stat.cpus.length >= 1 && s.stat.total.user > 0);
  ok(s.uptimeSeconds > 0);
  ok(s.links.some((l) => l.link === "lo"));
});

Deno.test("real /proc: a missing pid is `gone`", async () => {
  equal(await readProcess(proc, 2 ** 22 + 7), undefined);
  await rejects(proc.readText("4194311/stat"), (e) => isProcGone(e));
});

Deno.test("real /proc: sockets of this machine, and a listener we open is ours", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const { port } = listener.addr as Deno.NetAddr;
    const sockets = await readSockets(proc);
    const mine = sockets.find((s) => s.protocol === "tcp" && s.localPort === port);
    ok(mine, `port ${port} listed`);
    equal(mine.state, "LISTEN");
    equal((await socketOwners(proc)).get(mine.inode), Deno.pid);
  } finally {
    listener.close();
  }
});

Deno.test("real statvfs through native-ops: / has a size", async () => {
  const u = await nativeFsUsage("/");
  ok(u.size > 0 && u.used <= u.size && u.available <= u.size, JSON.stringify(u));
  await rejects(nativeFsUsage("/nonexistent/x"), /ENOENT/);
});
