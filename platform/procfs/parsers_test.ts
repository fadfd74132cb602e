import { deepEqual, equal, throws } from "node:assert/strict";
import { parseMeminfo } from "./meminfo.ts";
import { parseCgroupV2, parseStat } from "./process.ts";
import { cpuUsagePercent, parseKernelStat, parseLoadavg, parseNetDev } from "./system_stats.ts";
import { parseProcNetAddress, parseSocketTable } from "./net_sockets.ts";
import { parseFlatKeyed, parseLimit } from "./cgroup_stats.ts";

Deno.test("stat: a comm with spaces and parentheses", () => {
  const s = parseStat("42 (my (odd) proc) S 1 42 42 0 -1 0 0 0 0 0 150 50 0 0 20 0 3 0 999 0 0")!;
  equal(s.comm, "my (odd) proc");
  equal(s.state, "S");
  equal(s.ppid, 1);
  equal(s.utime + s.stime, 200);
  equal(s.threads, 3);
  equal(s.startTicks, 999);
  equal(parseStat("garbage"), undefined);
});

Deno.test("meminfo: kB lines in bytes, unitless lines as counts", () => {
  const m = parseMeminfo("MemTotal: 1024 kB\nHugePages_Total:       4\nbroken line\n");
  equal(m.totalBytes, 1024 * 1024);
  equal(m.fields.HugePages_Total, 4);
  equal(m.availableBytes, 0);
});

Deno.test("cgroup: the v2 line wins; none without it", () => {
  equal(parseCgroupV2("12:memory:/x\n0::/machined/web\n"), "/machined/web");
  equal(parseCgroupV2("12:memory:/x\n"), "");
});

Deno.test("/proc/stat, loadavg and net/dev", () => {
  const s = parseKernelStat("cpu 100 0 100 800 0 0 0 0\ncpu0 100 0 100 800 0 0 0 0\nctxt 5\n");
  equal(s.total.user, 1);
  equal(s.cpus.length, 1);
  equal(s.contextSwitches, 5);
  throws(() => parseKernelStat("intr 1\n"), RangeError);
  equal(cpuUsagePercent(s.total, s.total), 0);
  deepEqual(parseLoadavg("1.00 2.00 3.00 4/500 77\n"), {
    load1: 1,
    load5: 2,
    load15: 3,
    running: 4,
    total: 500,
  });
  equal(parseNetDev("h\nh\n eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n")[0].txBytes, 9);
});

Deno.test("/proc/net addresses: IPv4, IPv6, v4-mapped, and malformed", () => {
  deepEqual(parseProcNetAddress("0100007F:1F90"), { address: "127.0.0.1", port: 8080 });
  deepEqual(parseProcNetAddress("00000000000000000000000001000000:0016"), {
    address: "::1",
    port: 22,
  });
  equal(parseProcNetAddress("0000000000000000FFFF00000100007F:0050").address, "::ffff:127.0.0.1");
  equal(parseProcNetAddress("B80D0120000000000000000001000000:0050").address, "2001:db8::1");
  throws(() => parseProcNetAddress("zz:1"), RangeError);
});

Deno.test("socket tables: a malformed line is skipped, states are named", () => {
  const rows = parseSocketTable(
    "tcp",
    "header\n 0: 0100007F:0050 00000000:0000 0A 00000000:00000000 00:0 0 1000 0 77 1\n bad\n",
  );
  equal(rows.length, 1);
  equal(rows[0].state, "LISTEN");
  equal(rows[0].uid, 1000);
  equal(rows[0].inode, 77);
});

Deno.test("cgroup files: flat-keyed and limits (`max` is none)", () => {
  deepEqual(parseFlatKeyed("oom 1\noom_kill 2\nbad\n"), { oom: 1, oom_kill: 2 });
  equal(parseLimit("max\n"), undefined);
  equal(parseLimit("4096\n"), 4096);
  equal(parseLimit(undefined), undefined);
});
