/**
 * The Observer over this machine's real /proc and /sys/fs/cgroup, read-only
 * and unprivileged-safe, as dev mode runs it: every report reads without an
 * error and finds this process as `machined`.
 */
import { equal, ok } from "node:assert/strict";
import { nativeFsUsage, NativeProcBackend } from "../platform/procfs/mod.ts";
import { Observer } from "./observer.ts";

Deno.test("observer on the real /proc: every report reads, and this process is machined", async () => {
  const observer = new Observer({
    proc: new NativeProcBackend(),
    cgroups: new NativeProcBackend("/sys/fs/cgroup"),
    fsUsage: nativeFsUsage,
    components: () => ({ machined: Deno.pid }),
  });
  const memory = await observer.memory();
  const self = memory.processes.find((p) => p.pid === Deno.pid);
  equal(self?.owner, "machined");
  ok(memory.meminfo.totalBytes > 0);
  const ps = await observer.processReport();
  ok(ps.processes.length > 1);
  ok((await observer.stats()).cpus.length >= 1);
  const mounts = await observer.mounts();
  const root = mounts.find((m) => m.target === "/");
  ok(root?.usage && root.usage.size > 0, "/ has a size");
  await observer.cgroups();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const port = (listener.addr as Deno.NetAddr).port;
    const mine = (await observer.sockets()).find((s) => s.localPort === port);
    equal(mine?.owner, "machined");
  } finally {
    listener.close();
  }
});
