// Shipped verbatim as /machined/pid1.js, the script Deno runs as PID 1.
// Deno 2.9.3 panics ("no /proc/self/exe available. Is /proc mounted?") as soon
// as a program touches its Node compatibility layer (any node: import) while
// /proc is not mounted, and the kernel starts init with nothing mounted. This
// prelude imports nothing, mounts /proc through libc when it is missing, and
// only then loads the program, so the program's own imports run with /proc.
// The program must treat /proc as possibly mounted already.
try {
  Deno.statSync("/proc/self/exe");
} catch {
  const libc = Deno.dlopen("libc.so.6", {
    mount: { parameters: ["buffer", "buffer", "buffer", "u64", "pointer"], result: "i32" },
  });
  const c = (s) => new TextEncoder().encode(s + "\0");
  const MS_NOSUID = 2n, MS_NODEV = 4n, MS_NOEXEC = 8n;
  const rc = libc.symbols.mount(
    c("proc"),
    c("/proc"),
    c("proc"),
    MS_NOSUID | MS_NODEV | MS_NOEXEC,
    null,
  );
  if (rc !== 0) console.error("pid1 prelude: mounting /proc failed; the program may not start");
  libc.close();
}
await import("./main.js");
