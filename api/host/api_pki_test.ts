/**
 * The API's PKI on a node, root-free: machined's store and config keeper are
 * real, apid runs in-process (the same TLS server the apid process runs) over
 * the files api/host/api_pki.ts writes for it, and machinectl talks to it through
 * its own connection code.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { renderConfigTemplate } from "../../config/mod.ts";
import { createLogger } from "../../logs/mod.ts";
import {
  type CertificateAuthority,
  createCertificateAuthority,
  generateClientConfig,
  type NodePki,
  writeClientConfig,
} from "../../pki/mod.ts";
import { waitForResource } from "../../runtime/testing.ts";
import { loadApidPki } from "../edge/mod.ts";
import { runCli as machinectl } from "../../machinectl/testing.ts";
import type { MachineEvent } from "../../events/mod.ts";
import { ADDRESS_STATUS } from "../../resources/mod.ts";
import { certificateSanList } from "./api_server_names.ts";
import { type ApiHandle, readImageCa, startNodeApiPki } from "./api_pki.ts";
import { ConfigKeeper } from "../../config/keeper/mod.ts";
import { Machined } from "../../core/mod.ts";
import { nodeTestApi } from "./testing_api.ts";

function newMachined() {
  return new Machined({ mode: "dev", pid1: false, logger: createLogger({ console: false }) });
}

function configText(ca: CertificateAuthority | undefined, hostname = "node-1") {
  return renderConfigTemplate({
    hostname,
    ...(ca ? { ca: { certPem: ca.certPem, keyPem: ca.keyPem } } : {}),
  });
}

/** A started machined whose keeper holds a valid config with a fresh CA. */
async function nodeWithConfig() {
  const m = newMachined();
  m.start();
  const keeper = new ConfigKeeper(m);
  assert.equal(
    (await keeper.apply(configText(await createCertificateAuthority()), "image")).state,
    "valid",
  );
  return { m, keeper };
}

/** An AddressStatus as the network controllers publish it; `id` is `link/address/prefix`. */
function addAddress(m: Machined, id: string, address: string, scope = "global") {
  m.store.create({
    type: ADDRESS_STATUS,
    namespace: "network",
    id,
    owner: "test",
    spec: {
      link: id.split("/")[0],
      linkIndex: 2,
      family: address.includes(":") ? "inet6" : "inet",
      address,
      prefixLen: Number(id.split("/")[2]),
      scope,
      flags: 0,
    },
  });
}

/** Records restarts; never listens. */
function fakeApi() {
  const started: NodePki[] = [];
  let restarts = 0;
  return {
    started,
    get restarts() {
      return restarts;
    },
    startApi(pki: NodePki): Promise<ApiHandle> {
      started.push(pki);
      return Promise.resolve({
        restartApid: () => {
          restarts++;
          return Promise.resolve();
        },
      });
    },
  };
}

async function nextEvent(m: Machined, action: string): Promise<MachineEvent> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 10_000);
  try {
    for await (const e of m.events.subscribe({ signal: abort.signal, tail: 1000 })) {
      if (e.action === action) return e;
    }
    throw new Error(`no ${action} event`);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * startNodeApiPki with this file's defaults: pki/ and apid-pki/ under `dir`,
 * fallback hostname "machined", a short debounce.
 */
function startPki(
  m: Machined,
  keeper: ConfigKeeper,
  dir: string,
  startApi: (p: NodePki) => Promise<ApiHandle>,
  debounceMs = 10,
) {
  return startNodeApiPki({
    machined: m,
    keeper,
    pkiDir: join(dir, "pki"),
    apidPkiDir: join(dir, "apid-pki"),
    fallbackHostname: "machined",
    startApi,
    debounceMs,
  });
}

Deno.test("a node booted with a typo config serves mTLS with that config's CA and is fixed over ApplyConfiguration", async () => {
  const dir = await Deno.makeTempDir({ prefix: "machined-typo-" });
  const m = newMachined();
  m.start();
  const keeper = new ConfigKeeper(m);
  const api = nodeTestApi(m, keeper, dir, join(dir, "apid-pki"));
  const ca = await createCertificateAuthority();
  const good = configText(ca);
  const typo = good.replace("hostname: node-1", "hostnme: node-1");
  assert.equal((await keeper.apply(typo, "image")).state, "invalid");
  m.stage.set("maintenance");
  const pki = await startPki(m, keeper, dir, (p) => api.startApi(p));
  try {
    assert.equal(pki.caSource, "badConfig");
    assert.ok(pki.apiStarted);
    const clientPath = join(dir, "machinectl.yaml");
    await writeClientConfig(
      clientPath,
      await generateClientConfig({
        secrets: { ca },
        role: "os:admin",
        name: "admin",
        context: "node-1",
        endpoints: [api.endpoint],
      }),
    );
    let r = await machinectl(clientPath, "get", "machinestatus", "-o", "json");
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /maintenance/);
    assert.match(r.out, /hostnme/);

    const fixed = join(dir, "fixed.yaml");
    await Deno.writeTextFile(fixed, good);
    r = await machinectl(clientPath, "apply-config", "-f", fixed);
    assert.equal(r.code, 0, r.err);
    assert.equal(m.stage.get(), "running");
    // The fixed config names the host: the certificate follows, apid restarts, same CA.
    const e = await nextEvent(m, "certificateReissued");
    assert.match(e.fields?.sans ?? "", /dns:node-1/);
    assert.equal(pki.caSource, "config");
    r = await machinectl(clientPath, "get", "machinestatus", "-o", "json");
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /running/);
  } finally {
    await pki.stop();
    await api.close();
    await m.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("no CA anywhere: the API does not start and MachineStatus says why", async () => {
  const dir = await Deno.makeTempDir({ prefix: "machined-noca-" });
  const m = newMachined();
  m.start();
  const keeper = new ConfigKeeper(m);
  assert.equal((await keeper.apply(configText(undefined), "image")).state, "valid");
  m.stage.set("running");
  const api = fakeApi();
  const pki = await startPki(m, keeper, dir, (p) => api.startApi(p));
  try {
    assert.equal(pki.caSource, "none");
    assert.equal(pki.apiStarted, false);
    assert.equal(api.started.length, 0);
    const st = await waitForResource(
      m.store,
      "MachineStatus",
      (r) => r.spec.unmetConditions.some((c) => c.name === "api"),
    );
    assert.equal(st.spec.ready, false);
    assert.match(
      st.spec.unmetConditions.find((c) => c.name === "api")!.reason,
      /API is not started: no CA in the config, on STATE or in the image/,
    );
    await assert.rejects(() => Deno.stat(join(dir, "pki", "ca.key")), Deno.errors.NotFound);
  } finally {
    await pki.stop();
    await m.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a typo config without a CA waits for STATE: its last good config brings the API up", async () => {
  const dir = await Deno.makeTempDir({ prefix: "machined-state-" });
  const m = newMachined();
  m.start();
  const keeper = new ConfigKeeper(m);
  const ca = await createCertificateAuthority();
  const typo = (configText(undefined)).replace("hostname:", "hostnme:");
  assert.equal((await keeper.apply(typo, "image")).state, "invalid");
  m.stage.set("maintenance");
  const api = fakeApi();
  const pki = await startPki(m, keeper, dir, (p) => api.startApi(p));
  try {
    assert.equal(pki.apiStarted, false);
    const state = join(dir, "state");
    await Deno.mkdir(state);
    await Deno.writeTextFile(join(state, "config.yaml"), configText(ca));
    await keeper.stateMounted(state);
    await waitForResource(
      m.store,
      "MachineStatus",
      (r) => !r.spec.unmetConditions.some((c) => c.name === "api"),
    );
    await pki.reconcileNow();
    assert.ok(pki.apiStarted);
    assert.equal(api.started[0].ca.certPem, ca.certPem);
    assert.equal(
      await Deno.readTextFile(join(dir, "apid-pki", "ca.crt")),
      ca.certPem,
    );
  } finally {
    await pki.stop();
    await m.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an address arriving after boot re-issues the server certificate once, at once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "machined-sans-" });
  const m = newMachined();
  m.start();
  const keeper = new ConfigKeeper(m);
  const ca = await createCertificateAuthority();
  const text = (configText(ca)).replace(
    /cert_sans: \[\]/,
    "cert_sans: [node-1.example.org, 203.0.113.10]",
  );
  assert.match(text, /node-1\.example\.org/);
  assert.equal((await keeper.apply(text, "image")).state, "valid");
  const api = fakeApi();
  const pki = await startPki(m, keeper, dir, (p) => api.startApi(p), 50);
  try {
    assert.equal(pki.caSource, "config");
    assert.deepEqual(certificateSanList(pki.server!.cert), [
      "dns:localhost",
      "dns:node-1",
      "dns:node-1.example.org",
      "ip:127.0.0.1",
      "ip:203.0.113.10",
      "ip:::1",
    ]);
    const reissued = nextEvent(m, "certificateReissued");
    addAddress(m, "eth0/10.0.0.5/24", "10.0.0.5");
    addAddress(m, "eth0/fd00::5/64", "fd00::5");
    const e = await reissued;
    assert.equal(
      e.fields?.sans,
      "dns:localhost,dns:node-1,dns:node-1.example.org,ip:10.0.0.5,ip:127.0.0.1," +
        "ip:203.0.113.10,ip:::1,ip:fd00::5",
    );
    await pki.reconcileNow();
    assert.equal(api.restarts, 1, "two addresses in one burst: one restart");
    const onDisk = await loadApidPki(join(dir, "apid-pki"));
    assert.deepEqual(certificateSanList(onDisk.server.cert), e.fields!.sans.split(","));
  } finally {
    await pki.stop();
    await m.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loopback and link-local addresses leave the window closed: the routable one is issued at once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "machined-sans-window-" });
  const { m, keeper } = await nodeWithConfig();
  const api = fakeApi();
  // A window far longer than nextEvent's 10 s: a reissue that waited for it fails the test.
  const pki = await startPki(m, keeper, dir, (p) => api.startApi(p), 600_000);
  try {
    addAddress(m, "lo/127.0.0.1/8", "127.0.0.1", "host");
    addAddress(m, "lo/::1/128", "::1", "host");
    addAddress(m, "eth0/fe80::1/64", "fe80::1", "link");
    await new Promise((r) => setTimeout(r, 100)); // the watch has seen them
    assert.equal(api.restarts, 0, "the names did not change: no reissue");
    const reissued = nextEvent(m, "certificateReissued");
    addAddress(m, "eth0/10.0.2.15/24", "10.0.2.15");
    const e = await reissued;
    assert.match(e.fields!.sans, /ip:10\.0\.2\.15/);
    assert.doesNotMatch(e.fields!.sans, /fe80/);
    assert.equal(api.restarts, 1);
  } finally {
    await pki.stop();
    await m.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a config with another CA, applied while the node runs, moves the API to that CA", async () => {
  const dir = await Deno.makeTempDir({ prefix: "machined-newca-" });
  const m = newMachined();
  m.start();
  const keeper = new ConfigKeeper(m);
  const [first, second] = [await createCertificateAuthority(), await createCertificateAuthority()];
  assert.equal((await keeper.apply(configText(first), "image")).state, "valid");
  const api = fakeApi();
  const pki = await startPki(m, keeper, dir, (p) => api.startApi(p));
  try {
    const changed = nextEvent(m, "caChanged");
    assert.equal((await keeper.apply(configText(second), "api")).state, "valid");
    await changed;
    await pki.reconcileNow();
    assert.equal(api.restarts, 1);
    assert.equal(await Deno.readTextFile(join(dir, "apid-pki", "ca.crt")), second.certPem);
    assert.equal(await Deno.readTextFile(join(dir, "pki", "ca.crt")), second.certPem);
    assert.equal(api.started[0].ca.certPem, second.certPem, "issued client configs follow");
  } finally {
    await pki.stop();
    await m.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readImageCa: none, a readable pair, and a broken pair reported, never thrown", async () => {
  const dir = await Deno.makeTempDir({ prefix: "machined-image-pki-" });
  try {
    assert.equal(await readImageCa(join(dir, "absent")), undefined);
    await Deno.writeTextFile(join(dir, "ca.key"), "key");
    const errors: unknown[] = [];
    assert.equal(await readImageCa(dir, (e) => errors.push(e)), undefined);
    assert.ok(errors[0] instanceof Deno.errors.NotFound, "ca.crt is missing");
    await Deno.writeTextFile(join(dir, "ca.crt"), "crt");
    assert.deepEqual(await readImageCa(dir), { certPem: "crt", keyPem: "key" });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a config CA whose key does not fit its certificate: no API, and MachineStatus says why", async () => {
  const dir = await Deno.makeTempDir({ prefix: "machined-badca-" });
  const m = newMachined();
  m.start();
  const keeper = new ConfigKeeper(m);
  const [a, b] = [await createCertificateAuthority(), await createCertificateAuthority()];
  const text = renderConfigTemplate({
    hostname: "node-1",
    ca: { certPem: a.certPem, keyPem: b.keyPem },
  });
  assert.equal((await keeper.apply(text, "image")).state, "valid");
  const api = fakeApi();
  const pki = await startPki(m, keeper, dir, (p) => api.startApi(p));
  try {
    assert.equal(pki.apiStarted, false);
    const st = await waitForResource(
      m.store,
      "MachineStatus",
      (r) => r.spec.unmetConditions.some((c) => c.name === "api"),
    );
    assert.match(
      st.spec.unmetConditions.find((c) => c.name === "api")!.reason,
      /cannot use the CA of the config in force/,
    );
  } finally {
    await pki.stop();
    await m.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an API that fails to start is reported and started on the next evaluation", async () => {
  const dir = await Deno.makeTempDir({ prefix: "machined-apifail-" });
  const { m, keeper } = await nodeWithConfig();
  const api = fakeApi();
  let fail = true;
  const pki = await startPki(
    m,
    keeper,
    dir,
    (p) => fail ? Promise.reject(new Error("socket in use")) : api.startApi(p),
  );
  try {
    assert.equal(pki.apiStarted, false);
    await waitForResource(
      m.store,
      "MachineStatus",
      (r) => r.spec.unmetConditions.some((c) => /failed to start: socket in use/.test(c.reason)),
    );
    fail = false;
    await pki.reconcileNow();
    assert.ok(pki.apiStarted);
    await waitForResource(
      m.store,
      "MachineStatus",
      (r) => !r.spec.unmetConditions.some((c) => c.name === "api"),
    );
  } finally {
    await pki.stop();
    await m.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a CA in use stays in use when the config that fixes a typo has none", async () => {
  const dir = await Deno.makeTempDir({ prefix: "machined-keepca-" });
  const m = newMachined();
  m.start();
  const keeper = new ConfigKeeper(m);
  const ca = await createCertificateAuthority();
  const typo = configText(ca).replace("hostname: node-1", "hostnme: node-1");
  assert.equal((await keeper.apply(typo, "image")).state, "invalid");
  const api = fakeApi();
  const pki = await startPki(m, keeper, dir, (p) => api.startApi(p));
  try {
    assert.equal(pki.caSource, "badConfig");
    assert.equal((await keeper.apply(configText(undefined), "api")).state, "valid");
    await pki.reconcileNow();
    assert.ok(pki.apiStarted);
    assert.equal(await Deno.readTextFile(join(dir, "apid-pki", "ca.crt")), ca.certPem);
    assert.ok(!m.conditions.list().some((c) => c.name === "api"));
  } finally {
    await pki.stop();
    await m.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("machine.ca.accepted alone changing rewrites apid's ca.crt (CA first) and restarts apid", async () => {
  const dir = await Deno.makeTempDir({ prefix: "machined-accepted-" });
  const m = newMachined();
  m.start();
  const keeper = new ConfigKeeper(m);
  const [ca, next] = [await createCertificateAuthority(), await createCertificateAuthority()];
  assert.equal((await keeper.apply(configText(ca), "image")).state, "valid");
  const api = fakeApi();
  const pki = await startPki(m, keeper, dir, (p) => api.startApi(p));
  try {
    const accepting = configText(ca) +
      "    accepted:\n      - |\n" + next.certPem.trimEnd().replace(/^/gm, "        ") + "\n";
    const changed = nextEvent(m, "acceptedCasChanged");
    assert.equal((await keeper.apply(accepting, "api")).state, "valid");
    await changed;
    await pki.reconcileNow();
    assert.equal(api.restarts, 1);
    const bundle = await Deno.readTextFile(join(dir, "apid-pki", "ca.crt"));
    assert.equal(bundle, `${ca.certPem.trim()}\n${next.certPem.trim()}\n`);
    assert.equal(await Deno.readTextFile(join(dir, "pki", "ca.crt")), ca.certPem, "the CA stays");
    assert.equal(api.started[0].ca.certPem, ca.certPem, "client configs are still issued by it");
    await pki.reconcileNow();
    assert.equal(api.restarts, 1, "nothing changed: no restart");
  } finally {
    await pki.stop();
    await m.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("servedNames are the served certificate's: a re-issue counts once apid was signalled", async () => {
  const dir = await Deno.makeTempDir({ prefix: "machined-served-" });
  const { m, keeper } = await nodeWithConfig();
  let release!: () => void;
  const signalled = new Promise<void>((r) => (release = r));
  const restarting = Promise.withResolvers<void>();
  const pki = await startPki(m, keeper, dir, () =>
    Promise.resolve({
      restartApid: () => {
        restarting.resolve();
        return signalled;
      },
    }), 10);
  try {
    const first = pki.servedNames;
    assert.deepEqual(first, certificateSanList(pki.server!.cert), "the API started: its names");
    const before = pki.server;
    addAddress(m, "eth0/10.0.0.5/24", "10.0.0.5");
    await restarting.promise;
    assert.notEqual(pki.server, before, "re-issued");
    assert.deepEqual(pki.servedNames, first, "apid not yet signalled: the old names are served");
    assert.ok(!pki.servedNames!.includes("ip:10.0.0.5"));
    release();
    await pki.reconcileNow();
    assert.deepEqual(pki.servedNames, certificateSanList(pki.server!.cert));
    assert.ok(pki.servedNames!.includes("ip:10.0.0.5"));
  } finally {
    release();
    await pki.stop();
    await m.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
