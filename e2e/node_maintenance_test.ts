/**
 * Maintenance and the way out of it, in QEMU: the image carries a machine
 * config with a typo (its `ca` section is valid). The node boots into the
 * `maintenance` stage; over mutual TLS (the client certificate from the
 * typo'd config's own CA) MachineStatus says so and ConfigStatus names the
 * typo with its line and column; `machinectl apply-config` with the fixed
 * config moves the node to `running` and its hostname is applied.
 *
 * Needs, besides QEMU: machined serving the API in maintenance with the bad
 * config's own valid CA (the PKI work), and the network up without a valid
 * config (DHCP on the first link, controllers/network/spec_transform.ts's
 * MAINTENANCE_CONFIG) so QEMU's port forward reaches the guest.
 *
 * Run: `deno test -A e2e/node_maintenance_test.ts` (about 1.5 min under TCG).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildImage, isRunning, startVm, type Vm } from "../imager/mod.ts";
import { renderConfigTemplate } from "../config/mod.ts";
import { generateNodeBundle } from "../pki/mod.ts";
import { freePort, machinectl, parseDocs, removeScratch } from "./helpers.ts";

const WORK = "build/e2e/maintenance";
const HOSTNAME = "e2e-maint";
const API_READY = /machined: API ready pid=(\d+)/;
const FAIL = /Kernel panic|machined: FATAL|machined-init: FATAL/;
const hasQemu = await Deno.stat("/usr/bin/qemu-system-x86_64").then(() => true, () => false);

/** `get TYPE -o json`, polled until `pred` holds. */
async function waitFor(
  config: string,
  port: number,
  type: string,
  pred: (d: ReturnType<typeof parseDocs>) => boolean,
  timeoutMs = 120_000,
) {
  const deadline = performance.now() + timeoutMs;
  let last = "";
  while (performance.now() < deadline) {
    const r = await machinectl(config, port, "get", type, "-o", "json");
    last = r.out + r.err;
    if (r.code === 0) {
      const docs = parseDocs(r.out);
      if (pred(docs)) return docs;
    }
    await new Promise((res) => setTimeout(res, 1000));
  }
  const hint = /does not trust/.test(last)
    ? " (apid in maintenance does not serve with the typo'd config's own CA: needs the PKI work)"
    : "";
  throw new Error(`timed out waiting for ${type}${hint}; last output: ${last}`);
}

Deno.test({
  name:
    "a typo'd config boots into maintenance, seen over mTLS; apply-config fixes it (needs QEMU)",
  ignore: !hasQemu,
  sanitizeOps: false,
  sanitizeResources: false,
}, async (t) => {
  await Deno.remove(WORK, { recursive: true }).catch(() => {});
  const bundle = await generateNodeBundle({
    name: HOSTNAME,
    endpoint: "127.0.0.1:50000",
    outDir: join(WORK, "node"),
    renderMachineConfig: ({ ca }) =>
      renderConfigTemplate({ hostname: HOSTNAME, ca, timeDisabled: true, containerd: false }),
  });
  const good = await Deno.readTextFile(bundle.paths.machineConfig);
  const bad = good.replace(`  hostname: ${HOSTNAME}`, `  hostnme: ${HOSTNAME}`);
  assert.notEqual(bad, good);
  const typoLine = bad.split("\n").findIndex((l) => l.includes("hostnme")) + 1;
  const badPath = join(WORK, "typo.yaml");
  await Deno.writeTextFile(badPath, bad);
  const image = await buildImage({
    program: new URL("../main.ts", import.meta.url).pathname,
    config: badPath,
    out: join(WORK, "node.img"),
    quietConsole: true,
  });
  const port = freePort();
  const clientConfig = bundle.paths.clientConfig;
  let vm: Vm | undefined;
  try {
    vm = await startVm({
      image: image.out,
      runDir: join(WORK, "qemu"),
      hostPort: port,
      snapshot: true,
    });
    await vm.waitForConsole(API_READY, { timeoutMs: 240_000, failOn: FAIL });

    await t.step(
      "MachineStatus is maintenance over mutual TLS; ConfigStatus names the typo",
      async () => {
        await waitFor(
          clientConfig,
          port,
          "machinestatus",
          (d) => d[0]?.spec.stage === "maintenance",
        );
        const [cs] = await waitFor(clientConfig, port, "configstatus", (d) => d.length > 0);
        assert.equal(cs.spec.state, "invalid", JSON.stringify(cs));
        const issues = cs.spec.errors as Array<{ line: number; column: number; message: string }>;
        assert.ok(
          issues.some((e) => e.line === typoLine && /hostnme/.test(e.message)),
          JSON.stringify(issues),
        );
      },
    );

    await t.step("apply-config with the fixed config: the node leaves maintenance", async () => {
      const fixed = join(WORK, "fixed.yaml");
      await Deno.writeTextFile(fixed, good);
      const r = await machinectl(clientConfig, port, "apply-config", "-f", fixed);
      assert.equal(r.code, 0, r.err);
      await waitFor(clientConfig, port, "machinestatus", (d) => d[0]?.spec.stage === "running");
      const [cs] = await waitFor(
        clientConfig,
        port,
        "configstatus",
        (d) => d[0]?.spec.state === "valid",
      );
      assert.deepEqual(cs.spec.errors, []);
      await waitFor(
        clientConfig,
        port,
        "hostnamestatus",
        (d) => d.some((h) => h.spec.hostname === HOSTNAME),
      );
    });
  } finally {
    if (vm && (await isRunning(vm.state.pid))) await vm.stop({ gracefulMs: 1000 });
  }
  await removeScratch(WORK);
});
