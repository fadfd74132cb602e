/**
 * `machinectl reset` against the real apid and machined-side server, with
 * the node's real ResetCoordinator behind it (fake disk and boot id), and the
 * wait used by `reboot --wait` / `shutdown --wait` / `reset`.
 */
import assert from "node:assert/strict";
import { Code, ConnectError } from "@connectrpc/connect";
import { type ApiFixture, startApiFixture } from "../api/testing.ts";
import { FakeBootIdSource } from "../platform/identity/mod.ts";
import { ResetCoordinator, type ResetPlan } from "../reset/mod.ts";
import { eph, installedDisk, recordInstall, state } from "../reset/testing.ts";
import { waitForNode } from "./commands/wait_node.ts";
import { clientConfig, runCli as run } from "./testing.ts";

async function withNode(fn: (f: ApiFixture, started: ResetPlan[]) => Promise<void>) {
  const f = await startApiFixture();
  const block = await installedDisk();
  recordInstall(f.store, [state, eph]);
  const started: ResetPlan[] = [];
  const coordinator = new ResetCoordinator({
    store: f.store,
    block,
    bootId: new FakeBootIdSource("boot-1"),
    node: () => "node-1",
    events: f.events,
    logger: f.logger,
    start: (p) => started.push(p),
  });
  f.actions.reset = (r, by) => coordinator.request(r, by);
  try {
    await fn(f, started);
  } finally {
    await f.close();
  }
}

const settle = () => new Promise((r) => setTimeout(r, 200));

Deno.test("machinectl reset: admin only; asks unless --yes; shows what is wiped; one reset", async () => {
  await withNode(async (f, started) => {
    const operator = await clientConfig(f, "os:operator");
    let r = await run(operator, "reset", "--yes", "--wait=false");
    assert.notEqual(r.code, 0);
    assert.match(r.err, /PermissionDenied|may not call/);

    const admin = await clientConfig(f, "os:admin");
    r = await run(admin, "reset", "--wait=false");
    assert.equal(r.code, 1);
    assert.match(r.err, /needs --yes when there is no terminal/);
    assert.match(r.out, /STATE\s+\/dev\/vda\s+\S+\s+4 MiB/);
    assert.match(r.out, /EPHEMERAL\s+\/dev\/vda\s+\S+\s+8 MiB/);
    assert.doesNotMatch(r.out, /EFI/);
    await settle();
    assert.equal(started.length, 0, "nothing without consent");

    r = await run(admin, "reset", "--yes", "--wait=false", "--graceful=false", "--shutdown");
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /reset accepted \(forced\)/);
    await settle();
    assert.equal(started.length, 1);
    assert.deepEqual([started[0].mode, started[0].powerOff], ["forced", true]);

    r = await run(admin, "reset", "--yes", "--wait=false");
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /already under way \(step accepted\)|reset accepted/);
    await settle();
    assert.equal(started.length, 1);
  });
});

Deno.test("Reset over the API: a made-up challenge is FailedPrecondition and starts nothing", async () => {
  await withNode(async (f, started) => {
    const c = f.client();
    const preview = await c.api.reset({});
    assert.equal(preview.partitions.length, 2);
    await assert.rejects(
      c.api.reset({ challenge: preview.challenge.slice(0, -4) + "AAAA" }),
      (e) => e instanceof ConnectError && e.code === Code.FailedPrecondition,
    );
    await settle();
    assert.equal(started.length, 0);
  });
});

Deno.test("waitForNode: back on a new boot id, gone after a silence, else the last events", async () => {
  const flags = {};
  const seq = ["old", undefined, undefined, "new"];
  const back = await waitForNode(flags, {
    oldBootId: "old",
    until: "back",
    timeoutMs: 10_000,
    pollMs: 1,
    probe: () => Promise.resolve(seq.shift()),
  });
  assert.deepEqual([back.outcome, back.bootId], ["back", "new"]);
  const answers = ["old", undefined, "old", undefined, undefined, undefined];
  const gone = await waitForNode(flags, {
    oldBootId: "old",
    until: "gone",
    timeoutMs: 10_000,
    pollMs: 5,
    goneAfterMs: 8,
    probe: () => Promise.resolve(answers.length ? answers.shift() : undefined),
  });
  assert.equal(gone.outcome, "gone");
  await assert.rejects(
    waitForNode(flags, {
      oldBootId: "old",
      until: "back",
      timeoutMs: 50,
      pollMs: 5,
      events: { seen: ["power reset step unmount"] },
      probe: () => Promise.resolve(undefined),
    }),
    /did not come back within 0 s; last events seen:\n {2}power reset step unmount/,
  );
});
