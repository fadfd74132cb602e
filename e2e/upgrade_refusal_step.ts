/**
 * Issue 28's holes 3 and 4 over the API, on the upgrade case's VM (node on
 * slot A at X, the floor at Y since step 1 blessed B):
 * - Y again (a replay of the floor) and a version with no order (`deadbeef`)
 *   are refused, FailedPrecondition, without `--force`;
 * - `upgrade --from` a host server (reached from the guest at 10.0.2.2) that
 *   sends 12 bytes and stalls: refused DeadlineExceeded (`stalled`) at the
 *   node's idle deadline, the ESP released at once (UpgradeStatus answers
 *   and shows the refusal) and unchanged.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type SigningKey, writeBundle } from "../bundle/mod.ts";
import type { Compatible } from "../bundle/mod.ts";
import { machinectl } from "./helpers.ts";

/** The bundle files and keys the upgrade case built. */
export interface RefusalStepDeps {
  client: string;
  port: number;
  work: string;
  /** Y's bundle, blessed in step 1: the floor. */
  floorBundle: string;
  files: Parameters<typeof writeBundle>[1]["files"];
  cmdline: string;
  /** The system extensions the running node has, carried by every bundle built here. */
  extensions?: Parameters<typeof writeBundle>[1]["extensions"];
  compatible: Compatible;
  signing: SigningKey;
  /** The ESP's files as the host reads them from the disk image. */
  esp: () => Promise<unknown>;
}

/** Steps 4c and 4d; returns the stall's refusal time (s). */
export async function upgradeRefusalStep(d: RefusalStepDeps): Promise<Record<string, number>> {
  const espBefore = await d.esp();
  let r = await machinectl(d.client, d.port, "upgrade", "-f", d.floorBundle, "--wait=false");
  assert.equal(r.code, 1, r.out + r.err);
  assert.match(r.err, /FailedPrecondition|failed.precondition/i);
  assert.match(r.err, /\(replay\)/);

  const unordered = join(d.work, "deadbeef.bundle");
  await writeBundle(unordered, {
    files: d.files,
    version: "deadbeef",
    cmdline: d.cmdline,
    compatible: d.compatible,
    key: d.signing,
    extensions: d.extensions,
  });
  r = await machinectl(d.client, d.port, "upgrade", "-f", unordered, "--wait=false");
  assert.equal(r.code, 1, r.out + r.err);
  assert.match(r.err, /FailedPrecondition|failed.precondition/i);
  assert.match(r.err, /\(unordered\)/);
  assert.deepEqual(await d.esp(), espBefore, "a floor refusal changed the ESP");

  const stalled = await stalledFromRefused(d);
  assert.deepEqual(await d.esp(), espBefore, "a stalled --from changed the ESP");
  return { stalledFromRefusedS: stalled };
}

/** `upgrade --from` a server that stalls after 12 bytes: DeadlineExceeded, then the ESP is free. */
async function stalledFromRefused(d: RefusalStepDeps): Promise<number> {
  const size = (await Deno.stat(d.floorBundle)).size;
  const head = (await Deno.readFile(d.floorBundle)).subarray(0, 12);
  let stop: (() => void) | undefined;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(head);
        stop = () => c.close();
      },
    });
    return new Response(body, { headers: { "content-length": String(size) } });
  });
  try {
    // QEMU's user network answers the guest's 10.0.2.2 from the host's loopback.
    const url = `http://10.0.2.2:${server.addr.port}/y.bundle`;
    const t0 = performance.now();
    const r = await machinectl(d.client, d.port, "upgrade", "--from", url, "--wait=false");
    const seconds = +((performance.now() - t0) / 1000).toFixed(1);
    assert.equal(r.code, 1, r.out + r.err);
    assert.match(r.err, /DeadlineExceeded|deadline.exceeded/i);
    assert.match(r.err, /stalled/);
    assert.doesNotMatch(r.err, /closed the connection|try again/);
    const status = await machinectl(d.client, d.port, "get", "upgradestatus", "-o", "yaml");
    assert.equal(status.code, 0, status.err);
    assert.match(status.out, /outcome: refused/);
    return seconds;
  } finally {
    stop?.();
    await server.shutdown();
  }
}
