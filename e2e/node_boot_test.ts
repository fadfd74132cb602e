/**
 * The QEMU tier: builds a machined image, boots it under TCG (OVMF →
 * systemd-boot → Debian cloud kernel → machined-init → Deno → machined as
 * PID 1) and checks it from the host through the API only: machined is PID 1,
 * MachineStatus reaches running, the config's hostname is applied, the image's
 * modules are loaded (virtio_net's link exists), apid answers only a client
 * certificate from the node CA; then `machinectl reboot` brings the node back
 * and `machinectl shutdown` powers it off (QEMU exits). Boot times and RSS go
 * to bench/results/boot.json.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildImage } from "../imager/build_image.ts";
import { isRunning, startVm, type Vm } from "../imager/qemu/vm.ts";
import { renderConfigTemplate } from "../config/mod.ts";
import {
  createCertificateAuthority,
  generateNodeBundle,
  issueClientCertificate,
} from "../pki/mod.ts";
import { freePort, machinectl, parseDocs } from "./helpers.ts";

const TIMEOUT_MS = 600_000;
const HOSTNAME = "e2e-node";
const API_READY = /machined: API ready pid=(\d+) port=\d+ machined_ms=(\d+) uptime_s=([\d.]+)/;
const RSS = /machined: rss machined_kib=(\d+) apid_kib=(\d+)/;
const FAIL = /Kernel panic|machined: FATAL|machined-init: FATAL/;

const hasQemu = await Deno.stat("/usr/bin/qemu-system-x86_64").then(() => true, () => false);

/** Polls `get TYPE -o json` until `pred` holds (the node's API answers; bounded). */
async function waitForResource(
  config: string,
  port: number,
  args: string[],
  pred: (docs: Array<{ spec: Record<string, unknown>; metadata: { id: string } }>) => boolean,
  timeoutMs = 120_000,
) {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < deadline) {
    const r = await machinectl(config, port, "get", ...args, "-o", "json");
    last = r.out + r.err;
    if (r.code === 0 && r.out.trim()) {
      const docs = parseDocs(r.out);
      if (pred(docs)) return docs;
    }
    await new Promise((res) => setTimeout(res, 1000));
  }
  throw new Error(`timed out waiting for ${args.join(" ")}; last output: ${last}`);
}

Deno.test({
  name: "a machined image boots in QEMU as PID 1 and is driven through the API",
  ignore: !hasQemu,
  sanitizeOps: false,
  sanitizeResources: false,
}, async () => {
  const work = "build/e2e/node";
  await Deno.remove(work, { recursive: true }).catch(() => {});
  const bundle = await generateNodeBundle({
    name: HOSTNAME,
    endpoint: "127.0.0.1:50000",
    outDir: work,
    renderMachineConfig: ({ ca }) =>
      renderConfigTemplate({ hostname: HOSTNAME, ca, timeDisabled: true, containerd: false }),
  });
  const clientConfig = bundle.paths.clientConfig;
  const t0 = performance.now();
  const image = await buildImage({
    program: new URL("../main.ts", import.meta.url).pathname,
    config: bundle.paths.machineConfig,
    out: join(work, "node.img"),
    quietConsole: true,
    force: true,
  });
  const port = freePort();
  const qemuStart = performance.now();
  const vm: Vm = await startVm({
    image: image.out,
    runDir: join(work, "qemu"),
    hostPort: port,
    accel: "auto",
    snapshot: true,
  });
  try {
    // 1. machined is PID 1 and its API comes up.
    const ready = await vm.waitForConsole(API_READY, { timeoutMs: TIMEOUT_MS / 3, failOn: FAIL });
    const apiReadyS = (performance.now() - qemuStart) / 1000;
    assert.equal(ready[1], "1", "machined must run as PID 1");
    const rss = await vm.waitForConsole(RSS, { timeoutMs: 60_000, failOn: FAIL });

    // 2. MachineStatus reaches running (ready), as seen from the host over mTLS.
    const [ms] = await waitForResource(
      clientConfig,
      port,
      ["machinestatus"],
      (d) => d[0]?.spec.stage === "running" && d[0]?.spec.pid1 === true,
    );
    assert.equal(ms.spec.mode, "node");

    // 3. The config's hostname is applied.
    const version = await machinectl(clientConfig, port, "version");
    assert.equal(version.code, 0, version.err);
    assert.match(version.out, new RegExp(`hostname ${HOSTNAME}`));
    await waitForResource(
      clientConfig,
      port,
      ["hostnamestatus"],
      (d) => d.some((h) => h.spec.hostname === HOSTNAME),
    );

    // 4. The image's modules are loaded: virtio_net drives eth0, which has a DHCP address.
    await waitForResource(
      clientConfig,
      port,
      ["links"],
      (d) => d.some((l) => l.metadata.id !== "lo" && l.spec.type === "ether"),
    );
    await waitForResource(
      clientConfig,
      port,
      ["addresses"],
      (d) => d.some((a) => String(a.spec.address ?? a.metadata.id).startsWith("10.0.2.")),
    );

    // 5. apid answers only a client certificate from the node CA.
    const other = await createCertificateAuthority();
    const stranger = await issueClientCertificate({ ca: other, name: "mallory", role: "os:admin" });
    const strangerConfig = join(work, "stranger.yaml");
    await Deno.writeTextFile(
      strangerConfig,
      `context: x\ncontexts:\n  x:\n    endpoints: ["127.0.0.1:${port}"]\n` +
        `    ca: ${btoa(bundle.secrets.ca.certPem)}\n    crt: ${btoa(stranger.certPem)}\n` +
        `    key: ${btoa(stranger.keyPem)}\n`,
    );
    const refused = await machinectl(strangerConfig, port, "get", "machinestatus");
    assert.equal(refused.code, 1);
    assert.match(
      refused.err,
      /(rejected|refused) this client certificate|did not accept this client/,
    );

    // 6. Reboot brings the node back.
    const reboot = await machinectl(clientConfig, port, "reboot");
    assert.equal(reboot.code, 0, reboot.err);
    const again = await vm.waitForConsole(
      new RegExp(`${API_READY.source}[\\s\\S]*${API_READY.source}`),
      { timeoutMs: TIMEOUT_MS / 3, failOn: FAIL },
    );
    assert.ok(again, "machined came back after reboot");
    await waitForResource(
      clientConfig,
      port,
      ["machinestatus"],
      (d) => d[0]?.spec.stage === "running",
    );

    // 7. Shutdown powers the node off: QEMU exits by itself.
    const shutdown = await machinectl(clientConfig, port, "shutdown");
    assert.equal(shutdown.code, 0, shutdown.err);
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline && (await isRunning(vm.state.pid))) {
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.equal(await isRunning(vm.state.pid), false, "QEMU exits after shutdown");

    const figures = {
      at: new Date().toISOString(),
      accel: vm.state.accel,
      imageBuildS: +((qemuStart - t0) / 1000).toFixed(1),
      qemuStartToApiReadyS: +apiReadyS.toFixed(1),
      kernelStartToApiReadyS: Number(ready[3]),
      machinedStartToApiReadyMs: Number(ready[2]),
      machinedRssMiB: +(Number(rss[1]) / 1024).toFixed(1),
      apidRssMiB: +(Number(rss[2]) / 1024).toFixed(1),
      imageBytes: Number(image.imageBytes),
      initramfsBytes: (await Deno.stat(image.initramfsPath)).size,
    };
    console.log(JSON.stringify({ suite: "boot", ...figures }));
    await Deno.mkdir("bench/results", { recursive: true });
    await Deno.writeTextFile("bench/results/boot.json", JSON.stringify(figures, null, 2) + "\n");
  } finally {
    if (await isRunning(vm.state.pid)) await vm.stop({ gracefulMs: 1000 });
  }
});
