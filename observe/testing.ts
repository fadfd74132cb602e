/**
 * A /proc for tests: a small node (two CPUs, one disk, two links) with
 * machined (pid 1), apid, containerd with a shim and a payload process.
 * @module
 */
import { FakeProcBackend, type FsUsage } from "../platform/procfs/mod.ts";

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
  "self/mountinfo": "22 1 0:21 / / rw,relatime shared:1 - ext4 /dev/vda3 rw,errors=remount-ro\n" +
    "23 22 0:22 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:2 - cgroup2 cgroup2 rw\n" +
    "24 22 0:23 / /var/lib/my\\040data rw,relatime shared:3 - xfs /dev/vda5 rw,attr2\n",
  "self/cgroup": "0::/machined.slice\n",
  "net/tcp":
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
    "   0: 00000000:C350 00000000:0000 0A 00000000:00000000 00:00000000 00000000 50000        0 1001 1 0 100 0 0 10 0\n" +
    "   1: 0100007F:C350 0200007F:9C40 01 00000010:00000020 00:00000000 00000000 50000        0 1002 1 0 20 4 30 10 -1\n",
  "net/tcp6":
    "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
    "   0: 00000000000000000000000001000000:0050 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2001 1 0 100 0 0 10 0\n",
  "net/udp":
    "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n" +
    "  5: 00000000:0044 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 3001 2 0 0\n",
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
    fds: { 0: "/dev/null", 5: "socket:[1001]", 6: "socket:[1002]" },
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
    fds: { 3: "socket:[2001]" },
    rssKb: 12000,
    cgroup: "/machined/payload",
  });
  proc.addProcess({ pid: 99, ppid: 1, comm: "stray", rssKb: 4 });
  return proc;
}

/** A /sys/fs/cgroup with machined's root cgroup and the two sample services' cgroups. */
export function seededCgroups(): FakeProcBackend {
  const cg = new FakeProcBackend("/sys/fs/cgroup");
  const write = (path: string, files: Record<string, string>) => {
    for (const [f, text] of Object.entries(files)) {
      cg.setFile(path === "" ? f : `${path}/${f}`, text);
    }
  };
  write("", { "cgroup.procs": "\n" });
  write("machined.slice", {
    "cgroup.procs": "1\n",
    "memory.current": "83886080\n",
    "cpu.stat": "usage_usec 9000000\nuser_usec 6000000\n",
  });
  write("machined/containerd", {
    "cgroup.procs": "30\n31\n",
    "memory.current": "50331648\n",
    "memory.max": "max\n",
    "memory.events": "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n",
    "cpu.stat": "usage_usec 1200000\nuser_usec 800000\nsystem_usec 400000\nnr_throttled 0\n",
    "pids.current": "14\n",
    "pids.max": "max\n",
  });
  write("machined/payload", {
    "cgroup.procs": "40\n",
    "memory.current": "12582912\n",
    "memory.max": "268435456\n",
    "memory.events": "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n",
    "cpu.stat": "usage_usec 500000\n",
    "pids.current": "1\n",
    "pids.max": "64\n",
  });
  return cg;
}

/** A statvfs stand-in: / is 10 GiB, a quarter used; anything else cannot be measured. */
export function fakeFsUsage(target: string): Promise<FsUsage> {
  if (target !== "/") return Promise.reject(new Error(`statvfs(${target}) failed: EACCES`));
  const size = 10 * 2 ** 30;
  return Promise.resolve({ size, used: size / 4, available: (size * 3) / 4 - 2 ** 20 });
}
