/**
 * From a generic image to an installed node, in one QEMU run: the generic
 * image (no config, no CA: what `deno task image --generic` builds) is the
 * "USB stick" on /dev/vda, /dev/vdb is an empty disk, and /dev/vdc is a
 * NoCloud config drive (a FAT volume labelled CIDATA whose `user-data` is
 * the machine config, e2e/cidata.ts).
 *
 * 1. CIDATA: the node finds no config at boot, finds `user-data` on the
 *    CIDATA volume (config/keeper/late_config.ts), leaves maintenance mode and serves
 *    mutual TLS with the config's CA (machinectl with the config's client
 *    credentials and full name verification; `--insecure` is refused).
 *
 * 2. Install to disk: the config names `install: { disk: /dev/vdb, system:
 *    true }`, so the node copies the boot medium's ESP to vdb with a new GPT,
 *    checks every copied file's sha256, lets the provisioner add STATE and
 *    EPHEMERAL there, persists the config on that STATE and reboots. vdb has
 *    the first boot index (QEMU `bootindex`): empty at first, the firmware
 *    fell through to vda; now it boots vdb, machined-init takes its root
 *    image from vdb's ESP, and the node comes back with the config it finds
 *    on vdb's STATE.
 * 3. The boot medium was never written: vda's sha256 is the same before and
 *    after, and vdb's ESP is byte for byte vda's.
 * 4. The stick detached: a new QEMU with an empty disk in vda's place and vdb
 *    boots from vdb alone, with the same config and volumes; nothing is
 *    written to the empty disk.
 *
 * Prints the times: QEMU start → mTLS API (CIDATA), and mTLS API → booted from vdb.
 * Run: `deno test -A e2e/node_install_test.ts` (QEMU, mkfs.vfat, mtools).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildImage, isRunning, sha256File, startVm, type Vm } from "../imager/mod.ts";
import { renderConfigTemplate } from "../config/mod.ts";
import { generateNodeBundle } from "../pki/mod.ts";
import { writeCidataVolume } from "./cidata.ts";
import { freePort, machinectl, parseDocs, removeScratch, type ResourceDoc } from "./helpers.ts";
import { readImageGpt } from "../layout/mod.ts";
import { sha256Range } from "./cidata.ts";

const WORK = "build/e2e/install";
const HOSTNAME = "e2e-install";
const INSTALL_DISK = "/dev/vdb";
const FAIL = /Kernel panic|machined: FATAL|machined-init: FATAL/;
const ROOT_LINE = /machined-init: root \S+ \(\w+, ([^)]*)\) verified/g;
const NOT_YET =
  /cannot reach|did not answer|ECONNREFUSED|ECONNRESET|timed out|certificate|does not trust/i;

const exists = (p: string) => {
  try {
    return Deno.statSync(p).isFile;
  } catch {
    return false;
  }
};
const hasTools = ["/usr/bin/qemu-system-x86_64", "/usr/sbin/mkfs.vfat", "/usr/bin/mcopy"]
  .every(exists);
const secs = (t0: number) => ((performance.now() - t0) / 1000).toFixed(1);

/** machinectl against the forwarded port, retried while the node is not (yet) there. */
async function dial(config: string, port: number, args: string[], ms: number) {
  const deadline = performance.now() + ms;
  for (;;) {
    const r = await machinectl(config, port, ...args);
    if (r.code === 0 || !NOT_YET.test(r.err) || performance.now() > deadline) return r;
    await new Promise((res) => setTimeout(res, 1000));
  }
}

/** The node runs with the config from vdb's STATE and both volumes left as they are on vdb. */
async function assertInstalled(get: (...args: string[]) => Promise<ResourceDoc[]>) {
  const [cs] = await get("configstatus");
  assert.equal(cs?.spec.source, "STATE /dev/vdb2", JSON.stringify(cs));
  const deadline = performance.now() + 240_000;
  let vs = await get("volumestatus");
  const settled = () => vs.length === 2 && vs.every((x) => x.spec.phase === "ready");
  while (!settled() && performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1000));
    vs = await get("volumestatus");
  }
  assert.ok(settled(), JSON.stringify(vs));
  for (const x of vs) {
    assert.equal(x.spec.disk, INSTALL_DISK, JSON.stringify(x));
    assert.equal(x.spec.decision, "leave", JSON.stringify(x));
    assert.match(String(x.spec.partitionPath), /^\/dev\/vdb[23]$/);
  }
}

Deno.test({
  name: "a generic image takes its config from a CIDATA volume, serves mTLS with its CA, " +
    "installs itself to a second disk and boots from it (needs QEMU, mkfs.vfat, mtools)",
  ignore: !hasTools,
  sanitizeOps: false,
  sanitizeResources: false,
}, async (t) => {
  await Deno.remove(WORK, { recursive: true }).catch(() => {});
  const port = freePort();
  const bundle = await generateNodeBundle({
    name: HOSTNAME,
    endpoint: `127.0.0.1:${port}`,
    outDir: join(WORK, "node"),
    renderMachineConfig: ({ ca }) =>
      renderConfigTemplate({
        hostname: HOSTNAME,
        ca,
        certSans: ["127.0.0.1"],
        installDisk: INSTALL_DISK,
        installSystem: true,
        timeDisabled: true,
        containerd: false,
      }),
  });
  const image = await buildImage({
    program: new URL("../main.ts", import.meta.url).pathname,
    out: join(WORK, "usb.img"),
    quietConsole: true,
  });
  const target = join(WORK, "target.img");
  {
    using f = await Deno.open(target, { write: true, create: true, truncate: true });
    await f.truncate(2 * 1024 ** 3);
  }
  const usbBefore = await sha256File(image.out);
  const cidata = join(WORK, "cidata.img");
  await writeCidataVolume(cidata, await Deno.readTextFile(bundle.paths.machineConfig));

  const get = async (...args: string[]) =>
    parseDocs(
      (await machinectl(bundle.paths.clientConfig, port, "get", ...args, "-o", "json")).out,
    );
  let vm: Vm | undefined;
  try {
    const qemuStart = performance.now();
    vm = await startVm({
      image: image.out,
      runDir: join(WORK, "qemu"),
      hostPort: port,
      bootIndex: 2,
      extraDisks: [{ file: target, bootIndex: 1 }, cidata],
    });
    const booted = vm;

    await t.step("CIDATA: the config on the drive, then mutual TLS with its CA", async () => {
      const failed = booted.waitForConsole(FAIL, { timeoutMs: 600_000 }).then(
        (m) => Promise.reject(new Error(`guest failed: ${m[0]}`)),
        () => new Promise<never>(() => {}),
      );
      const v = await Promise.race([
        dial(bundle.paths.clientConfig, port, ["version"], 600_000),
        failed,
      ]);
      assert.equal(v.code, 0, v.err);
      assert.match(v.out, new RegExp(`hostname ${HOSTNAME}`));
      console.log(`generic boot with CIDATA → mTLS API: ${secs(qemuStart)} s after QEMU started`);
      const insecure = await machinectl(
        join(WORK, "none.yaml"),
        port,
        "version",
        "--insecure",
      );
      assert.equal(insecure.code, 1, "the node still answers without a client certificate");
      const [cs] = parseDocs(
        (await machinectl(bundle.paths.clientConfig, port, "get", "configstatus", "-o", "json"))
          .out,
      );
      assert.equal(cs?.spec.source, "CIDATA volume /dev/vdc", JSON.stringify(cs));
      assert.equal(cs?.spec.state, "valid", JSON.stringify(cs));
    });

    await t.step("install to disk: the system on vdb, STATE there, rebooted from it", async () => {
      const t0 = performance.now();
      const roots = () => booted.console().then((c) => [...c.matchAll(ROOT_LINE)].map((m) => m[1]));
      await booted.waitForConsole(/machined-init: root[^]*machined-init: root/, {
        timeoutMs: 900_000,
        failOn: FAIL,
      });
      const v = await dial(bundle.paths.clientConfig, port, ["version"], 600_000);
      assert.equal(v.code, 0, v.err);
      console.log(`install to disk → booted from ${INSTALL_DISK}, mTLS API: ${secs(t0)} s`);
      await assertInstalled(get);
      const log = await booted.console();
      assert.match(log, /system written to \/dev\/vdb: copied \d+ bytes/);
      const [first, second] = await roots();
      assert.match(first, /^\/dev\/vda /, `first boot from the stick: ${first}`);
      assert.match(second, /^\/dev\/vdb /, `second boot's root from vdb: ${second}`);
    });
  } finally {
    if (vm && (await isRunning(vm.state.pid))) await vm.stop({ gracefulMs: 1000 });
  }

  await t.step("the boot medium was never written; vdb's ESP is vda's, byte for byte", async () => {
    assert.equal(await sha256File(image.out), usbBefore, "vda changed");
    const [usb, disk] = [await readImageGpt(image.out), await readImageGpt(target)];
    assert.deepEqual(disk.table.partitions.map((p) => p.name), ["EFI", "STATE", "EPHEMERAL"]);
    const [a, b] = [usb.table.partitions[0], disk.table.partitions[0]];
    assert.deepEqual([b.firstLba, b.lastLba], [a.firstLba, a.lastLba]);
    assert.notEqual(disk.table.diskGuid, usb.table.diskGuid, "a new disk GUID");
    assert.notEqual(b.uuid, a.uuid, "a new ESP GUID");
    const len = (a.lastLba - a.firstLba + 1) * 512;
    assert.equal(
      await sha256Range(target, b.firstLba * 512, len),
      await sha256Range(image.out, a.firstLba * 512, len),
    );
  });

  await t.step("the stick detached (an empty disk in its place): vdb boots alone", async () => {
    const empty = join(WORK, "empty.img");
    {
      using f = await Deno.open(empty, { write: true, create: true, truncate: true });
      await f.truncate(2 * 1024 ** 3);
    }
    const t0 = performance.now();
    const alone = await startVm({
      image: empty,
      runDir: join(WORK, "qemu-detached"),
      hostPort: port,
      bootIndex: 2,
      extraDisks: [{ file: target, bootIndex: 1 }],
    });
    try {
      const v = await dial(bundle.paths.clientConfig, port, ["version"], 600_000);
      assert.equal(v.code, 0, v.err);
      console.log(`${INSTALL_DISK} alone → mTLS API: ${secs(t0)} s after QEMU started`);
      const [root] = [...(await alone.console()).matchAll(ROOT_LINE)].map((m) => m[1]);
      assert.match(root ?? "", /^\/dev\/vdb /, `root from vdb: ${root}`);
      await assertInstalled(get);
    } finally {
      if (await isRunning(alone.state.pid)) await alone.stop({ gracefulMs: 1000 });
    }
    await assert.rejects(
      readImageGpt(empty),
      "nothing was written to the disk in the stick's place",
    );
  });
  await removeScratch(WORK);
});
