/**
 * What a generic image's node in maintenance mode serves without a client
 * certificate and what it refuses, checked on the fleet test's first node
 * (e2e/fleet_test.ts) while it waits for its config, and that it refuses
 * `--insecure` once it serves mutual TLS. These ran on a VM of their own
 * (e2e/node_generic_test.ts) until the fleet's VMs took them over: the same
 * image, the same tap network, one boot fewer in CI (docs/decisions.md, "CI
 * under 45 minutes").
 *
 * @module
 */
import assert from "node:assert/strict";
import { machinectlNs as machinectl, parseDocs } from "./helpers.ts";
import { retryWhile } from "./tap_boot.ts";

/** A node on the tap network: its leased address and its console's fingerprint. */
export interface MaintenanceNode {
  address: string;
  fingerprint: string;
}

const UNREACHABLE = /cannot reach|did not answer|ECONNREFUSED|ECONNRESET|timed out/i;

/** `machinectl ARGS --insecure --fingerprint FP -e ADDRESS` in `ns`, retried while unreachable. */
function insecure(ns: string, n: MaintenanceNode, fingerprint: string, ...args: string[]) {
  return retryWhile(
    () => machinectl(ns, ...args, "--insecure", "--fingerprint", fingerprint, "-e", n.address),
    UNREACHABLE,
    60_000,
    1000,
  );
}

/**
 * In maintenance, without a client certificate: Version and the hardware view
 * (`get links`) answer; Reboot is refused as not available in maintenance; a
 * wrong fingerprint is refused by the client before anything is sent.
 */
export async function checkMaintenanceSurface(ns: string, n: MaintenanceNode): Promise<void> {
  const v = await insecure(ns, n, n.fingerprint, "version");
  assert.equal(v.code, 0, v.err);
  const links = await insecure(ns, n, n.fingerprint, "get", "links", "-o", "json");
  assert.equal(links.code, 0, links.err);
  assert.ok(parseDocs(links.out).length > 0, links.out);
  const reboot = await insecure(ns, n, n.fingerprint, "reboot");
  assert.equal(reboot.code, 1);
  assert.match(reboot.err, /not available in maintenance mode/);
  const wrong = await insecure(ns, n, "SHA256:" + "0".repeat(64), "version");
  assert.equal(wrong.code, 1);
  assert.match(wrong.err, /presented a certificate with fingerprint/);
}

/** Once configured, the node no longer answers a client without a certificate. */
export async function checkInsecureRefused(ns: string, n: MaintenanceNode): Promise<void> {
  const again = await machinectl(
    ns,
    "version",
    "--insecure",
    "--fingerprint",
    n.fingerprint,
    "-e",
    n.address,
  );
  assert.equal(again.code, 1, "the node still answers without a client certificate");
}
