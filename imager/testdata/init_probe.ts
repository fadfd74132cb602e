/**
 * A stand-in PID 1 for testing the imager without machined. It mounts the
 * kernel filesystems, loads the modules listed in /etc/machined/modules,
 * gives the first NIC QEMU user-networking's fixed address (10.0.2.15/24),
 * serves a one-line banner on TCP port 50000, prints a marker line with its
 * pid and timings to the console, and then waits forever (PID 1 must never
 * exit). It calls libc through Deno FFI because it may not use native-ops.
 */

const t0 = performance.now();
const MARKER = "INIT_PROBE_READY";
const PORT = 50000;
const ADDRESS = [10, 0, 2, 15];
const NETMASK = [255, 255, 255, 0];

const libc = Deno.dlopen("libc.so.6", {
  mount: { parameters: ["buffer", "buffer", "buffer", "u64", "pointer"], result: "i32" },
  open: { parameters: ["buffer", "i32"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
  syscall: { parameters: ["i64", "i64", "buffer", "i64"], result: "i64" },
  socket: { parameters: ["i32", "i32", "i32"], result: "i32" },
  ioctl: { parameters: ["i32", "u64", "buffer"], result: "i32" },
  __errno_location: { parameters: [], result: "pointer" },
});

function cstr(s: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(s + "\0");
}

function errno(): number {
  const p = libc.symbols.__errno_location();
  return p ? new Deno.UnsafePointerView(p).getInt32() : -1;
}

function check(what: string, rc: number | bigint, allowed: number[] = []): void {
  if (Number(rc) >= 0) return;
  const e = errno();
  if (!allowed.includes(e)) throw new Error(`${what} failed: errno ${e}`);
}

function mount(source: string, target: string, fstype: string): void {
  const rc = libc.symbols.mount(cstr(source), cstr(target), cstr(fstype), 0n, null);
  check(`mount ${fstype} on ${target}`, rc, [16 /* EBUSY: already mounted */]);
}

function loadModules(): number {
  const SYS_finit_module = 313n;
  const EEXIST = 17;
  let text = "";
  try {
    text = Deno.readTextFileSync("/etc/machined/modules");
  } catch {
    return 0;
  }
  const paths = text.split("\n").filter((l) => l.startsWith("/"));
  for (const path of paths) {
    const fd = libc.symbols.open(cstr(path), 0o2000000 /* O_CLOEXEC */);
    check(`open ${path}`, fd);
    const rc = libc.symbols.syscall(SYS_finit_module, BigInt(fd), cstr(""), 0n);
    libc.symbols.close(fd);
    check(`finit_module ${path}`, rc, [EEXIST]);
  }
  return paths.length;
}

function ifreq(name: string, addr?: number[]): Uint8Array<ArrayBuffer> {
  const req = new Uint8Array(40);
  req.set(new TextEncoder().encode(name), 0);
  if (addr) {
    req[16] = 2; // AF_INET, little-endian u16
    req.set(addr, 20);
  }
  return req;
}

function configureLink(fd: number, name: string, addr?: number[], mask?: number[]): void {
  const SIOCSIFADDR = 0x8916n, SIOCSIFNETMASK = 0x891cn;
  const SIOCGIFFLAGS = 0x8913n, SIOCSIFFLAGS = 0x8914n;
  if (addr && mask) {
    check(`set address of ${name}`, libc.symbols.ioctl(fd, SIOCSIFADDR, ifreq(name, addr)));
    check(`set netmask of ${name}`, libc.symbols.ioctl(fd, SIOCSIFNETMASK, ifreq(name, mask)));
  }
  const flags = ifreq(name);
  check(`get flags of ${name}`, libc.symbols.ioctl(fd, SIOCGIFFLAGS, flags));
  flags[16] |= 0x1 | 0x40; // IFF_UP | IFF_RUNNING
  check(`set flags of ${name}`, libc.symbols.ioctl(fd, SIOCSIFFLAGS, flags));
}

function configureNetwork(): string | undefined {
  const links = [...Deno.readDirSync("/sys/class/net")].map((e) => e.name).sort();
  const nic = links.find((l) => l !== "lo");
  const fd = libc.symbols.socket(2, /* AF_INET */ 2, /* SOCK_DGRAM */ 0);
  check("socket", fd);
  try {
    configureLink(fd, "lo");
    if (nic) configureLink(fd, nic, ADDRESS, NETMASK);
  } finally {
    libc.symbols.close(fd);
  }
  return nic;
}

async function serve(listener: Deno.TcpListener): Promise<void> {
  for await (const conn of listener) {
    const banner = `machined-probe pid=${Deno.pid}\n`;
    conn.write(new TextEncoder().encode(banner)).finally(() => conn.close());
  }
}

function uptime(): string {
  return Deno.readTextFileSync("/proc/uptime").split(" ")[0];
}

try {
  mount("proc", "/proc", "proc");
  mount("sysfs", "/sys", "sysfs");
  mount("devtmpfs", "/dev", "devtmpfs");
  const startedAt = uptime();
  const modules = loadModules();
  const nic = configureNetwork();
  const listener = Deno.listen({ hostname: "0.0.0.0", port: PORT });
  console.log(
    `${MARKER} pid=${Deno.pid} uptime=${uptime()} deno_start_ms=${t0.toFixed(0)} ` +
      `uptime_at_main=${startedAt} modules=${modules} nic=${nic ?? "none"} port=${PORT}`,
  );
  await serve(listener);
} catch (e) {
  console.error(`INIT_PROBE_FAILED ${e instanceof Error ? e.stack : e}`);
}
// PID 1 must not exit: the kernel would panic. Park forever.
setInterval(() => {}, 1 << 30);
