/**
 * machinectl's observability commands (memory, ps, mounts, stats, cgroups,
 * time, netstat) against the real apid and machined-side server, over the
 * sample /proc of observe/testing.ts, as a reader.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { parse } from "yaml";
import { addContext, contextFromPem, emptyClientConfig, writeClientConfig } from "../pki/mod.ts";
import {
  type ApiFixture,
  type ApiFixtureOptions,
  seededStore,
  seedTimeServers,
  startApiFixture,
} from "../api/testing.ts";
import { runMachinectl } from "./cli.ts";
import { bufferIo } from "./io.ts";

async function readerConfig(f: ApiFixture): Promise<string> {
  const path = join(f.pki.dir, "reader.yaml");
  const cert = f.pki.clients["os:reader"];
  const ctx = contextFromPem([f.endpoint], {
    caPem: f.pki.ca.certPem,
    certPem: cert.certPem,
    keyPem: cert.keyPem,
  });
  await writeClientConfig(path, addContext(emptyClientConfig(), "test", ctx));
  return path;
}

async function withReader(
  test: (
    run: (...argv: string[]) => Promise<{ code: number; out: string; err: string }>,
    f: ApiFixture,
  ) => Promise<void>,
  options: ApiFixtureOptions = {},
): Promise<void> {
  const f = await startApiFixture(options);
  try {
    const config = await readerConfig(f);
    await test(async (...argv) => {
      const io = bufferIo();
      const code = await runMachinectl(["--config", config, ...argv], io);
      return { code, out: io.stdout.join("\n"), err: io.stderr.join("\n") };
    }, f);
  } finally {
    await f.close();
  }
}

Deno.test("machinectl memory: meminfo, per owner, per process; json and yaml", () =>
  withReader(async (run) => {
    let r = await run("memory");
    equal(r.code, 0, r.err);
    const [system, owners, processes] = r.out.split("\n\n");
    match(system.split("\n")[1], /^1\.9 GiB\s+488 MiB\s+488 MiB\s+1\.4 GiB/);
    match(owners, /^containerd\s+2\s+47 MiB\s+41 MiB$/m);
    match(processes, /^40\s+payload\s+payload\s+12 MiB\s+-$/m);
    r = await run("memory", "-o", "json");
    const doc = JSON.parse(r.out);
    equal(doc.meminfo.totalBytes, 2000000 * 1024);
    equal(doc.meminfo.fields.MemTotal, 2000000 * 1024);
    equal(doc.processes.find((p: { pid: number }) => p.pid === 40).pssBytes, undefined);
    r = await run("mem", "-o", "yaml");
    equal(parse(r.out).owners.length, 4);
    r = await run("memory", "-o", "xml");
    equal(r.code, 2);
    match(r.err, /unknown output format "xml"/);
  }));

Deno.test("machinectl ps: table with owner and argv, --sort, json, --watch until aborted", () =>
  withReader(async (run) => {
    let r = await run("ps", "--sort", "rss");
    equal(r.code, 0, r.err);
    const lines = r.out.split("\n");
    match(lines[0], /^PID\s+PPID\s+OWNER\s+STATE\s+THREADS\s+CPU%\s+TIME\s+RSS\s+PSS\s+COMMAND$/);
    match(lines[1], /^1\s+0\s+machined\s+S\s+8\s+0\.0\s+4\.0s\s+78 MiB\s+68 MiB\s+\/sbin\/init$/);
    match(r.out, /^40\s+1\s+payload\s+.*\/bin\/payload --token=s3cret$/m);
    match(r.out, /^2\s+0\s+-\s+S\s+.*\[kthreadd\]$/m);
    r = await run("ps", "-o", "json", "-s", "pid");
    const doc = JSON.parse(r.out);
    deepEqual(doc.processes.map((p: { pid: number }) => p.pid), [1, 2, 20, 30, 31, 40, 99]);
    ok(doc.sampleIntervalMs >= 1000, "ps took a second sample for CPU%");
    r = await run("ps", "--sort", "bogus");
    equal(r.code, 2);
  }));

Deno.test("machinectl ps --watch redraws until interrupted", async () => {
  const f = await startApiFixture();
  try {
    const config = await readerConfig(f);
    const io = bufferIo();
    const abort = new AbortController();
    const origOut = io.out;
    io.out = (t) => {
      origOut(t);
      if (io.stdout.length === 2) abort.abort();
    };
    const code = await runMachinectl(
      ["--config", config, "ps", "-w", "--interval", "0.1"],
      io,
      { signal: abort.signal },
    );
    equal(code, 0);
    equal(io.stdout.length, 2);
    ok(io.stdout.every((frame) => frame.startsWith("\x1b[H\x1b[2JPID")));
  } finally {
    await f.close();
  }
});

Deno.test("machinectl stats, mounts, cgroups, netstat: tables", () =>
  withReader(async (run) => {
    let r = await run("stats");
    equal(r.code, 0, r.err);
    match(r.out, /^load average: 0\.50 0\.25 0\.10\s+tasks: 2\/180\s+uptime: 20m34s/);
    match(r.out, /^cpu1\s+0\.0\s+/m, "a second sample was taken for USAGE%");
    match(r.out, /^vda\s+100\s+1\.0 MiB\s+200\s+2\.0 MiB\s+0\s+0\.1s$/m);
    match(r.out, /^eth0\s+488 KiB\s+400\s+1\s+2\s+244 KiB\s+300\s+0\s+1$/m);
    r = await run("mounts");
    match(r.out, /^\/dev\/vda3\s+\/\s+ext4\s+10 GiB\s+2\.5 GiB\s+7\.5 GiB\s+26%\s+rw,relatime/m);
    match(r.out, /^\/dev\/vda5\s+\/var\/lib\/my data\s+xfs\s+-\s+-\s+-\s+-/m);
    r = await run("cgroups");
    match(r.out, /^payload\s+\/machined\/payload\s+12 MiB\s+256 MiB\s+1\s+0\.5s\s+0\s+1\s+64$/m);
    match(
      r.out,
      /^containerd\s+\/machined\/containerd\s+48 MiB\s+max\s+0\s+1\.2s\s+0\s+14\s+max$/m,
    );
    r = await run("netstat", "-l");
    const rows = r.out.split("\n").slice(1);
    equal(rows.length, 3);
    match(rows[0], /^tcp\s+0\.0\.0\.0:50000\s+0\.0\.0\.0:\*\s+LISTEN\s+0\s+0\s+20\s+deno\s+apid$/);
    match(rows[1], /^tcp6\s+\[::1\]:80\s+\[::\]:\*\s+LISTEN\s+.*payload$/);
    r = await run("netstat", "-o", "json");
    equal(JSON.parse(r.out).sockets.length, 4);
  }));

Deno.test("machinectl time: the status, a configured server, and another refused for a reader", () => {
  const store = seededStore();
  seedTimeServers(store, ["ntp.example"]);
  return withReader(async (run) => {
    let r = await run("time");
    equal(r.code, 0, r.err);
    r = await run("time", "ntp.example");
    equal(r.code, 0, r.err);
    match(r.out, /^QUERIED\s+ADDRESS\s+STRATUM\s+OFFSET\s+DELAY$/m);
    match(r.out, /^ntp\.example\s+192\.0\.2\.1\s+2\s+-12\.500ms\s+0\.400ms$/m);
    r = await run("time", "198.51.100.9");
    equal(r.code, 1);
    match(r.err, /may query only the node's configured time servers/);
    r = await run("time", "ntp.example:1123");
    equal(r.code, 1);
    match(r.err, /port 123 only/);
    r = await run("time", "a", "b");
    equal(r.code, 2);
  }, {
    store,
    timeQuerier: {
      query: () =>
        Promise.resolve({
          server: "x",
          address: "192.0.2.1",
          stratum: 2,
          offsetMs: -12.5,
          delayMs: 0.4,
        }),
    },
  });
});
