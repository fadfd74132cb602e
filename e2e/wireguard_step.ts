/**
 * node_network_test.ts's WireGuard step: the node's config carries `wg0` (10.98.0.1/24, listen
 * port 51820, one peer: the host); inside the test's network namespace wireguard-go makes the
 * host's end (10.98.0.2/24) and `wg` gives it the node as a peer at its DHCP address. A
 * 1380-byte ping with DF set from the namespace crosses the tunnel to the node, and
 * `machinectl get wireguardstatus` on the node shows the host's handshake. The node's end is
 * the kernel's wireguard module (loaded at boot) configured by machined's `wg`; the host's
 * is wireguard-go, since the build host's kernel has no module.
 * @module
 */
import assert from "node:assert/strict";
import { generatePrivateKey, publicKeyOf } from "../platform/wireguard/mod.ts";
import { parseDocs } from "./helpers.ts";

const home = Deno.env.get("HOME") ?? "/root";
/** wireguard-go (`go install golang.zx2c4.com/wireguard@…`, .ci/install.sh), where installed. */
export const WIREGUARD_GO = [
  Deno.env.get("MACHINED_WIREGUARD_GO") ?? "",
  `${home}/go/bin/wireguard`,
  "/usr/local/bin/wireguard-go",
].find((p) => {
  try {
    return p !== "" && Deno.statSync(p).isFile;
  } catch {
    return false;
  }
});

/** The two ends' keys: the node's private key goes in its config, the host's stays here. */
export interface WireguardKeys {
  node: string;
  nodePublic: string;
  host: string;
  hostPublic: string;
}

/** Fresh keys for one run. */
export async function wireguardKeys(): Promise<WireguardKeys> {
  const node = generatePrivateKey(), host = generatePrivateKey();
  return { node, nodePublic: await publicKeyOf(node), host, hostPublic: await publicKeyOf(host) };
}

/** `config` (a rendered machine config) with the node's `wg0` added to `machine.network`. */
export function withWireguard(config: string, keys: WireguardKeys): string {
  const section = [
    "    wireguard:",
    "      - name: wg0",
    `        private_key: ${keys.node}`,
    "        listen_port: 51820",
    '        addresses: ["10.98.0.1/24"]',
    "        peers:",
    `          - { public_key: ${keys.hostPublic}, allowed_ips: ["10.98.0.2/32"] }`,
  ];
  const lines = config.split("\n");
  const at = lines.findIndex((l) => l.startsWith("    nameservers:"));
  assert.ok(at > 0, "the rendered config has machine.network.nameservers");
  lines.splice(at, 0, ...section);
  return lines.join("\n");
}

async function run(args: string[], stdin?: string) {
  const p = new Deno.Command(args[0], {
    args: args.slice(1),
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const w = p.stdin.getWriter();
    await w.write(new TextEncoder().encode(stdin));
    await w.close();
  }
  const out = await p.output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, out: text(out.stdout) + text(out.stderr) };
}

async function must(args: string[], stdin?: string): Promise<string> {
  const r = await run(args, stdin);
  if (r.code !== 0) throw new Error(`${args.join(" ")}: ${r.out}`);
  return r.out;
}

/**
 * The host's end in `ns`, peered with the node at `nodeAddress`; the ping and the status
 * check; returns the ping's duration (ms).
 */
export async function wireguardThroughTunnel(
  ns: string,
  nodeAddress: string,
  keys: WireguardKeys,
  getWireguard: () => Promise<{ code: number; out: string; err: string }>,
): Promise<number> {
  const dev = "wgh0";
  const go = new Deno.Command("ip", {
    args: ["netns", "exec", ns, WIREGUARD_GO!, "-f", dev],
    env: { WG_PROCESS_FOREGROUND: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    const sock = `/var/run/wireguard/${dev}.sock`;
    for (let i = 0; i < 100 && !(await Deno.stat(sock).then(() => true, () => false)); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    // The host's key on stdin (test keys: the node's own backend uses a 0600 file).
    await must(["wg", "set", dev, "private-key", "/dev/stdin"], keys.host + "\n");
    await must([
      "wg",
      "set",
      dev,
      "peer",
      keys.nodePublic,
      "endpoint",
      `${nodeAddress}:51820`,
      "allowed-ips",
      "10.98.0.1/32",
      "persistent-keepalive",
      "5",
    ]);
    await must(["ip", "-n", ns, "addr", "add", "10.98.0.2/24", "dev", dev]);
    await must(["ip", "-n", ns, "link", "set", dev, "mtu", "1420", "up"]);
    const t0 = performance.now();
    const ping = await run([
      "ip",
      "netns",
      "exec",
      ns,
      "ping",
      "-c",
      "3",
      "-w",
      "60",
      "-M",
      "do",
      "-s",
      "1352",
      "10.98.0.1",
    ]);
    const ms = performance.now() - t0;
    assert.equal(ping.code, 0, `1380-byte DF ping to the node through WireGuard: ${ping.out}`);
    assert.match(ping.out, /1360 bytes from 10\.98\.0\.1/);
    // WireguardStatus re-reads the device every 10 s: the handshake shows within one period.
    let status = await getWireguard();
    let spec = wireguardSpec(status.out);
    for (let i = 0; i < 30 && status.code === 0 && !spec?.peers[0]?.lastHandshake; i++) {
      await new Promise((r) => setTimeout(r, 1000));
      status = await getWireguard();
      spec = wireguardSpec(status.out);
    }
    assert.equal(status.code, 0, status.err);
    assert.equal(spec?.publicKey, keys.nodePublic);
    assert.equal(spec?.peers[0]?.publicKey, keys.hostPublic);
    assert.ok(spec?.peers[0]?.lastHandshake, `no handshake in ${status.out}`);
    assert.ok(!status.out.includes(keys.node), "the node's private key is not shown");
    return ms;
  } finally {
    try {
      go.kill("SIGTERM");
    } catch { /* already gone */ }
    await go.status;
    await Deno.remove(`/var/run/wireguard/${dev}.sock`).catch(() => {});
  }
}

/** The first WireguardStatus in `machinectl get -o json` output. */
function wireguardSpec(out: string) {
  const [wg0] = out.trim() ? parseDocs(out) : [];
  return wg0?.spec as
    | { publicKey: string; peers: { publicKey: string; lastHandshake?: string }[] }
    | undefined;
}
