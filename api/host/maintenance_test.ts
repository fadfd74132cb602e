/**
 * Maintenance mode, root-free: a node with no CA anywhere (a generic image)
 * serves a self-signed certificate whose fingerprint it announces, answers
 * only Version, Get/List of hardware and network, and ApplyConfiguration
 * without a client certificate, refuses every other RPC, takes one config
 * (validated, a bad one changes nothing) and then serves mutual TLS with that
 * config's CA. machined's store, config keeper and API PKI owner are real;
 * apid runs in-process over the files api/host/api_pki.ts writes for it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { renderConfigTemplate } from "../../config/mod.ts";
import { createLogger } from "../../logs/mod.ts";
import {
  createCertificateAuthority,
  generateClientConfig,
  writeClientConfig,
} from "../../pki/mod.ts";
import { createInsecureMachineClient, FingerprintMismatchError } from "../client/mod.ts";
import { MAINTENANCE_METHODS } from "../auth/mod.ts";
import { bufferIo, runMachinectl } from "../../machinectl/mod.ts";
import { startNodeApiPki } from "./api_pki.ts";
import { ConfigKeeper } from "../../config/keeper/mod.ts";
import { Machined } from "../../core/mod.ts";
import { NodeMaintenanceGate } from "./maintenance_gate.ts";
import { nodeTestApi } from "./testing_api.ts";

async function maintenanceNode() {
  const dir = await Deno.makeTempDir({ prefix: "machined-maint-" });
  const m = new Machined({ mode: "dev", pid1: false, logger: createLogger({ console: false }) });
  m.start();
  const keeper = new ConfigKeeper(m);
  const gate = new NodeMaintenanceGate();
  const apidPkiDir = join(dir, "apid-pki");
  const api = nodeTestApi(m, keeper, dir, apidPkiDir, gate);
  const announced: string[] = [];
  const pki = await startNodeApiPki({
    machined: m,
    keeper,
    gate,
    announce: (f) => announced.push(f),
    pkiDir: join(dir, "pki"),
    apidPkiDir,
    fallbackHostname: "machined",
    startApi: (p) => api.startApi(p),
    debounceMs: 60_000, // the test moves the PKI on with reconcileNow
  });
  return {
    dir,
    m,
    keeper,
    gate,
    pki,
    announced,
    get port() {
      return api.port;
    },
    async close() {
      await pki.stop();
      await api.close();
      await m.stop();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

async function codeOf(call: () => Promise<unknown>): Promise<string> {
  try {
    await call();
    return "ok";
  } catch (e) {
    return e instanceof ConnectError ? Code[e.code] : `thrown: ${(e as Error).message}`;
  }
}

async function machinectl(...argv: string[]) {
  const io = bufferIo();
  const code = await runMachinectl(argv, io);
  return { code, out: io.stdout.join("\n"), err: io.stderr.join("\n") };
}

Deno.test("maintenance: fingerprint announced, only Version, hardware Get/List, ApplyConfiguration and UnlockVolume of STATE answered", async () => {
  const node = await maintenanceNode();
  try {
    assert.ok(node.pki.apiStarted);
    assert.equal(node.announced.length, 1);
    assert.match(node.announced[0], /^SHA256:[0-9a-f]{64}$/);
    assert.equal(node.pki.fingerprint, node.announced[0]);
    assert.ok(node.gate.active);
    const c = await createInsecureMachineClient("127.0.0.1", node.port, node.announced[0]);
    try {
      const api = c.api;
      assert.equal(await codeOf(() => api.version({})), "ok");
      assert.equal(await codeOf(() => api.list({ type: "links" })), "ok");
      assert.equal(await codeOf(() => api.list({ type: "AddressStatus" })), "ok");
      assert.equal(await codeOf(() => api.list({ type: "DiskStatus" })), "ok");
      assert.equal(await codeOf(() => api.list({ type: "ServiceStatus" })), "PermissionDenied");
      assert.equal(
        await codeOf(() => api.get({ type: "ConfigStatus", id: "x" })),
        "PermissionDenied",
      );
      const drain = async (it: AsyncIterable<unknown>) => {
        for await (const _ of it) break;
      };
      // Every RPC maintenance does not answer, by its real call shape.
      const refused: Record<string, () => Promise<unknown>> = {
        watch: () => drain(api.watch({ type: "links" })),
        events: () => drain(api.events({})),
        reboot: () => api.reboot({}),
        shutdown: () => api.shutdown({}),
        generateClientConfiguration: () => api.generateClientConfiguration({ name: "x" }),
        serviceList: () => api.serviceList({}),
        serviceStart: () => api.serviceStart({ id: "x" }),
        serviceStop: () => api.serviceStop({ id: "x" }),
        serviceRestart: () => api.serviceRestart({ id: "x" }),
        logs: () => drain(api.logs({ id: "machined" })),
        dmesg: () => drain(api.dmesg({})),
        reset: () => api.reset({}),
        memory: () => api.memory({}),
        stats: () => api.stats({}),
        processes: () => api.processes({}),
        mounts: () => api.mounts({}),
        cgroups: () => api.cgroups({}),
        time: () => api.time({}),
        netstat: () => api.netstat({}),
        containers: () => api.containers({}),
        images: () => api.images({}),
        imagePull: () => api.imagePull({ image: "registry.example/app:1" }),
        metrics: () => api.metrics({}),
        controllerGraph: () => api.controllerGraph({}),
        fileList: () => drain(api.fileList({ path: "/var/log" })),
        fileRead: () => drain(api.fileRead({ path: "/var/log/machined.log" })),
        diskUsage: () => drain(api.diskUsage({ path: "/var/log" })),
        fileCopy: () => drain(api.fileCopy({ path: "/var/log" })),
        upgrade: () =>
          api.upgrade((async function* () {
            yield { chunk: new Uint8Array(16) };
          })()),
        rollback: () => api.rollback({}),
      };
      const notAnswered = Object.entries(MAINTENANCE_METHODS).filter(([, v]) => !v).map(([k]) => k);
      assert.deepEqual(Object.keys(refused).sort(), notAnswered.sort());
      for (const [name, call] of Object.entries(refused)) {
        assert.equal(await codeOf(call), "PermissionDenied", name);
      }
      // UnlockVolume: STATE only (its config is on it), within the budget every caller
      // without a certificate shares: 5 tries in 60 s, then ResourceExhausted.
      const pass = new TextEncoder().encode("x");
      const unlock = (volume: string) => () => api.unlockVolume({ volume, passphrase: pass });
      assert.equal(await codeOf(unlock("EPHEMERAL")), "PermissionDenied");
      for (let i = 0; i < 5; i++) assert.equal(await codeOf(unlock("STATE")), "ok", `try ${i + 1}`);
      assert.equal(await codeOf(unlock("STATE")), "ResourceExhausted");
    } finally {
      c.close();
    }
  } finally {
    await node.close();
  }
});

Deno.test("maintenance: a wrong fingerprint is refused before anything is sent", async () => {
  const node = await maintenanceNode();
  try {
    const wrong = "SHA256:" + "0".repeat(64);
    await assert.rejects(
      () => createInsecureMachineClient("127.0.0.1", node.port, wrong),
      FingerprintMismatchError,
    );
    const file = join(node.dir, "node.yaml");
    await Deno.writeTextFile(file, "machine: {}\n");
    const r = await machinectl(
      "apply-config",
      "--insecure",
      "-e",
      `127.0.0.1:${node.port}`,
      "--fingerprint",
      wrong,
      "-f",
      file,
    );
    assert.equal(r.code, 1);
    assert.match(r.err, /fingerprint SHA256:[0-9a-f]{64}, not SHA256:0{64}/);
    assert.equal(configOf(node), undefined);
  } finally {
    await node.close();
  }
});

Deno.test("maintenance: a bad config changes nothing; a good one is taken once, then only mTLS", async () => {
  const node = await maintenanceNode();
  try {
    const ep = `127.0.0.1:${node.port}`;
    const fp = node.announced[0];
    const ca = await createCertificateAuthority();
    const good = renderConfigTemplate({
      hostname: "node-1",
      ca: { certPem: ca.certPem, keyPem: ca.keyPem },
    });
    const bad = join(node.dir, "bad.yaml");
    await Deno.writeTextFile(bad, good.replace("hostname: node-1", "hostnme: node-1"));
    let r = await machinectl(
      "apply-config",
      "--insecure",
      "-e",
      ep,
      "--fingerprint",
      fp,
      "-f",
      bad,
    );
    assert.equal(r.code, 1, r.out);
    assert.match(r.err, /bad\.yaml:\d+:\d+: machine\.hostnme/);
    assert.equal(configOf(node), undefined);
    assert.ok(node.gate.active);

    const noCa = join(node.dir, "noca.yaml");
    await Deno.writeTextFile(noCa, renderConfigTemplate({ hostname: "node-1" }));
    r = await machinectl("apply-config", "--insecure", "-e", ep, "--fingerprint", fp, "-f", noCa);
    assert.equal(r.code, 1);
    assert.match(r.err, /must carry a valid machine\.ca/);
    assert.equal(configOf(node), undefined);

    const file = join(node.dir, "node.yaml");
    await Deno.writeTextFile(file, good);
    r = await machinectl("apply-config", "--insecure", "-e", ep, "--fingerprint", fp, "-f", file);
    assert.equal(r.code, 0, r.err);
    assert.equal(configOf(node)?.machine.hostname, "node-1");
    // Still served by the maintenance apid (the PKI has not moved yet), yet shut at machined.
    assert.equal(node.gate.active, false);
    r = await machinectl("apply-config", "--insecure", "-e", ep, "--fingerprint", fp, "-f", file);
    assert.equal(r.code, 1);
    assert.match(r.err, /not in maintenance mode \(it has a config/);
    r = await machinectl("version", "--insecure", "-e", ep, "--fingerprint", fp);
    assert.equal(r.code, 1);
    assert.match(r.err, /not in maintenance mode/);

    await node.pki.reconcileNow();
    assert.equal(node.pki.caSource, "config");
    assert.equal(node.pki.fingerprint, undefined);
    const clientPath = join(node.dir, "machinectl.yaml");
    await writeClientConfig(
      clientPath,
      await generateClientConfig({
        secrets: { ca },
        role: "os:admin",
        name: "admin",
        context: "node-1",
        endpoints: [ep],
      }),
    );
    r = await machinectl("--config", clientPath, "version");
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /node-1|machined/);
    // Without a client certificate the TLS layer refuses now.
    r = await machinectl("version", "--insecure", "-e", ep);
    assert.equal(r.code, 1);
  } finally {
    await node.close();
  }
});

function configOf(node: { keeper: ConfigKeeper }) {
  return node.keeper.config;
}
