/**
 * Helpers for suites that run the network controllers on the native backend
 * inside a throwaway network namespace (`netns_suite.ts`,
 * `links_netns_suite.ts`): `ip` and its JSON views, and a runtime with every
 * network controller around one test.
 * @module
 */
import type { ResourceSpecs } from "../../resources/mod.ts";
import { MACHINE_CONFIG, MACHINE_CONFIG_ID } from "../../resources/mod.ts";
import { ControllerRuntime, Store, systemClock } from "../../runtime/mod.ts";
import { parseMachineConfig } from "../../config/mod.ts";
import { NativeNetworkBackend } from "../../platform/network/mod.ts";
import { FakeIdentityBackend } from "../../platform/identity/mod.ts";
import { createNetworkControllers, type NetworkDeps } from "./mod.ts";
import { ip } from "./testing_ip.ts";

export { ip };

/** iproute2's independent view: `address/prefix` on a link (global scope only). */
export async function addrs(link: string): Promise<string[]> {
  const [info] = JSON.parse(await ip("-j", "addr", "show", "dev", link));
  return (info.addr_info as Array<{ local: string; prefixlen: number; scope: string }>)
    .filter((a) => a.scope === "global")
    .map((a) => `${a.local}/${a.prefixlen}`)
    .sort();
}

/** iproute2's routes matching `filter`, as JSON. */
export async function routes(...filter: string[]): Promise<Array<Record<string, unknown>>> {
  return JSON.parse(await ip("-j", "route", "show", ...filter));
}

/** Run `f` with the network controllers on the native backend, following `yaml`. */
export async function withNetwork(
  deps: Partial<NetworkDeps>,
  yaml: string,
  f: (env: {
    store: Store<ResourceSpecs>;
    setConfig: (yaml: string) => Promise<void>;
    resolvConf: string;
    stop: () => Promise<void>;
  }) => Promise<void>,
) {
  const dir = await Deno.makeTempDir({ prefix: "machined-netns-" });
  const store = new Store<ResourceSpecs>();
  const runtime = new ControllerRuntime(store, { clock: systemClock });
  const domain = createNetworkControllers({
    backend: new NativeNetworkBackend(),
    identity: new FakeIdentityBackend(),
    resolvConfPath: `${dir}/resolv.conf`,
    autoDhcp: false,
    ...deps,
  });
  for (const c of domain.controllers) runtime.register(c);
  const setConfig = async (text: string) => {
    const parsed = parseMachineConfig(text, "netns.yaml");
    if (!parsed.ok) throw new Error(parsed.errors.map((e) => e.format()).join("\n"));
    await store.modify(
      { type: MACHINE_CONFIG, namespace: "config", id: MACHINE_CONFIG_ID },
      "test",
      () => ({ source: "netns.yaml", config: parsed.config }),
    );
  };
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await runtime.stop();
    await domain.shutdown();
  };
  await setConfig(yaml);
  runtime.start();
  try {
    await f({ store, setConfig, resolvConf: `${dir}/resolv.conf`, stop });
  } finally {
    await stop();
    await Deno.remove(dir, { recursive: true });
  }
}
