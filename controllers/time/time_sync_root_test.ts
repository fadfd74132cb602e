/**
 * SNTP against a real NTP server: Debian's chronyd in server mode on
 * loopback (`local stratum 1`, `-x` so it never touches the clock), queried
 * through the real UDP transport. Root because chronyd's privileged setup
 * expects it; ignored without root or without chronyd. The host's clock is
 * only read (native backend); every step lands on a {@link WallClockFake}.
 */
import assert from "node:assert/strict";
import dgram from "node:dgram";
import { parseMachineConfig } from "../../config/mod.ts";
import {
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  type ResourceSpecs,
  TIME_STATUS,
} from "../../resources/mod.ts";
import { ControllerRuntime, Store } from "../../runtime/mod.ts";
import { waitForResource } from "../../runtime/testing.ts";
import { NativeClockBackend, toNanoseconds } from "../../platform/clock/mod.ts";
import { UdpNtpTransport } from "./ntp_transport_udp.ts";
import { querySntp } from "./sntp_client.ts";
import { timeSyncController } from "./time_sync.ts";
import { WallClockFake } from "./wall_clock_fake.ts";

const HOUR = 3_600_000;
const chronyd = ["/usr/sbin/chronyd", "/sbin/chronyd"].find((p) => {
  try {
    return Deno.statSync(p).isFile;
  } catch {
    return false;
  }
});
const skip = Deno.uid() !== 0
  ? "not root"
  : chronyd === undefined
  ? "chronyd not installed (Debian package chrony)"
  : undefined;
if (skip) console.log(`skipping chrony SNTP tests: ${skip}`);

/** A free UDP port on loopback (bound, read, released). */
async function freePort(): Promise<number> {
  const s = dgram.createSocket("udp4");
  await new Promise<void>((r) => s.bind(0, "127.0.0.1", r));
  const port = s.address().port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** chronyd serving the host's clock on 127.0.0.1:`port`, until `stop()`. */
async function startChrony() {
  const dir = await Deno.makeTempDir({ prefix: "machined-chrony-" });
  const port = await freePort();
  await Deno.writeTextFile(
    `${dir}/chrony.conf`,
    [
      `port ${port}`,
      "bindaddress 127.0.0.1",
      "cmdport 0",
      "local stratum 1",
      "allow 127.0.0.1",
      `pidfile ${dir}/chronyd.pid`,
      `driftfile ${dir}/drift`,
      "",
    ].join("\n"),
  );
  // -x: never adjust the system clock; -d: foreground, log to stderr; -u root: no privilege drop.
  const child = new Deno.Command(chronyd!, {
    args: ["-f", `${dir}/chrony.conf`, "-d", "-x", "-u", "root"],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const log: string[] = [];
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  // chronyd logs "Running with root privileges" after binding its sockets.
  const deadline = setTimeout(() => child.kill("SIGKILL"), 10_000);
  while (!log.join("").includes("Running with root privileges")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`chronyd exited early:\n${log.join("")}`);
    log.push(value);
  }
  clearTimeout(deadline);
  const drained = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      log.push(value);
    }
  })();
  return {
    port,
    log,
    async stop() {
      child.kill("SIGTERM");
      await child.status;
      await drained;
      await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test({
  name: "SNTP against chronyd: the native clock reads within 50 ms of the server " +
    "(needs root, chronyd)",
  ignore: skip !== undefined,
  fn: async () => {
    const chrony = await startChrony();
    try {
      const native = new NativeClockBackend();
      const s = await querySntp("127.0.0.1", {
        transport: new UdpNtpTransport(),
        resolve: () => Promise.reject(new Error("unused")),
        readClock: () => toNanoseconds(native.read("realtime")),
      }, { port: chrony.port, timeoutMs: 2000 });
      assert.equal(s.stratum, 1);
      assert.equal(s.reference, "127.127.1.1", "chrony's local reference id");
      assert.ok(Math.abs(s.offsetMs) < 50, `offset ${s.offsetMs} ms against its own clock`);
      assert.ok(s.delayMs >= 0 && s.delayMs < 500, `delay ${s.delayMs} ms`);
    } finally {
      await chrony.stop();
    }
  },
});

Deno.test({
  name: "TimeSyncController steps a fake clock an hour behind chronyd, never the host's " +
    "(needs root, chronyd)",
  ignore: skip !== undefined,
  fn: async () => {
    const chrony = await startChrony();
    const store = new Store<ResourceSpecs>();
    const runtime = new ControllerRuntime(store);
    const fake = new WallClockFake(-HOUR);
    const hostBefore = Date.now();
    runtime.register(timeSyncController({
      clock: fake,
      transport: new UdpNtpTransport(),
      port: chrony.port,
      retryInitialMs: 200,
    }));
    runtime.start();
    try {
      const r = parseMachineConfig(
        "version: v1alpha1\nmachine:\n  hostname: n\n  time:\n    servers: [127.0.0.1]\n",
        "t",
      );
      assert.ok(r.ok);
      await store.modify(
        { type: MACHINE_CONFIG, namespace: "config", id: MACHINE_CONFIG_ID },
        "test",
        () => ({ source: "test", config: r.config }),
      );
      const st = await waitForResource(store, TIME_STATUS, (x) => x.spec.synced, 10_000);
      assert.equal(st.spec.correction, "step");
      assert.equal(st.spec.stratum, 1);
      assert.ok(Math.abs(st.spec.offsetMs! - HOUR) < 100, `offset ${st.spec.offsetMs} ms`);
      assert.equal(fake.faults.callsOf("clock_settime").length, 1, "the fake took the step");
      assert.ok(Math.abs(fake.shiftMs) < 100, `fake clock now ${fake.shiftMs} ms off`);
      const hostDrift = Date.now() - hostBefore;
      assert.ok(hostDrift >= 0 && hostDrift < 15_000, "the host's clock did not jump");
    } finally {
      await runtime.stop();
      await chrony.stop();
    }
  },
});
