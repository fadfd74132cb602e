/**
 * `machinectl gen signing-key`, `upgrade` and `rollback` against the real
 * apid and machined-side server, with the node's real NodeUpgrade behind it
 * over a fake ESP: the bundle streams through both hops in chunks.
 */
import assert from "node:assert/strict";
import { type ApiFixture, startApiFixture } from "../api/testing.ts";
import type { FakeEspBackend } from "../platform/esp/mod.ts";
import { NodeUpgrade } from "../upgrade/mod.ts";
import { loadSigningKey } from "../bundle/mod.ts";
import { bootFake, imagedEsp, testBundle, testKeys } from "../upgrade/testing.ts";
import { clientConfig, runCli as run } from "./testing.ts";
import { runMachinectl } from "./cli.ts";
import { bufferIo } from "./io.ts";

async function runBare(...argv: string[]) {
  const io = bufferIo();
  const code = await runMachinectl(argv, io);
  return { code, out: io.stdout.join("\n"), err: io.stderr.join("\n") };
}

async function withNode(
  trusted: string[],
  fn: (f: ApiFixture, esp: FakeEspBackend, reboots: string[]) => Promise<void>,
) {
  const f = await startApiFixture();
  const esp = imagedEsp("1.0.0");
  const reboots: string[] = [];
  const slot = "A";
  const upgrade = new NodeUpgrade({
    esp,
    events: f.events,
    logger: f.logger,
    cmdline: () => Promise.resolve(`console=ttyS0 machined.slot=${slot} -- /x`),
    trustedKeys: () => trusted,
    bootId: () => Promise.resolve("boot-1"),
    reboot: (by) => reboots.push(by.name),
  });
  f.actions.upgrade = (b, o, by) => upgrade.upgrade(b, o, by);
  f.actions.rollback = (o, by) => upgrade.rollback(o, by);
  try {
    await fn(f, esp, reboots);
  } finally {
    await f.close();
  }
}

Deno.test("machinectl gen signing-key writes a key pair whose bundles a node trusting it installs", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const r = await runBare("gen", "signing-key", "--out", dir);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /key id ed25519:[0-9a-f]{16}/);
    assert.equal((await Deno.stat(`${dir}/signing-key.pem`)).mode! & 0o777, 0o600);
    const again = await runBare("gen", "signing-key", "--out", dir);
    assert.notEqual(again.code, 0, "no overwrite without --force");
    const key = await loadSigningKey(await Deno.readTextFile(`${dir}/signing-key.pem`));
    const pub = await Deno.readTextFile(`${dir}/signing-key.pub.pem`);
    const bundle = await testBundle({ key, version: "2.0.0" });
    await Deno.writeFile(`${dir}/b.bundle`, bundle.bytes);
    await withNode([pub], async (f, esp, reboots) => {
      const admin = await clientConfig(f, "os:admin");
      const up = await run(admin, "upgrade", "-f", `${dir}/b.bundle`, "--stage");
      assert.equal(up.code, 0, up.err);
      assert.match(up.out, /slot B armed as machined-b\+3\.conf: version 2\.0\.0/);
      assert.match(up.out, /staged/);
      assert.deepEqual(reboots, [], "staged: no reboot");
      assert.deepEqual(esp.files.get("/B/root.img"), bundle.files[2]);
      assert.equal(bootFake(esp)!.slot, "B");
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("machinectl upgrade: admin only; an untrusted bundle is PermissionDenied with nothing written", async () => {
  const k = await testKeys();
  const stranger = await testKeys();
  const dir = await Deno.makeTempDir();
  try {
    // 3 MiB of root image: several 1 MiB messages on the wire.
    const big = await testBundle({
      key: k.signing,
      files: [
        new Uint8Array(100).fill(1),
        new Uint8Array(200).fill(2),
        new Uint8Array(3 << 20).fill(3),
      ],
    });
    await Deno.writeFile(`${dir}/good.bundle`, big.bytes);
    // Untrusted and large: the node refuses at the head while the client still has MiBs to send.
    const bad = await testBundle({ key: stranger.signing, files: big.files });
    await Deno.writeFile(`${dir}/bad.bundle`, bad.bytes);
    await withNode([k.publicPem], async (f, esp, reboots) => {
      const before = new Map(esp.files);
      const operator = await clientConfig(f, "os:operator");
      let r = await run(operator, "upgrade", "-f", `${dir}/good.bundle`, "--wait=false");
      assert.notEqual(r.code, 0);
      assert.match(r.err, /PermissionDenied|may not call/);

      const admin = await clientConfig(f, "os:admin");
      r = await run(admin, "upgrade", "-f", `${dir}/bad.bundle`, "--wait=false");
      assert.notEqual(r.code, 0);
      assert.match(r.err, /unknown-key/);
      assert.deepEqual(esp.files, before, "the ESP is unchanged");

      r = await run(admin, "upgrade", "-f", `${dir}/good.bundle`, "--wait=false");
      assert.equal(r.code, 0, r.err);
      assert.match(r.out, /slot B armed/);
      await new Promise((res) => setTimeout(res, 300));
      assert.deepEqual(reboots, ["admin"], "the node reboots into it");
      assert.deepEqual(esp.files.get("/B/root.img"), big.files[2]);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("machinectl rollback: refused while the other slot is a trial; allowed to a blessed one", async () => {
  const k = await testKeys();
  await withNode([k.publicPem], async (f, esp) => {
    const admin = await clientConfig(f, "os:admin");
    // The imaged ESP's B is a blessed copy: rollback is allowed.
    let r = await run(admin, "rollback", "--stage");
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /slot B boots next/);
    assert.equal(bootFake(esp)!.slot, "B");
    // Mark B bad: refused, FailedPrecondition.
    const b = esp.files.get("/loader/entries/machined-b.conf")!;
    esp.files.delete("/loader/entries/machined-b.conf");
    esp.files.set("/loader/entries/machined-b+0-3.conf", b);
    r = await run(admin, "rollback", "--stage");
    assert.notEqual(r.code, 0);
    assert.match(r.err, /FailedPrecondition|slot B is bad/);
  });
});

Deno.test("machinectl upgrade --from URL: the node fetches the bundle over http; a 404 or a file: URL is refused", async () => {
  const k = await testKeys();
  const b = await testBundle({ key: k.signing, version: "2.1.0" });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (req) =>
      new URL(req.url).pathname === "/b.bundle"
        ? new Response(b.bytes.slice())
        : new Response("no", { status: 404 }),
  );
  const base = `http://127.0.0.1:${server.addr.port}`;
  try {
    await withNode([k.publicPem], async (f, esp) => {
      const admin = await clientConfig(f, "os:admin");
      let r = await run(admin, "upgrade", "--from", `${base}/missing`, "--stage");
      assert.notEqual(r.code, 0);
      assert.match(r.err, /HTTP 404/);
      r = await run(admin, "upgrade", "--from", "file:///etc/passwd", "--stage");
      assert.notEqual(r.code, 0);
      assert.match(r.err, /only http and https/);
      r = await run(admin, "upgrade", "--from", `${base}/b.bundle`, "--stage");
      assert.equal(r.code, 0, r.err);
      assert.match(r.out, /slot B armed as machined-b\+3\.conf: version 2\.1\.0/);
      assert.deepEqual(esp.files.get("/B/root.img"), b.files[2]);
      r = await run(admin, "upgrade", "-f", "x", "--from", `${base}/b.bundle`);
      assert.notEqual(r.code, 0, "one of -f or --from");
      assert.match(r.err, /one of -f BUNDLE or --from URL/);
    });
  } finally {
    await server.shutdown();
  }
});
