/**
 * `machinectl unlock` and UnlockVolume against the real apid and
 * machined-side server, with the block controllers on fakes behind the
 * node's unlock action: a STATE no configured key opens is `locked` until an
 * operator's passphrase opens it; roles, refusals and the budget hold.
 */
import assert from "node:assert/strict";
import { Code, ConnectError } from "@connectrpc/connect";
import { startApiFixture } from "../api/testing.ts";
import { VolumeUnlocker } from "../controllers/block/mod.ts";
import {
  boot,
  encrypted,
  newMachine,
  OTHER_BOARD,
  PASS,
  provisionEncrypted,
} from "../controllers/block/testing_encryption.ts";
import { unlockAction } from "../node/mod.ts";
import { clientConfig, runCli as run } from "./testing.ts";

const WRONG = "not the passphrase at all";

async function withLockedNode(
  fn: (
    f: Awaited<ReturnType<typeof startApiFixture>>,
    n: Awaited<ReturnType<typeof boot>>,
  ) => Promise<void>,
) {
  const m = await newMachine();
  await provisionEncrypted(m);
  const unlocker = new VolumeUnlocker({ crypt: m.crypt });
  const n = await boot(m, encrypted(WRONG), OTHER_BOARD, unlocker);
  const f = await startApiFixture();
  f.actions.unlockVolume = unlockAction(unlocker, n.events);
  try {
    await n.status("STATE", (s) => s.phase === "locked");
    await fn(f, n);
  } finally {
    await f.close();
    await n.shutdown();
    await Deno.remove(m.dir, { recursive: true });
  }
}

async function secretFile(text: string): Promise<string> {
  const path = await Deno.makeTempFile({ prefix: "unlock-pass-" });
  await Deno.writeTextFile(path, text + "\n");
  return path;
}

Deno.test("machinectl unlock: operator only; a wrong passphrase is PermissionDenied; the right one opens and mounts STATE", async () => {
  await withLockedNode(async (f, n) => {
    const wrong = await secretFile(WRONG);
    const right = await secretFile(PASS);
    const reader = await clientConfig(f, "os:reader");
    let r = await run(reader, "unlock", "STATE", "--passphrase-file", right);
    assert.notEqual(r.code, 0);
    assert.match(r.err, /PermissionDenied|may not call/);

    const operator = await clientConfig(f, "os:operator");
    r = await run(operator, "unlock", "STATE", "--passphrase-file", wrong);
    assert.notEqual(r.code, 0);
    assert.match(r.err, /opens no keyslot of STATE/);
    assert.doesNotMatch(r.err + r.out, new RegExp(WRONG));

    r = await run(operator, "unlock", "state", "--passphrase-file", right);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /STATE unlocked by slot 1: \/dev\/mapper\/STATE/);
    const vs = (await n.status("STATE", (s) => s.phase === "ready")).spec;
    assert.deepEqual(vs.unlockedBy, { slot: 1, kind: "passphrase" });
    await n.mounted("STATE");

    r = await run(operator, "unlock", "STATE", "--passphrase-file", right);
    assert.notEqual(r.code, 0);
    assert.match(r.err, /FailedPrecondition|STATE is not locked/);
    r = await run(operator, "unlock", "BOOT", "--passphrase-file", right);
    assert.match(r.err, /NotFound|no volume "BOOT"/);
    const log = JSON.stringify([n.events.history(), f.events.history()]);
    assert.doesNotMatch(log, new RegExp(`${PASS}|${WRONG}`));
    await Deno.remove(wrong);
    await Deno.remove(right);
  });
});

Deno.test("UnlockVolume: past 5 tries per client in a minute is ResourceExhausted; another client still tries", async () => {
  await withLockedNode(async (f) => {
    const c = f.client();
    const wrong = new TextEncoder().encode(WRONG);
    const code = (p: Promise<unknown>) =>
      p.then(() => Code[0], (e) => Code[e instanceof ConnectError ? e.code : Code.Unknown]);
    for (let i = 0; i < 5; i++) {
      assert.equal(
        await code(c.api.unlockVolume({ volume: "STATE", passphrase: wrong })),
        "PermissionDenied",
      );
    }
    assert.equal(
      await code(c.api.unlockVolume({ volume: "STATE", passphrase: wrong })),
      "ResourceExhausted",
    );
    assert.equal(
      await code(c.api.unlockVolume({ volume: "STATE", passphrase: new Uint8Array() })),
      "ResourceExhausted",
    );
    const other = f.client(f.pki.clients["os:operator"]);
    assert.equal(
      await code(other.api.unlockVolume({ volume: "STATE", passphrase: new Uint8Array() })),
      "InvalidArgument",
    );
  });
});

Deno.test("machinectl unlock -n: the passphrase read once is offered to each node; one node's failure does not stop the next", async () => {
  await withLockedNode(async (f, n) => {
    const right = await secretFile(PASS);
    const operator = await clientConfig(f, "os:operator");
    const here = f.endpoint;
    // Nothing listens on port 1: that node fails, the next is still offered the passphrase.
    const r = await run(
      operator,
      "unlock",
      "STATE",
      "-n",
      `127.0.0.1:1,${here}`,
      "--passphrase-file",
      right,
    );
    assert.equal(r.code, 1, "the highest of the nodes' exit codes");
    assert.match(r.err, /^127\.0\.0\.1:1: error: /m);
    assert.match(r.out, new RegExp(`STATE unlocked by slot 1: /dev/mapper/STATE \\(${here}\\)`));
    await n.status("STATE", (s) => s.phase === "ready");
    assert.doesNotMatch(r.err + r.out, new RegExp(PASS));
    await Deno.remove(right);
  });
});
