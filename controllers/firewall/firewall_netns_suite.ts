/**
 * The firewall against real nftables and real traffic, meant to run only inside the throwaway
 * network namespace firewall_root_test.ts creates (`ip netns exec`, MACHINED_FW_NETNS set, the
 * peer namespace in MACHINED_FW_PEER). Without those it registers nothing, so it can never
 * touch the host's ruleset. The node side holds fw0 (10.66.0.1/24, fd66::1/64); the peer fwp0
 * (10.66.0.2/24, fd66::2/64). Children start through the process backend, as machined's do.
 * @module
 */
import assert from "node:assert/strict";
import {
  FIREWALL_CONFORMANCE,
  type FirewallBackend,
  NftFirewallBackend,
} from "../../platform/firewall/mod.ts";
import { nativeProcessBackend } from "../../platform/process/mod.ts";
import { parseMachineConfig } from "../../config/mod.ts";
import {
  FIREWALL_STATUS,
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  type ResourceSpecs,
} from "../../resources/mod.ts";
import { ControllerRuntime, Store } from "../../runtime/mod.ts";
import { waitForResource } from "../../runtime/testing.ts";
import { compileFirewall } from "./compile.ts";
import { FirewallController } from "./firewall_controller.ts";

const NODE = Deno.env.get("MACHINED_FW_NETNS");
const PEER = Deno.env.get("MACHINED_FW_PEER") ?? "";
const process = nativeProcessBackend();

/** Runs argv to its end through the process backend: exit code and output. */
async function run(argv: string[]): Promise<{ code: number | null; out: string }> {
  const h = await process.spawn({ argv, env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" } });
  const text = async (s: ReadableStream<Uint8Array> | null) =>
    s ? await new Response(s).text() : "";
  const [out, err, exit] = await Promise.all([text(h.stdout), text(h.stderr), h.exited]);
  return { code: exit.code, out: out + err };
}

/** Exit of a TCP connect from the peer: 0 connected, 124 timed out (dropped), 1 refused. */
async function peerConnect(host: string, port: number): Promise<number | null> {
  return (await run([
    "ip",
    "netns",
    "exec",
    PEER,
    "timeout",
    "2",
    "bash",
    "-c",
    `exec 3<>/dev/tcp/${host}/${port}`,
  ])).code;
}

async function nft(...args: string[]): Promise<string> {
  const r = await run(["nft", ...args]);
  if (r.code !== 0) throw new Error(`nft ${args.join(" ")}: ${r.out}`);
  return r.out;
}

const FIREWALL = `    firewall:
      default: block
      admin_subnets: [fd66::/64]
      rules:
        - { name: web, ports: [8080], protocol: tcp, sources: [10.66.0.0/24] }
`;

async function withController(
  backend: FirewallBackend,
  f: (store: Store<ResourceSpecs>) => Promise<void>,
) {
  const store = new Store<ResourceSpecs>();
  const runtime = new ControllerRuntime(store);
  runtime.register(new FirewallController({ backend, resyncInterval: 200 }));
  const parsed = parseMachineConfig(
    `version: v1alpha1\nmachine:\n  hostname: n\n  network:\n${FIREWALL}`,
    "fw.yaml",
  );
  if (!parsed.ok) throw new Error(parsed.errors.map((e) => e.format()).join("\n"));
  store.create({
    type: MACHINE_CONFIG,
    namespace: "config",
    id: MACHINE_CONFIG_ID,
    owner: "test",
    spec: { source: "fw.yaml", config: parsed.config },
  });
  runtime.start();
  try {
    await f(store);
  } finally {
    await runtime.stop();
  }
}

/** Listeners on every port the cases use, accepting and closing each connection. */
function listen(ports: number[]): () => void {
  const listeners = ports.map((port) => Deno.listen({ hostname: "::", port }));
  for (const l of listeners) {
    (async () => {
      try {
        for await (const c of l) c.close();
      } catch { /* closed */ }
    })();
  }
  return () => listeners.forEach((l) => l.close());
}

/** A one-shot "pong" server in the peer namespace, on 10.66.0.2:7070; `done` when it exits. */
function peerPong(): { done: Promise<{ code: number | null; out: string }> } {
  const code = "const l = Deno.listen({ hostname: '10.66.0.2', port: 7070 });" +
    "const c = await l.accept(); await c.write(new TextEncoder().encode('pong'));" +
    "c.close(); l.close();";
  return { done: run(["ip", "netns", "exec", PEER, Deno.execPath(), "eval", code]) };
}

async function connectOut(): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      const c = await Deno.connect({ hostname: "10.66.0.2", port: 7070 });
      const buf = new Uint8Array(16);
      const n = await c.read(buf);
      c.close();
      return new TextDecoder().decode(buf.subarray(0, n ?? 0));
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

if (NODE) {
  // Never the host's ruleset: the outer test passed its own namespace; this one must differ.
  const mine = Deno.readLinkSync("/proc/self/ns/net");
  if (mine === Deno.env.get("MACHINED_FW_HOST_NET")) throw new Error(`${mine} is the host's`);
  const dir = await Deno.makeTempDir({ prefix: "machined-fw-" });
  const backend = new NftFirewallBackend({ process, stateDir: dir });

  for (const [name, fn] of Object.entries(FIREWALL_CONFORMANCE)) {
    Deno.test(`nft conformance: ${name}`, () =>
      fn({
        backend,
        deleteBehindBack: async (t) => void await nft("delete", "table", t.family, t.name),
        addBehindBack: async (t, rule) =>
          void await nft("add", "rule", t.family, t.name, "input", ...rule.split(" ")),
      }));
  }

  Deno.test("the ruleset nft lists is the intent: one table, policy, admin and rule matches", async () => {
    await withController(backend, async (store) => {
      await waitForResource(store, FIREWALL_STATUS, (r) => r.spec.inForce, 10_000);
      const all = JSON.parse(await nft("-j", "list", "ruleset")).nftables as Record<
        string,
        Record<string, unknown>
      >[];
      const tables = all.filter((o) => o.table).map((o) => `${o.table.family} ${o.table.name}`);
      assert.deepEqual(tables, ["inet machined"]);
      const chain = all.find((o) => o.chain)!.chain;
      assert.equal(chain.hook, "input");
      assert.equal(chain.policy, "drop");
      const rules = all.filter((o) => o.rule).map((o) => o.rule);
      const byComment = (c: string) =>
        rules.filter((r) => r.comment === c).map((r) => JSON.stringify(r.expr));
      const [web] = byComment("rule web");
      assert.match(web, /"dport"\}\},"right":\{"set":\[8080\]\}|"dport"\}\},"right":8080/);
      assert.match(web, /"saddr"\}\},"right":\{"prefix":\{"addr":"10\.66\.0\.0","len":24\}\}/);
      const [admin] = byComment("admin api");
      assert.match(admin, /50000/);
      assert.match(admin, /"addr":"fd66::","len":64/);
      assert.equal(rules[0].comment, "loopback");
      assert.equal(rules[1].comment, "replies");
    });
  });

  Deno.test("traffic from the peer: allowed port, blocked port, admin 50000, replies, re-apply", async () => {
    const stop = listen([8080, 9090, 50000]);
    try {
      await withController(backend, async (store) => {
        await waitForResource(store, FIREWALL_STATUS, (r) => r.spec.inForce, 10_000);
        assert.equal(await peerConnect("10.66.0.1", 8080), 0, "a rule's port from its source");
        assert.equal(await peerConnect("10.66.0.1", 9090), 124, "other ports dropped (no RST)");
        assert.equal(await peerConnect("fd66::1", 50000), 0, "the API from an admin subnet");
        assert.equal(await peerConnect("10.66.0.1", 50000), 124, "the API from elsewhere");
        const pong = peerPong();
        assert.equal(await connectOut(), "pong", "the reply to an outgoing connection passes");
        assert.equal((await pong.done).code, 0);

        await nft("delete", "table", "inet", "machined"); // someone else
        assert.equal(await peerConnect("10.66.0.1", 9090), 0, "open while the table is gone");
        const s = await waitForResource(
          store,
          FIREWALL_STATUS,
          (r) => r.spec.driftReapplies === 1 && r.spec.inForce,
          10_000,
        );
        assert.equal(s.spec.error, "");
        assert.equal(await peerConnect("10.66.0.1", 9090), 124, "dropped again once re-applied");
        assert.equal(await peerConnect("10.66.0.1", 8080), 0);
      });
    } finally {
      stop();
    }
  });

  Deno.test("cost: applying a 50-rule ruleset, and one drift check", async () => {
    const text = compileFirewall({
      default: "block",
      adminSubnets: ["fd66::/64"],
      icmpRate: 20,
      apiPort: 50000,
      rules: Array.from({ length: 50 }, (_, i) => ({
        name: `r${i}`,
        protocol: i % 2 ? "udp" as const : "tcp" as const,
        ports: [String(10_000 + i), `${20_000 + i * 10}-${20_005 + i * 10}`],
        sources: [`10.${i}.0.0/16`, `fd00:${i.toString(16)}::/32`],
        except: [`10.${i}.9.0/24`],
      })),
    });
    const times = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const apply: number[] = [], read: number[] = [];
    for (let i = 0; i < 10; i++) {
      let t = performance.now();
      await backend.apply(text);
      apply.push(performance.now() - t);
      t = performance.now();
      await backend.read({ family: "inet", name: "machined" });
      read.push(performance.now() - t);
    }
    console.log(
      `FIREWALL_COST apply50_ms=${times(apply).toFixed(1)} read_ms=${times(read).toFixed(1)}`,
    );
    await backend.remove({ family: "inet", name: "machined" });
  });

  globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
}
