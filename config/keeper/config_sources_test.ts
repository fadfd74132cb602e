/**
 * The config-source order and rules (config/keeper/config_sources.ts), fetching over
 * a loopback HTTP server (retries, the sha256 pin, a size cap) and the late
 * runner taking a fetched config unless one arrived first.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { configCandidates, IMAGE_CONFIG_PATH, STATE_CONFIG_PATH } from "../../layout/mod.ts";
import { renderConfigTemplate } from "../mod.ts";
import { createLogger } from "../../logs/mod.ts";
import { CIDATA_SOURCE, lateConfigPlan, STATE_SOURCE } from "./config_sources.ts";
import { ConfigFetchError, fetchConfig, sha256Hex } from "./config_fetch.ts";
import { ConfigKeeper } from "./config_keeper.ts";
import { runLateConfig } from "./late_config.ts";
import { Machined } from "../../core/mod.ts";
import { FakeMountBackend } from "../../platform/mount/mod.ts";

const cmd = (o: Record<string, string>) => new Map(Object.entries(o));

Deno.test("config sources: boot paths, then CIDATA, then the URL; plain HTTP only pinned", () => {
  const pin = "ab".repeat(32);
  assert.deepEqual(configCandidates(cmd({ "machined.config": "/x.yaml" })).paths, [
    STATE_CONFIG_PATH,
    "/x.yaml",
    IMAGE_CONFIG_PATH,
  ]);
  // A URL is not a path: it is a late source, after CIDATA.
  const url = cmd({ "machined.config": "https://cfg.example/n1.yaml" });
  assert.deepEqual(configCandidates(url).paths, [STATE_CONFIG_PATH, IMAGE_CONFIG_PATH]);
  assert.deepEqual(lateConfigPlan(url).sources, [STATE_SOURCE, CIDATA_SOURCE, {
    kind: "url",
    url: "https://cfg.example/n1.yaml",
  }]);
  assert.deepEqual(lateConfigPlan(cmd({})).sources, [STATE_SOURCE, CIDATA_SOURCE]);

  const http = lateConfigPlan(cmd({ "machined.config": "http://10.0.0.1/n1.yaml" }));
  assert.deepEqual(http.sources, [STATE_SOURCE, CIDATA_SOURCE]);
  assert.match(http.refused!, /plain HTTP: it is fetched only with machined\.config\.sha256/);
  const pinned = lateConfigPlan(
    cmd({
      "machined.config": "http://10.0.0.1/n1.yaml",
      "machined.config.sha256": pin.toUpperCase(),
    }),
  );
  assert.deepEqual(pinned.sources[2], { kind: "url", url: "http://10.0.0.1/n1.yaml", sha256: pin });
  const bad = lateConfigPlan(
    cmd({ "machined.config": "https://x/y", "machined.config.sha256": "nope" }),
  );
  assert.match(bad.refused!, /not 64 hex digits/);
  assert.equal(bad.sources.length, 2);
});

/** A loopback server answering `replies` in turn (then the last one forever). */
function server(replies: Array<() => Response>) {
  let n = 0;
  const s = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    const r = replies[Math.min(n, replies.length - 1)];
    n++;
    return r();
  });
  return {
    url: `http://127.0.0.1:${s.addr.port}/node.yaml`,
    get hits() {
      return n;
    },
    close: () => s.shutdown(),
  };
}

Deno.test("config fetch: retried until it answers; the pin is checked; oversize refused", async () => {
  const body = "machine:\n  hostname: n1\n";
  const pin = await sha256Hex(new TextEncoder().encode(body));
  const s = server([
    () => new Response("no", { status: 503 }),
    () => new Response("tampered", { status: 200 }),
    () => new Response(body),
  ]);
  try {
    const errors: string[] = [];
    const text = await fetchConfig(s.url, {
      sha256: pin,
      sleep: () => Promise.resolve(),
      onError: (e) => errors.push(e.reason),
    });
    assert.equal(text, body);
    assert.equal(s.hits, 3);
    assert.match(errors[0], /HTTP 503/);
    assert.match(errors[1], /does not match the pinned/);
    await assert.rejects(
      () =>
        fetchConfig(s.url, { sha256: "0".repeat(64), attempts: 2, sleep: () => Promise.resolve() }),
      ConfigFetchError,
    );
  } finally {
    await s.close();
  }
  const big = server([() => new Response("x".repeat(1024 * 1024 + 1))]);
  try {
    await assert.rejects(() => fetchConfig(big.url, { attempts: 1 }), /is over/);
  } finally {
    await big.close();
  }
});

Deno.test("late config: the URL's config is applied once the network is up, not over one that arrived first", async () => {
  const m = new Machined({ mode: "dev", pid1: false, logger: createLogger({ console: false }) });
  const good = renderConfigTemplate({ hostname: "from-url" });
  const s = server([() => new Response(good)]);
  try {
    const keeper = new ConfigKeeper(m);
    const plan = lateConfigPlan(
      cmd({
        "machined.config": s.url,
        "machined.config.sha256": await sha256Hex(new TextEncoder().encode(good)),
      }),
    );
    const from = await runLateConfig({
      machined: m,
      keeper,
      plan,
      cidataDir: "/nonexistent",
      cidataWaitMs: 0,
      discoveryWaitMs: 0,
      networkUp: () => Promise.resolve(),
    });
    assert.equal(from, s.url);
    assert.equal(keeper.config?.machine.hostname, "from-url");

    // A config already in force: the URL is not fetched.
    const hits = s.hits;
    const again = await runLateConfig({
      machined: m,
      keeper,
      plan,
      cidataDir: "/nonexistent",
      cidataWaitMs: 0,
      discoveryWaitMs: 0,
      networkUp: () => Promise.resolve(),
    });
    assert.equal(again, undefined);
    assert.equal(s.hits, hits);
  } finally {
    await s.close();
    await m.stop();
  }
});

Deno.test("late config: a STATE partition found without a config is read first, even when discovery publishes it late; the gate waits for it", async () => {
  const { NodeMaintenanceGate } = await import("../../api/host/mod.ts");
  const m = new Machined({ mode: "dev", pid1: false, logger: createLogger({ console: false }) });
  const dir = await Deno.makeTempDir({ prefix: "machined-late-state-" });
  try {
    // The fake mount backend mounts nothing: the file is already where STATE would be.
    await Deno.writeTextFile(
      join(dir, "config.yaml"),
      renderConfigTemplate({ hostname: "from-state" }),
    );
    // Discovery publishes its first volume 300 ms in, after the 100 ms window would have
    // ended had it been counted from the call (under TCG the first scan came 20-30 s late).
    const published = new Promise((r) => setTimeout(r, 300)).then(() =>
      m.store.create({
        type: "DiscoveredVolume",
        namespace: "block",
        id: "vda2",
        owner: "test",
        spec: {
          disk: "vda",
          devicePath: "/dev/vda2",
          partitionNumber: 2,
          offset: 0,
          size: 1,
          partitionType: "",
          partitionUuid: "",
          partitionLabel: "STATE",
          role: "state",
          filesystem: "ext4",
          filesystemLabel: "STATE",
          filesystemUuid: "",
          inKernel: true,
        },
      })
    );
    const keeper = new ConfigKeeper(m);
    const gate = new NodeMaintenanceGate(() => keeper.config !== undefined);
    gate.serving = true;
    const { promise, resolve } = Promise.withResolvers<void>();
    gate.holdUntil(promise);
    let judged = false;
    const insecure = gate.apply("machine: {}", false, () => Promise.resolve()).then(
      () => "ok",
      (e) => (judged = true, String(e)),
    );
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(judged, false, "the gate judged before STATE was looked for");
    const mount = new FakeMountBackend().addDirectory(dir);
    const from = await runLateConfig({
      machined: m,
      keeper,
      plan: lateConfigPlan(cmd({})),
      mount,
      cidataDir: "/nonexistent",
      stateDir: dir,
      cidataWaitMs: 100,
      discoveryWaitMs: 5_000,
      onStateChecked: resolve,
    });
    await published;
    assert.equal(from, "STATE /dev/vda2");
    assert.equal(keeper.config?.machine.hostname, "from-state");
    assert.match(await insecure, /not in maintenance mode|already has a config/);
    assert.equal(gate.active, false);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await m.stop();
  }
});

Deno.test("late config: an ISO9660 CIDATA drive (genisoimage's default) is mounted as iso9660 and read", async () => {
  const m = new Machined({ mode: "dev", pid1: false, logger: createLogger({ console: false }) });
  const dir = await Deno.makeTempDir();
  try {
    // The fake mount backend mounts nothing: user-data is already where the drive would be.
    await Deno.writeTextFile(
      join(dir, "user-data"),
      renderConfigTemplate({ hostname: "from-iso" }),
    );
    m.store.create({
      type: "DiscoveredVolume",
      namespace: "block",
      id: "vdc",
      owner: "test",
      spec: {
        disk: "vdc",
        devicePath: "/dev/vdc",
        partitionNumber: 0,
        offset: 0,
        size: 372736,
        partitionType: "",
        partitionUuid: "",
        partitionLabel: "",
        role: "other",
        filesystem: "iso9660",
        filesystemLabel: "cidata",
        filesystemUuid: "2026-12-02-01-06-08-00",
        inKernel: true,
      },
    });
    const mount = new FakeMountBackend().addDirectory(dir);
    const mounted: { fstype?: string; data?: string; flags?: readonly string[] }[] = [];
    const realMount = mount.mount.bind(mount);
    mount.mount = (req: Parameters<typeof realMount>[0]) => (mounted.push(req), realMount(req));
    const keeper = new ConfigKeeper(m);
    const from = await runLateConfig({
      machined: m,
      keeper,
      plan: lateConfigPlan(cmd({})),
      mount,
      cidataDir: dir,
      cidataWaitMs: 0,
    });
    assert.equal(from, "CIDATA volume /dev/vdc");
    assert.equal(keeper.config?.machine.hostname, "from-iso");
    assert.deepEqual(mounted.map((r) => [r.fstype, r.data, r.flags]), [["iso9660", undefined, [
      "ro",
    ]]]);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await m.stop();
  }
});
