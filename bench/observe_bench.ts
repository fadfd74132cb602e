/**
 * The cost of the observability reports over a fake /proc of 100, 1000 and
 * 10000 processes (each with 4 sockets): Processes (with ownership) and
 * Netstat must grow linearly, so 10× the processes costs about 10× the time.
 */
import { Observer } from "../observe/mod.ts";
import { FakeProcBackend } from "../platform/procfs/mod.ts";
import { seededProc } from "../observe/testing.ts";
import type { Figure } from "./runtime_bench.ts";

/** A sample node plus `n` processes under the payload, each holding 4 TCP sockets. */
function procWith(n: number): FakeProcBackend {
  const proc = seededProc();
  const rows: string[] = ["  sl  local_address rem_address   st tx_queue rx_queue"];
  for (let i = 0; i < n; i++) {
    const pid = 1000 + i;
    const fds: Record<number, string> = {};
    for (let s = 0; s < 4; s++) {
      const inode = pid * 10 + s;
      fds[s + 3] = `socket:[${inode}]`;
      rows.push(
        `${rows.length}: 0100007F:${(1024 + s).toString(16).toUpperCase().padStart(4, "0")} ` +
          `00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 ${inode} 1 0`,
      );
    }
    proc.addProcess({ pid, ppid: 40, comm: "worker", argv: ["/bin/worker", `--id=${i}`], fds });
  }
  proc.setFile("net/tcp", rows.join("\n") + "\n");
  return proc;
}

async function timeIt(f: () => Promise<unknown>): Promise<number> {
  await f();
  const t = performance.now();
  await f();
  return +(performance.now() - t).toFixed(2);
}

/** Processes and Netstat at 1×, 10×, 100× (100, 1000, 10000 processes). */
export async function observeScaling(): Promise<Figure[]> {
  const out: Figure[] = [];
  for (const n of [100, 1000, 10_000]) {
    const o = new Observer({
      proc: procWith(n),
      services: () => [{ id: "payload", pid: 40 }],
      components: () => ({ machined: 1 }),
    });
    out.push({
      name: `observe.processes.${n}`,
      value: await timeIt(() => o.processReport()),
      unit: "ms",
    });
    out.push({ name: `observe.netstat.${n}`, value: await timeIt(() => o.sockets()), unit: "ms" });
  }
  return out;
}

if (import.meta.main) {
  for (const f of await observeScaling()) console.log(JSON.stringify(f));
}
