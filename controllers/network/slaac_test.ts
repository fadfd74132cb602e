import assert from "node:assert/strict";
import { systemClock } from "../../runtime/mod.ts";
import { waitForResource } from "../../runtime/testing.ts";
import { FakeNetworkBackend, type Ipv6ConfKey } from "../../platform/network/mod.ts";
import { configYaml, type NetworkTestEnv, networkTestEnv } from "./testing.ts";
import { slaacSettings } from "./link_spec.ts";

const slaacConfig = (slaac: string) =>
  configYaml(`    interfaces:
      - name: eth0
${slaac}        addresses: ["fd00::2/64"]
        routes:
          - { to: default, via: "fd00::1" }
`);

/** Every setIpv6Conf call, and a wait for the fake's settings to match a predicate. */
function recordConf(backend: FakeNetworkBackend) {
  const writes: string[] = [];
  let wake = () => {};
  const set = backend.setIpv6Conf.bind(backend);
  backend.setIpv6Conf = async (link: string, key: Ipv6ConfKey, value: number) => {
    writes.push(`${link}/${key}=${value}`);
    await set(link, key, value);
    wake();
  };
  const until = async (pred: () => boolean) => {
    const deadline = Date.now() + 5_000;
    while (!pred()) {
      if (Date.now() > deadline) throw new Error("IPv6 settings did not converge within 5 s");
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, 500);
      });
    }
  };
  return { writes, until };
}

async function withEnv(f: (env: NetworkTestEnv) => Promise<void>) {
  const env = await networkTestEnv({ clock: systemClock, deps: { autoDhcp: false } });
  try {
    await f(env);
  } finally {
    await env.close();
  }
}

Deno.test("Talos failure mode: accept_ra set on default instead of the links (slaac: true sets accept_ra=2 and autoconf=1 on the link only; default and all untouched)", () =>
  withEnv(async (env) => {
    env.backend.addLink({ name: "eth0" });
    env.backend.addLink({ name: "eth1" });
    const conf = recordConf(env.backend);
    await env.setConfig(slaacConfig("        ipv6: { slaac: true }\n"));
    env.start();
    await conf.until(() => env.backend.ipv6ConfOf("eth0").accept_ra === 2);
    await conf.until(() => env.backend.ipv6ConfOf("eth0").autoconf === 1);
    await waitForResource(env.store, "RouteStatus", (r) => r.spec.gateway === "fd00::1");
    await waitForResource(env.store, "AddressStatus", (r) => r.spec.address === "fd00::2");
    const spec = await waitForResource(env.store, "LinkSpec", (r) => r.metadata.id === "eth0");
    assert.equal(spec.spec.slaac, true);
    // The Talos failure mode: accept_ra through `default` or `all` reaches every link.
    assert.deepEqual(conf.writes.filter((w) => !w.startsWith("eth0/")), []);
    assert.deepEqual(env.backend.ipv6ConfOf("default"), FakeNetworkBackend.IPV6_CONF_DEFAULTS);
    assert.deepEqual(env.backend.ipv6ConfOf("all"), FakeNetworkBackend.IPV6_CONF_DEFAULTS);
    assert.deepEqual(env.backend.ipv6ConfOf("eth1"), { accept_ra: 1, autoconf: 1 });
  }));

Deno.test("slaac: false turns it off; dropping the setting puts the link's own values back", () =>
  withEnv(async (env) => {
    env.backend.addLink({ name: "eth0" });
    const conf = recordConf(env.backend);
    await env.setConfig(slaacConfig("        ipv6: { slaac: false }\n"));
    env.start();
    await conf.until(() => env.backend.ipv6ConfOf("eth0").accept_ra === 0);
    await conf.until(() => env.backend.ipv6ConfOf("eth0").autoconf === 0);
    await env.setConfig(slaacConfig("        ipv6: { slaac: true }\n"));
    await conf.until(() => env.backend.ipv6ConfOf("eth0").accept_ra === 2);
    await env.setConfig(slaacConfig(""));
    await conf.until(() => conf.writes.length === 6);
    assert.deepEqual(env.backend.ipv6ConfOf("eth0"), { accept_ra: 1, autoconf: 1 });
    assert.deepEqual(conf.writes, [
      "eth0/accept_ra=0",
      "eth0/autoconf=0",
      "eth0/accept_ra=2",
      "eth0/autoconf=1",
      "eth0/accept_ra=1",
      "eth0/autoconf=1",
    ]);
  }));

Deno.test("slaac on a link removed from the config is put back on teardown", () =>
  withEnv(async (env) => {
    env.backend.addLink({ name: "eth0" });
    const conf = recordConf(env.backend);
    await env.setConfig(slaacConfig("        ipv6: { slaac: true }\n"));
    env.start();
    await conf.until(() =>
      env.backend.ipv6ConfOf("eth0").autoconf === 1 && conf.writes.length === 1
    );
    await env.setConfig(configYaml("    interfaces: []\n"));
    await conf.until(() => env.backend.ipv6ConfOf("eth0").accept_ra === 1);
    assert.deepEqual(conf.writes, ["eth0/accept_ra=2", "eth0/accept_ra=1"]);
  }));

Deno.test("both backends refuse the default and all pseudo-links", async () => {
  const backend = new FakeNetworkBackend();
  for (const link of ["default", "all", "../all", ""]) {
    await assert.rejects(() => backend.setIpv6Conf(link, "accept_ra", 2), RangeError);
  }
  await assert.rejects(() => backend.setIpv6Conf("nosuch0", "accept_ra", 2), /ENODEV/);
});

Deno.test("slaacSettings: on is accept_ra 2 (RAs count even when forwarding), off is 0", () => {
  assert.deepEqual(slaacSettings(true), [["accept_ra", 2], ["autoconf", 1]]);
  assert.deepEqual(slaacSettings(false), [["accept_ra", 0], ["autoconf", 0]]);
});
