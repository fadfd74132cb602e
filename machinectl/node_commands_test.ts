/**
 * machinectl's service, logs, dmesg and apply-config commands against the
 * real apid and machined-side server (fakes behind the node interfaces).
 */
import { deepEqual, equal, match } from "node:assert/strict";
import { join } from "node:path";
import { startApiFixture, withTimeout } from "../api/testing.ts";
import { runMachinectl } from "./cli.ts";
import type { Io } from "./io.ts";
import { clientConfig, runCli as run } from "./testing.ts";

Deno.test("machinectl service: table, one service, json; start/stop/restart; errors", async () => {
  const f = await startApiFixture();
  try {
    const reader = await clientConfig(f, "os:reader");
    const operator = await clientConfig(f, "os:operator");
    let r = await run(reader, "service");
    equal(r.code, 0, r.err);
    const lines = r.out.split("\n");
    match(lines[0], /^ID\s+STATE\s+HEALTHY\s+RESTARTS\s+PID\s+LAST EXIT\s+MESSAGE$/);
    match(lines[1], /^containerd\s+running\s+true\s+0\s+100\s+-$/);
    match(lines[2], /^payload\s+running\s+true\s+2\s+101\s+-$/);
    equal(lines.length, 3);

    r = await run(operator, "service", "stop", "payload");
    equal(r.code, 0, r.err);
    equal(r.out, `service "payload": stop done, now finished (${f.endpoint})`);
    r = await run(reader, "services", "payload");
    match(
      r.out.split("\n")[1],
      /^payload\s+finished\s+false\s+2\s+-\s+SIGTERM\s+stopped by request$/,
    );
    r = await run(operator, "services", "start", "payload");
    equal(r.code, 0, r.err);
    match(r.out, /start done, now running/);
    r = await run(operator, "service", "restart", "payload");
    match(r.out, /restart done, now running/);
    r = await run(reader, "service", "payload", "-o", "json");
    const [svc] = JSON.parse(r.out);
    deepEqual([svc.id, svc.status.restarts, svc.spec.dependsOn], ["payload", 3, ["containerd"]]);
    deepEqual(f.services.calls, ["stop payload", "start payload", "restart payload"]);

    r = await run(reader, "service", "restart", "payload");
    equal(r.code, 1);
    match(r.err, /permission denied: .*"os:reader".*ServiceRestart.*needs "os:operator"/);
    r = await run(operator, "service", "stop", "nope");
    equal(r.code, 1);
    match(r.err, /NotFound: No service "nope"/);
    r = await run(reader, "service", "nope");
    match(r.err, /no service "nope"; services: containerd, payload/);
    r = await run(operator, "service", "start");
    equal(r.code, 2);
    // `get services` stays the ServiceStatus resource view.
    f.store.create({
      type: "ServiceStatus",
      namespace: "runtime",
      id: "payload",
      owner: "test",
      spec: { ...f.services.get("payload").status },
    });
    r = await run(reader, "get", "services");
    equal(r.code, 0, r.err);
    match(r.out, /^NAMESPACE\s+TYPE\s+ID\s+VERSION/);
    match(r.out.split("\n")[1], /^runtime\s+ServiceStatus\s+payload\s+1\s+running/);
  } finally {
    await f.close();
  }
});

/**
 * A guard against a hang, not a timing: a CI run with the machine shared (the QEMU tier beside it)
 * once took more than 5 s to print the tail line.
 */
const HANG_GUARD_MS = 20_000;

Deno.test("machinectl logs: tail, timestamps, unknown id; -f follows until interrupted", async () => {
  const f = await startApiFixture();
  try {
    const reader = await clientConfig(f, "os:reader");
    for (let i = 1; i <= 4; i++) f.logs.push("payload", `line ${i}`);
    let r = await run(reader, "logs", "payload", "--tail", "2");
    equal(r.code, 0, r.err);
    equal(r.out, "line 3\nline 4");
    r = await run(reader, "logs", "payload", "-t", "--tail", "1");
    match(r.out, /^\d{4}-\d\d-\d\dT[\d:.]+Z stdout line 4$/);
    r = await run(reader, "logs", "nope");
    equal(r.code, 1);
    match(r.err, /NotFound: No log for "nope"/);
    r = await run(reader, "logs", "payload", "--tail", "-3");
    equal(r.code, 2);

    const seen: string[] = [];
    let onLine: ((line: string) => void) | undefined;
    const io: Io = {
      out: (t) => {
        seen.push(t);
        onLine?.(t);
      },
      err: (t) => seen.push(`err: ${t}`),
    };
    const stop = new AbortController();
    const lineSeen = (want: string) =>
      new Promise<void>((resolve) => {
        if (seen.includes(want)) resolve();
        onLine = (t) => t === want && resolve();
      });
    const firstSeen = lineSeen("line 4");
    const done = runMachinectl(
      ["--config", reader, "logs", "payload", "-f", "--tail", "1"],
      io,
      { signal: stop.signal },
    );
    await withTimeout(firstSeen, HANG_GUARD_MS, "tail line");
    await withTimeout(f.logs.whenReaders(1), HANG_GUARD_MS, "follower");
    const liveSeen = lineSeen("live");
    f.logs.push("payload", "live");
    await withTimeout(liveSeen, HANG_GUARD_MS, "live line");
    stop.abort();
    equal(await withTimeout(done, HANG_GUARD_MS, "logs -f ends"), 0);
    deepEqual(seen, ["line 4", "live"]);
    await withTimeout(f.logs.whenReaders(0), HANG_GUARD_MS, "follower released");
  } finally {
    await f.close();
  }
});

Deno.test("machinectl dmesg: records as dmesg prints them, gaps on stderr, --tail", async () => {
  const f = await startApiFixture();
  try {
    const reader = await clientConfig(f, "os:reader");
    f.kernelLog.log("Linux version 6.1", { usec: 0 });
    f.kernelLog.lose();
    f.kernelLog.log("EXT4-fs (vda3): mounted", { usec: 1_234_567 });
    let r = await run(reader, "dmesg");
    equal(r.code, 0, r.err);
    equal(r.out, "[    0.000000] Linux version 6.1\n[    1.234567] EXT4-fs (vda3): mounted");
    match(r.err, /records were lost/);
    r = await run(reader, "dmesg", "--tail", "1");
    equal(r.out, "[    1.234567] EXT4-fs (vda3): mounted");
    equal(r.err, "");
  } finally {
    await f.close();
  }
});

Deno.test("machinectl apply-config: applied, dry run, every error with line:col and exit 1", async () => {
  const f = await startApiFixture();
  const dir = await Deno.makeTempDir();
  try {
    const admin = await clientConfig(f, "os:admin");
    const operator = await clientConfig(f, "os:operator");
    const good = join(dir, "good.yaml");
    const bad = join(dir, "bad.yaml");
    await Deno.writeTextFile(good, "version: v1alpha1\nmachine:\n  hostname: node-9\n");
    await Deno.writeTextFile(bad, "version: v1alpha1\nmachine:\n  hostnme: a\n  sysctls: 3\n");

    let r = await run(admin, "apply-config", "-f", good, "--dry-run");
    equal(r.code, 0, r.err);
    match(r.out, /good\.yaml: valid; would apply with mode no-reboot; nothing changed \(dry run/);
    equal(f.configs.applied.length, 0);
    r = await run(admin, "apply-config", "-f", good);
    equal(r.code, 0, r.err);
    match(r.out, /good\.yaml: applied with mode no-reboot on 127\.0\.0\.1:\d+/);
    equal(f.configs.applied.length, 1);

    for (const dry of [false, true]) {
      r = await run(admin, "apply-config", "-f", bad, ...(dry ? ["--dry-run"] : []));
      equal(r.code, 1);
      const err = r.err.split("\n");
      match(err[0], /bad\.yaml:3:3: machine\.hostnme: .*\(did you mean "hostname"/);
      match(err[1], /bad\.yaml:4:\d+: machine\.sysctls: /);
      match(err[2], dry ? /2 errors; the node would refuse/ : /2 errors; the node refused it/);
    }
    equal(f.configs.applied.length, 1);

    r = await run(operator, "apply-config", "-f", good);
    equal(r.code, 1);
    match(r.err, /permission denied: .*ApplyConfiguration.*needs "os:admin"/);
    r = await run(admin, "apply-config", "-f", join(dir, "missing.yaml"));
    equal(r.code, 1);
    match(r.err, /cannot read ".*missing\.yaml"/);
    r = await run(admin, "apply-config");
    equal(r.code, 2);
  } finally {
    await f.close();
    await Deno.remove(dir, { recursive: true });
  }
});
