import { deepEqual, equal, ok } from "node:assert/strict";
import { Observer } from "./observer.ts";
import { SAMPLE_PIDS, seededCgroups, seededProc } from "./testing.ts";

const services = [
  { id: "containerd", pid: SAMPLE_PIDS.containerd },
  { id: "payload", pid: SAMPLE_PIDS.payload },
];

function observer(now = () => 0) {
  const proc = seededProc();
  const o = new Observer({
    proc,
    services: () => services,
    components: () => ({ machined: SAMPLE_PIDS.machined, apid: SAMPLE_PIDS.apid }),
    now: () => now(),
  });
  return { proc, o };
}

Deno.test("memory: meminfo in bytes and the processes of machined, apid and each service", async () => {
  const { o } = observer();
  const m = await o.memory();
  equal(m.meminfo.totalBytes, 2000000 * 1024);
  equal(m.meminfo.availableBytes, 1500000 * 1024);
  equal(m.meminfo.fields.HugePages_Total, 0);
  deepEqual(m.processes.map((p) => `${p.owner}:${p.pid}`), [
    "apid:20",
    "containerd:30",
    "containerd:31",
    "machined:1",
    "payload:40",
  ]);
  const machined = m.processes.find((p) => p.owner === "machined")!;
  equal(machined.rssBytes, 80000 * 1024);
  equal(machined.pssBytes, 70000 * 1024);
  // The payload's smaps_rollup is not readable: PSS unknown, not 0.
  equal(m.processes.find((p) => p.owner === "payload")!.pssBytes, undefined);
  deepEqual(m.owners.find((s) => s.owner === "containerd"), {
    owner: "containerd",
    processes: 2,
    rssBytes: 48000 * 1024,
    pssBytes: 42000 * 1024,
  });
});

Deno.test("processes: without service cgroups a service's children are found by descent", async () => {
  const { proc, o } = observer();
  proc.addProcess({ pid: 50, ppid: SAMPLE_PIDS.payload, comm: "worker" });
  proc.addProcess({ pid: 51, ppid: 50, comm: "grandchild" });
  const owners = new Map((await o.processes()).map((p) => [p.pid, p.owner]));
  equal(owners.get(50), "payload");
  equal(owners.get(51), "payload");
  equal(owners.get(99), "", "a process of no component");
  equal(owners.get(2), "", "a kernel thread");
});

Deno.test("processes: a process that exits between the listing and the read is left out", async () => {
  const { proc, o } = observer();
  proc.setFile("77/cmdline", ""); // listed, but its stat is gone
  ok(!(await o.processes()).some((p) => p.pid === 77));
});

Deno.test("stats: CPU usage is unset on the first call, then relative to the previous sample", async () => {
  let t = 0;
  const { proc, o } = observer(() => t);
  const first = await o.stats();
  equal(first.cpuTotal.usagePercent, undefined);
  equal(first.sampleIntervalMs, undefined);
  equal(first.cpus.length, 2);
  equal(first.load.load1, 0.5);
  equal(first.uptimeSeconds, 1234.56);
  deepEqual(first.disks[0], {
    device: "vda",
    reads: 100,
    readBytes: 2048 * 512,
    writes: 200,
    writtenBytes: 4096 * 512,
    inFlight: 0,
    ioMs: 120,
  });
  equal(first.links.find((l) => l.link === "eth0")!.rxBytes, 500000);
  equal(first.contextSwitches, 123456);
  // cpu0 busy 100 of 200 ticks, cpu1 idle for 200 ticks.
  proc.setFile(
    "stat",
    "cpu  1100 0 500 8300 100 0 10 0 0 0\ncpu0 600 0 250 4100 50 0 5 0 0 0\n" +
      "cpu1 500 0 250 4200 50 0 5 0 0 0\nctxt 1\nprocesses 1\nprocs_running 1\nprocs_blocked 0\n",
  );
  t = 2000;
  const second = await o.stats();
  equal(second.sampleIntervalMs, 2000);
  equal(second.cpus[0].usagePercent, 50);
  equal(second.cpus[1].usagePercent, 0);
  equal(second.cpuTotal.usagePercent, 25);
});

Deno.test("processes: CPU share from the previous sample; a reused pid starts over", async () => {
  let t = 0;
  const { proc, o } = observer(() => t);
  const first = await o.processReport();
  equal(first.sampleIntervalMs, undefined);
  equal(first.processes.find((p) => p.pid === 1)!.cpuPercent, undefined);
  // machined used 1 s of CPU (100 ticks) in 2 s; pid 99 exited and its pid was reused.
  proc.addProcess({ pid: 1, comm: "machined", utime: 400, stime: 100 });
  proc.addProcess({ pid: 99, ppid: 1, comm: "new", startTicks: 500, utime: 50 });
  t = 2000;
  const second = await o.processReport();
  equal(second.sampleIntervalMs, 2000);
  equal(second.processes.find((p) => p.pid === 1)!.cpuPercent, 50);
  equal(second.processes.find((p) => p.pid === 99)!.cpuPercent, undefined);
  equal(second.processes.find((p) => p.pid === 30)!.cpuPercent, 0);
});

Deno.test("cgroups: a component's own cgroup (the edge's) is listed beside the services'", async () => {
  const cgroups = seededCgroups();
  for (
    const [f, text] of Object.entries({
      "cgroup.procs": "20\n",
      "memory.current": "9437184\n",
      "memory.max": "67108864\n",
      "memory.events": "low 0\nhigh 0\nmax 0\noom 0\noom_kill 2\n",
    })
  ) cgroups.setFile(`system/apid/${f}`, text);
  const o = new Observer({
    proc: seededProc(),
    services: () => services,
    cgroups,
    componentCgroups: () => ({ apid: "/system/apid", gone: "system/none" }),
  });
  const all = await o.cgroups();
  deepEqual(all.map((c) => c.owner), ["apid", "containerd", "machined", "payload"]);
  const apid = all.find((c) => c.owner === "apid")!;
  equal(apid.path, "system/apid");
  equal(apid.memoryCurrentBytes, 9437184);
  equal(apid.memoryMaxBytes, 67108864);
  equal(apid.memoryEvents.oom_kill, 2);
});
