/**
 * The body of wireguard_root_test.ts, run once it has made namespaces `a` and `b` joined by
 * a veth pair (192.168.241.1/24 in `a`, .2/24 in `b`). wireguard-go devices are started in
 * them through the process backend; `wg` reaches each over its UAPI socket
 * (/var/run/wireguard/<name>.sock), which is not tied to a namespace. Addresses and MTU are
 * set with `ip -n` here: on a node the network controllers set them, in the node's own
 * namespace.
 * @module
 */
import assert from "node:assert/strict";
import { parseMachineConfig } from "../../config/mod.ts";
import { configSha256, redactConfigSecrets } from "../../config/mod.ts";
import { nativeProcessBackend, type ProcessHandle } from "../../platform/process/mod.ts";
import {
  generatePrivateKey,
  publicKeyOf,
  WgWireguardBackend,
  WIREGUARD_CONFORMANCE,
} from "../../platform/wireguard/mod.ts";
import {
  LINK_STATUS,
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  type ResourceSpecs,
  WIREGUARD_STATUS,
} from "../../resources/mod.ts";
import { ControllerRuntime, Store } from "../../runtime/mod.ts";
import { waitForResource } from "../../runtime/testing.ts";
import { WireguardController } from "./wireguard_controller.ts";

const PATH = "/usr/sbin:/usr/bin:/sbin:/bin";
const process = nativeProcessBackend();

/**
 * `ip` through the process backend: once it runs, its reaper collects every child, so
 * Deno.Command (testing_ip.ts) would lose its own child's exit (ECHILD).
 */
async function ip(...args: string[]): Promise<string> {
  const h = await process.spawn({ argv: ["ip", ...args], env: { PATH } });
  const [out, err, exit] = await Promise.all([
    new Response(h.stdout).text(),
    new Response(h.stderr).text(),
    h.exited,
  ]);
  if (exit.code !== 0) throw new Error(`ip ${args.join(" ")}: ${err.trim()}`);
  return out;
}

/** What the root test made. */
export interface WireguardNetns {
  a: string;
  b: string;
  tag: string;
  wireguardGo: string;
  wg: string;
}

/** A wireguard-go device `name` in namespace `ns`, up once its UAPI socket exists. */
async function startDevice(env: WireguardNetns, ns: string, name: string) {
  const h = await process.spawn({
    argv: ["ip", "netns", "exec", ns, env.wireguardGo, "-f", name],
    env: { PATH, WG_PROCESS_FOREGROUND: "1" },
    stdout: "null",
    stderr: "null",
  });
  const sock = `/var/run/wireguard/${name}.sock`;
  for (let i = 0; i < 100; i++) {
    if (await Deno.stat(sock).then(() => true, () => false)) return h;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`wireguard-go made no ${sock} within 5 s`);
}

async function stopDevice(h: ProcessHandle, name: string) {
  await process.signal({ pid: h.pid }, "SIGTERM").catch(() => {});
  await Promise.all([h.exited, drain(h.stdout), drain(h.stderr)]);
  await Deno.remove(`/var/run/wireguard/${name}.sock`).catch(() => {});
}

async function drain(s: ReadableStream<Uint8Array> | null) {
  if (s) await new Response(s).arrayBuffer();
}

/**
 * `ping` from namespace `ns` with DF set and `size` bytes of IP packet: its exit and output.
 * Three replies within 12 s: the first packets may wait for a handshake retry (5 s) when the
 * initiator's keepalive reached the peer before its port was set.
 */
async function ping(ns: string, to: string, size: number) {
  const h = await process.spawn({
    argv: [
      "ip",
      "netns",
      "exec",
      ns,
      "ping",
      "-c",
      "3",
      "-w",
      "12",
      "-M",
      "do",
      "-s",
      String(size - 28),
      to,
    ],
    env: { PATH },
  });
  const [out, err, exit] = await Promise.all([
    new Response(h.stdout).text(),
    new Response(h.stderr).text(),
    h.exited,
  ]);
  return { code: exit.code, out: out + err };
}

/** Runs the conformance suite against `wg`, then the tunnel between the two namespaces. */
export async function runWireguardSuite(env: WireguardNetns): Promise<void> {
  const backend = new WgWireguardBackend({
    process,
    wg: env.wg,
    stateDir: await Deno.makeTempDir(),
  });
  let i = 0;
  for (const [name, run] of Object.entries(WIREGUARD_CONFORMANCE)) {
    const dev = `wgc${env.tag}${i++}`;
    const h = await startDevice(env, env.a, dev);
    try {
      await run({ backend, device: dev });
    } catch (e) {
      throw new Error(`wg conformance "${name}" failed: ${e}`, { cause: e });
    } finally {
      await stopDevice(h, dev);
    }
  }
  await tunnel(env, backend);
}

/** Both ends in one node's config; the responder first, so that the initiator's first keepalive finds its port set. */
async function tunnelConfig(devA: string, devB: string) {
  const [privA, privB] = [generatePrivateKey(), generatePrivateKey()];
  const [pubA, pubB] = [await publicKeyOf(privA), await publicKeyOf(privB)];
  const yaml = `version: v1alpha1
machine:
  hostname: wg-test
  network:
    wireguard:
      - name: ${devB}
        private_key: ${privB}
        listen_port: 51821
        addresses: ["10.99.0.2/24"]
        peers:
          - { public_key: ${pubA}, allowed_ips: ["10.99.0.1/32"] }
      - name: ${devA}
        private_key: ${privA}
        listen_port: 51820
        addresses: ["10.99.0.1/24"]
        peers:
          - { public_key: ${pubB}, endpoint: "192.168.241.2:51821", allowed_ips: ["10.99.0.2/32"], persistent_keepalive: 25 }
`;
  const parsed = parseMachineConfig(yaml, "wg.yaml");
  if (!parsed.ok) throw new Error(parsed.errors.map((e) => e.format()).join("\n"));
  return { config: parsed.config, secrets: [privA, privB], pubA, pubB };
}

/** Address and MTU on `dev` (the network controllers' part on a node), and its LinkStatus. */
async function linkUp(
  store: Store<ResourceSpecs>,
  ns: string,
  dev: string,
  addr: string,
  mtu: number,
) {
  await ip("-n", ns, "addr", "add", addr, "dev", dev);
  await ip("-n", ns, "link", "set", dev, "mtu", String(mtu), "up");
  await store.modify({ type: LINK_STATUS, namespace: "network", id: dev }, "test", () => ({
    name: dev,
    index: 0,
    type: "none",
    kind: "tun",
    mac: "",
    mtu,
    up: true,
    operstate: "unknown",
    physical: false,
    master: "",
    ours: false,
  }));
}

async function tunnel(env: WireguardNetns, backend: WgWireguardBackend) {
  const devA = `wga${env.tag}`, devB = `wgb${env.tag}`;
  const { config, secrets, pubA, pubB } = await tunnelConfig(devA, devB);
  const mtu = config.machine.network.wireguard[0].mtu;
  const hA = await startDevice(env, env.a, devA);
  const hB = await startDevice(env, env.b, devB);
  const store = new Store<ResourceSpecs>();
  const runtime = new ControllerRuntime(store);
  runtime.register(
    new WireguardController({ backend, secrets: () => config, resyncInterval: 200 }),
  );
  runtime.start();
  try {
    await linkUp(store, env.a, devA, "10.99.0.1/24", mtu);
    await linkUp(store, env.b, devB, "10.99.0.2/24", mtu);
    await store.modify(
      { type: MACHINE_CONFIG, namespace: "config", id: MACHINE_CONFIG_ID },
      "test",
      () => ({
        source: "wg.yaml",
        config: redactConfigSecrets(config),
        sha256: configSha256(config),
      }),
    );
    const ready = (dev: string) =>
      waitForResource(
        store,
        WIREGUARD_STATUS,
        (r) => r.spec.name === dev && r.spec.configured,
        10_000,
      );
    assert.equal((await ready(devA)).spec.publicKey, pubA);
    assert.equal((await ready(devB)).spec.publicKey, pubB);
    await proveTunnel(env, store, devA, pubB, secrets);
  } finally {
    await runtime.stop();
    await stopDevice(hA, devA);
    await stopDevice(hB, devB);
  }
}

/** The DF pings and the handshake in WireguardStatus. */
async function proveTunnel(
  env: WireguardNetns,
  store: Store<ResourceSpecs>,
  devA: string,
  pubB: string,
  secrets: string[],
) {
  const t0 = performance.now();
  const ok = await ping(env.a, "10.99.0.2", 1380);
  const pingMs = performance.now() - t0;
  assert.equal(ok.code, 0, `1380-byte DF ping through the tunnel: ${ok.out}`);
  assert.match(ok.out, /1360 bytes from 10\.99\.0\.2/);
  const big = await ping(env.a, "10.99.0.2", 1421);
  assert.notEqual(big.code, 0, "a 1421-byte DF packet does not fit the 1420 MTU");
  assert.match(big.out, /message too long, mtu=1420/i);
  const shaken = await waitForResource(
    store,
    WIREGUARD_STATUS,
    (r) =>
      r.spec.name === devA && r.spec.peers[0]?.lastHandshake !== undefined &&
      r.spec.peers[0].rxBytes > 0,
    10_000,
  );
  const peer = shaken.spec.peers[0];
  assert.equal(peer.publicKey, pubB);
  assert.equal(peer.endpoint, "192.168.241.2:51821");
  assert.ok(Date.parse(peer.lastHandshake!) > Date.now() - 60_000, peer.lastHandshake);
  const text = JSON.stringify(shaken.spec);
  assert.ok(secrets.every((k) => !text.includes(k)), "no private key in the status");
  console.error(
    `wireguard: 3 x 1380-byte DF pings in ${pingMs.toFixed(0)} ms; ${devA} rx ${peer.rxBytes} ` +
      `tx ${peer.txBytes} B, handshake ${peer.lastHandshake}`,
  );
}
