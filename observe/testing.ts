/**
 * A /proc for tests: a small node (two CPUs, one disk, two links) with
 * machined (pid 1), apid, containerd with a shim and a payload process.
 * @module
 */
import { FakeProcBackend } from "../platform/procfs/mod.ts";

/** Sample /proc files, as a 6.x kernel writes them. */
export const SAMPLE_PROC_FILES: Readonly<Record<string, string>> = {
  meminfo: "MemTotal:        2000000 kB\nMemFree:          500000 kB\n" +
    "MemAvailable:    1500000 kB\nBuffers:           10000 kB\nCached:           400000 kB\n" +
    "Shmem:              1000 kB\nSwapTotal:             0 kB\nSwapFree:              0 kB\n" +
    "HugePages_Total:       0\n",
  stat: "cpu  1000 0 500 8000 100 0 10 0 0 0\ncpu0 500 0 250 4000 50 0 5 0 0 0\n" +
    "cpu1 500 0 250 4000 50 0 5 0 0 0\nintr 1 2 3\nctxt 123456\nbtime 1700000000\n" +
    "processes 4321\nprocs_running 2\nprocs_blocked 0\n",
  loadavg: "0.50 0.25 0.10 2/180 4321\n",
  uptime: "1234.56 2000.00\n",
  diskstats: "   8       0 vda 100 0 2048 50 200 0 4096 80 0 120 130 0 0 0 0\n",
  "net/dev": "Inter-|   Receive                                                |  Transmit\n" +
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n" +
    "    lo:    1000      10    0    0    0     0          0         0     1000      10    0    0    0     0       0          0\n" +
    "  eth0:  500000     400    1    2    0     0          0         0   250000     300    0    1    0     0       0          0\n",
};

/** The pids of {@link seededProc}'s processes. */
export const SAMPLE_PIDS = {
  machined: 1,
  apid: 20,
  containerd: 30,
  shim: 31,
  payload: 40,
} as const;

/** A FakeProcBackend holding {@link SAMPLE_PROC_FILES} and the sample processes. */
export function seededProc(): FakeProcBackend {
  const proc = new FakeProcBackend();
  for (const [path, text] of Object.entries(SAMPLE_PROC_FILES)) proc.setFile(path, text);
  const p = SAMPLE_PIDS;
  proc.addProcess({
    pid: p.machined,
    comm: "machined",
    argv: ["/sbin/init"],
    rssKb: 80000,
    pssKb: 70000,
    utime: 300,
    stime: 100,
    threads: 8,
  });
  proc.addProcess({ pid: 2, comm: "kthreadd", state: "S" });
  proc.addProcess({
    pid: p.apid,
    ppid: 1,
    comm: "deno",
    argv: ["deno", "run", "apid"],
    rssKb: 60000,
    pssKb: 50000,
    uid: 50000,
  });
  proc.addProcess({
    pid: p.containerd,
    ppid: 1,
    comm: "containerd",
    argv: ["/bin/containerd"],
    rssKb: 40000,
    pssKb: 36000,
    cgroup: "/machined/containerd",
    threads: 12,
  });
  proc.addProcess({
    pid: p.shim,
    ppid: 1,
    comm: "containerd-shim",
    argv: ["containerd-shim-runc-v2"],
    rssKb: 8000,
    pssKb: 6000,
    cgroup: "/machined/containerd",
  });
  proc.addProcess({
    pid: p.payload,
    ppid: 1,
    comm: "payload",
    argv: ["/bin/payload", "--token=s3cret"],
    rssKb: 12000,
    cgroup: "/machined/payload",
  });
  proc.addProcess({ pid: 99, ppid: 1, comm: "stray", rssKb: 4 });
  return proc;
}
