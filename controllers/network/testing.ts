/**
 * Test support for the network controllers: a fresh store and runtime with
 * every network controller registered against the fake network and identity
 * backends, a temporary resolv.conf, and helpers to set the machine config.
 * @module
 */
import { parseMachineConfig } from "../../config/mod.ts";
import { MACHINE_CONFIG, MACHINE_CONFIG_ID } from "../../resources/mod.ts";
import type { ResourceSpecs } from "../../resources/mod.ts";
import {
  type Clock,
  ControllerRuntime,
  type ControllerStats,
  FakeClock,
  Store,
} from "../../runtime/mod.ts";
import { FakeNetworkBackend } from "../../platform/network/mod.ts";
import { FakeIdentityBackend } from "../../platform/identity/mod.ts";
import { EventBus } from "../../events/mod.ts";
import { createNetworkControllers, type NetworkDeps } from "./mod.ts";

/** A machine config YAML with `hostname` and a `network` section (already indented YAML). */
export function configYaml(network: string, extra = ""): string {
  return `version: v1alpha1\nmachine:\n  hostname: node-1\n${extra}  network:\n${network}`;
}

/** One running test environment. */
export interface NetworkTestEnv {
  backend: FakeNetworkBackend;
  identity: FakeIdentityBackend;
  store: Store<ResourceSpecs>;
  runtime: ControllerRuntime<ResourceSpecs>;
  events: EventBus;
  resolvConfPath: string;
  /** Parse `yaml` and create or replace the MachineConfig resource. */
  setConfig(yaml: string): Promise<void>;
  /** Latest stats of a controller. */
  stats(name: string): ControllerStats | undefined;
  /** Resolves once `name` published stats matching `pred` (or already has). */
  waitStats(name: string, pred: (s: ControllerStats) => boolean): Promise<ControllerStats>;
  start(): void;
  /** Stop the runtime, release DHCP, remove the temp dir. */
  close(): Promise<void>;
}

/** Build an environment; the caller seeds the backend, then calls `start()`. */
export async function networkTestEnv(
  options: { clock?: Clock; deps?: Partial<NetworkDeps> } = {},
): Promise<NetworkTestEnv> {
  const backend = new FakeNetworkBackend();
  const identity = new FakeIdentityBackend();
  const events = new EventBus();
  const dir = await Deno.makeTempDir({ prefix: "machined-net-" });
  const resolvConfPath = `${dir}/resolv.conf`;
  const clock = options.clock ?? new FakeClock(Date.now());
  const store = new Store<ResourceSpecs>({ clock });
  const latest = new Map<string, ControllerStats>();
  let waiters: Array<() => void> = [];
  const runtime = new ControllerRuntime(store, {
    clock,
    onStats: (s) => {
      latest.set(s.name, s);
      for (const w of waiters.splice(0)) w();
    },
  });
  const domain = createNetworkControllers({
    backend,
    identity,
    events,
    resolvConfPath,
    dhcpReplyTimeoutMs: 200,
    dhcp6ReplyTimeoutMs: 200,
    // Events drive the status controllers; no periodic re-list in tests.
    watchWindowMs: 0,
    ...options.deps,
  });
  for (const c of domain.controllers) runtime.register(c);
  return {
    backend,
    identity,
    store,
    runtime,
    events,
    resolvConfPath,
    async setConfig(yaml) {
      const parsed = parseMachineConfig(yaml, "test.yaml");
      if (!parsed.ok) throw new Error(parsed.errors.map((e) => e.format()).join("\n"));
      await store.modify(
        { type: MACHINE_CONFIG, namespace: "config", id: MACHINE_CONFIG_ID },
        "test",
        () => ({ source: "test.yaml", config: parsed.config }),
      );
    },
    stats: (name) => latest.get(name),
    async waitStats(name, pred) {
      const deadline = performance.now() + 5000;
      for (;;) {
        const s = latest.get(name);
        if (s && pred(s)) return s;
        if (performance.now() > deadline) throw new Error(`Timed out waiting for stats of ${name}`);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, 100);
          waiters.push(() => {
            clearTimeout(t);
            resolve();
          });
        });
      }
    },
    start: () => runtime.start(),
    async close() {
      await runtime.stop();
      await domain.shutdown();
      waiters = [];
      await Deno.remove(dir, { recursive: true });
    },
  };
}
