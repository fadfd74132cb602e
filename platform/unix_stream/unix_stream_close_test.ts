/**
 * Each socket descriptor is closed once. A second close(2) of a number that
 * another thread has just reused closes that thread's file: the reason for
 * this module (unix_stream.ts). Proven from outside, with strace, on a child
 * Deno running testdata/close_once.ts.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const STRACE = "/usr/bin/strace";
const hasStrace = await Deno.stat(STRACE).then(() => true, () => false);
const script = fileURLToPath(new URL("./testdata/close_once.ts", import.meta.url));

/** Socket descriptors a thread closed and then closed again (the second failing with EBADF). */
export function doubleClosedSockets(trace: string): string[] {
  const lastSocketClose = new Map<string, string>();
  const pending = new Map<string, string>();
  const doubled: string[] = [];
  for (const raw of trace.split("\n")) {
    const m = /^(\d+)\s+(.*)$/.exec(raw);
    if (!m) continue;
    const [, tid, rest0] = m;
    let rest = rest0;
    if (rest.includes("<unfinished ...>")) {
      pending.set(tid, rest.replace(/\s*<unfinished \.\.\.>.*/, ""));
      continue;
    }
    if (rest.startsWith("<... close resumed>")) {
      rest = (pending.get(tid) ?? "close(?") + rest.slice("<... close resumed>".length);
      pending.delete(tid);
    }
    const c = /^close\((\d+)(<[^>]*>)?\)\s*=\s*(-?\d+)/.exec(rest);
    if (!c) continue;
    const [, fd, what = "", rc] = c;
    const key = `${tid}:${fd}`;
    if (rc === "0" && what.startsWith("<socket:")) lastSocketClose.set(key, what);
    else if (rc === "0") lastSocketClose.delete(key);
    else if (rest.includes("EBADF") && lastSocketClose.has(key)) {
      doubled.push(`fd ${fd} ${lastSocketClose.get(key)} (thread ${tid})`);
      lastSocketClose.delete(key);
    }
  }
  return doubled;
}

async function traceCloses(mode: string): Promise<string[]> {
  const dir = await Deno.makeTempDir({ prefix: "close-once-" });
  try {
    const out = `${dir}/trace`;
    const run = await new Deno.Command(STRACE, {
      args: [
        "-f",
        "-y",
        "-e",
        "trace=close",
        "-o",
        out,
        Deno.execPath(),
        "run",
        "-A",
        script,
        mode,
        dir,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(run.stdout);
    assert.ok(run.success, `${mode}: ${stdout}${new TextDecoder().decode(run.stderr)}`);
    assert.match(stdout, new RegExp(`closed \\(${mode}\\)`));
    return doubleClosedSockets(await Deno.readTextFile(out));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const ignore = !hasStrace;

Deno.test({
  name: "the Unix stream adapter closes each socket descriptor exactly once",
  ignore,
  fn: async () => assert.deepEqual(await traceCloses("adapter"), []),
});

Deno.test({
  name:
    "node:http2 over the adapter (machined ↔ edge, machined → containerd) closes each socket once",
  ignore,
  fn: async () => assert.deepEqual(await traceCloses("http2"), []),
});

Deno.test({
  name: "Deno 2.9.3's node:net closes a Unix socket's descriptor twice (why the adapter exists; " +
    "when this fails, Deno fixed it: see docs/decisions.md)",
  ignore,
  fn: async () => {
    const doubled = await traceCloses("node-net");
    assert.ok(doubled.length >= 2, `expected node:net's double close, got ${doubled.join("; ")}`);
  },
});

Deno.test("doubleClosedSockets pairs a socket's close with the same thread's EBADF close of that number", () => {
  const trace = [
    "7  close(22<socket:[91230]>)         = 0",
    "7  close(22)                         = -1 EBADF (Bad file descriptor)",
    "7  close(23</tmp/x>) = 0",
    "7  close(23) = -1 EBADF (Bad file descriptor)",
    "8  close(24<socket:[1]> <unfinished ...>",
    "9  close(5</dev/null>) = 0",
    "8  <... close resumed>) = 0",
    "8  close(24 <unfinished ...>",
    "8  <... close resumed>) = -1 EBADF (Bad file descriptor)",
    "9  close(30<socket:[2]>) = 0",
    "10 close(30) = -1 EBADF (Bad file descriptor)",
  ].join("\n");
  assert.deepEqual(doubleClosedSockets(trace), [
    "fd 22 <socket:[91230]> (thread 7)",
    "fd 24 <socket:[1]> (thread 8)",
  ]);
});
