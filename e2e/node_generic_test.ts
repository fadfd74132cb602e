/**
 * A generic image on a real L2 network: `buildImage` with no config and no CA
 * (what `deno task image --generic` builds), booted in QEMU with its only NIC
 * on a tap in a network namespace with dnsmasq (imager/qemu/tap_network.ts);
 * machinectl runs inside the namespace. One boot:
 *
 * 1. the node comes up in maintenance mode and prints its API certificate's
 *    fingerprint on the console; dnsmasq leases it an address;
 * 2. `machinectl --insecure --fingerprint` reaches it at that address: Version
 *    and `get links` answer, Reboot is refused, a wrong fingerprint is refused;
 * 3. `apply-config --insecure --fingerprint -f node.yaml` gives it a config
 *    with a CA; the node then serves mutual TLS with that CA (machinectl with
 *    the client config, full name verification) and refuses `--insecure`.
 *
 * Prints the times: QEMU start → maintenance API, and apply → mTLS API.
 * Run: `deno test -A e2e/node_generic_test.ts` (root, QEMU, dnsmasq).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildImage } from "../imager/mod.ts";
import { renderConfigTemplate } from "../config/mod.ts";
import { generateNodeBundle } from "../pki/mod.ts";
import { machinectlInNetns, parseDocs } from "./helpers.ts";
import { canBootOnTap, retryWhile, withTapNetwork } from "./tap_boot.ts";

const WORK = "build/e2e/generic";
const HOSTNAME = "e2e-generic";
const MAC = "52:54:00:6d:61:11";
const FINGERPRINT = /API certificate fingerprint (SHA256:[0-9a-f]{64})/;
const FAIL = /Kernel panic|machined: FATAL|machined-init: FATAL/;
const UNREACHABLE = /cannot reach|did not answer|ECONNREFUSED|ECONNRESET|timed out/i;
const NAME_MISMATCH = /altnames|ERR_TLS_CERT_ALTNAME_INVALID|NotValidForName|not valid for name/i;

const secs = (t0: number) => ((performance.now() - t0) / 1000).toFixed(1);

Deno.test({
  name: "a generic image boots into maintenance mode on a tap network, takes its config " +
    "with --insecure --fingerprint and then serves mTLS (needs root, QEMU, dnsmasq)",
  ignore: !canBootOnTap,
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
  const image = await buildImage({
    program: new URL("../main.ts", import.meta.url).pathname,
    out: join(WORK, "generic.img"),
    quietConsole: true,
  });
  await withTapNetwork(WORK, async ({ net, ns, boot }) => {
    const qemuStart = performance.now();
    const booted = await boot({ image: image.out, runDir: join(WORK, "qemu"), mac: MAC });
    let address = "";
    let fingerprint = "";
    const noConfig = join(WORK, "none.yaml"); // --insecure reads no client config
    /** machinectl in the namespace, retried while the failure matches `retry`. */
    const dial = (config: string, args: string[], retry: RegExp, ms = 60_000) =>
      retryWhile(
        () => machinectlInNetns(ns, config, `${address}:50000`, ...args),
        retry,
        ms,
        1000,
      );
    const insecure = (...args: string[]) =>
      dial(noConfig, [...args, "--insecure", "--fingerprint", fingerprint], UNREACHABLE);

    await t.step("maintenance mode: the fingerprint on the console, a DHCP lease", async () => {
      const m = await booted.waitForConsole(FINGERPRINT, { timeoutMs: 300_000, failOn: FAIL });
      fingerprint = m[1];
      const lease = await net.waitForLease({ mac: MAC, timeoutMs: 120_000 });
      address = lease.address;
      const r = await insecure("version");
      assert.equal(r.code, 0, r.err);
      console.log(
        `generic boot → maintenance API answering at ${address}: ${secs(qemuStart)} s ` +
          `after QEMU started (${fingerprint.slice(0, 20)}…)`,
      );
    });

    await t.step("without a client certificate: hardware view yes, anything else no", async () => {
      const links = await insecure("get", "links", "-o", "json");
      assert.equal(links.code, 0, links.err);
      assert.ok(parseDocs(links.out).length > 0, links.out);
      const reboot = await insecure("reboot");
      assert.equal(reboot.code, 1);
      assert.match(reboot.err, /not available in maintenance mode/);
      const wrong = await dial(noConfig, [
        "version",
        "--insecure",
        "--fingerprint",
        "SHA256:" + "0".repeat(64),
      ], UNREACHABLE);
      assert.equal(wrong.code, 1);
      assert.match(wrong.err, /presented a certificate with fingerprint/);
    });

    await t.step("apply-config --insecure --fingerprint, then mutual TLS only", async () => {
      const t0 = performance.now();
      const r = await insecure("apply-config", "-f", bundle.paths.machineConfig);
      assert.equal(r.code, 0, r.err);
      const v = await dial(
        bundle.paths.clientConfig,
        ["version"],
        new RegExp(`${UNREACHABLE.source}|${NAME_MISMATCH.source}|does not trust|certificate`, "i"),
        120_000,
      );
      assert.equal(v.code, 0, v.err);
      assert.match(v.out, new RegExp(`hostname ${HOSTNAME}`));
      console.log(`apply → mTLS API (full name verification): ${secs(t0)} s`);
      const again = await machinectlInNetns(
        ns,
        noConfig,
        `${address}:50000`,
        "version",
        "--insecure",
        "--fingerprint",
        fingerprint,
      );
      assert.equal(again.code, 1, "the node still answers without a client certificate");
    });
  });
});
