/**
 * From a generic image to an installed node, in one QEMU run: the generic
 * image (no config, no CA: what `deno task image --generic` builds) is the
 * "USB stick" on /dev/vda, /dev/vdb is an empty disk, and /dev/vdc is a
 * NoCloud config drive (a FAT volume labelled CIDATA whose `user-data` is
 * the machine config, e2e/cidata.ts).
 *
 * 1. CIDATA: the node finds no config at boot, finds `user-data` on the
 *    CIDATA volume (node/late_config.ts), leaves maintenance mode and serves
 *    mutual TLS with the config's CA (machinectl with the config's client
 *    credentials and full name verification; `--insecure` is refused).
 *
 * Prints the time from QEMU start to the mTLS API.
 * Run: `deno test -A e2e/node_install_test.ts` (QEMU, mkfs.vfat, mtools).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildImage } from "../imager/build_image.ts";
import { isRunning, startVm, type Vm } from "../imager/qemu/vm.ts";
import { renderConfigTemplate } from "../config/mod.ts";
import { generateNodeBundle } from "../pki/mod.ts";
import { writeCidataVolume } from "./cidata.ts";
import { freePort, machinectl, parseDocs } from "./helpers.ts";

const WORK = "build/e2e/install";
const HOSTNAME = "e2e-install";
const INSTALL_DISK = "/dev/vdb";
const FAIL = /Kernel panic|machined: FATAL|machined-init: FATAL/;
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

Deno.test({
  name: "a generic image takes its config from a CIDATA volume and serves mTLS with its CA " +
    "(needs QEMU, mkfs.vfat, mtools)",
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
    await f.truncate(2 << 30);
  }
  const cidata = join(WORK, "cidata.img");
  await writeCidataVolume(cidata, await Deno.readTextFile(bundle.paths.machineConfig));

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
  } finally {
    if (vm && (await isRunning(vm.state.pid))) await vm.stop({ gracefulMs: 1000 });
  }
});
