/**
 * The QEMU tier of Reset and of a config kept on an encrypted STATE, on one
 * disk image (snapshot off, so the image file is the node's disk) plus a data
 * disk (/dev/vdb) and a CIDATA drive. The image carries no config: it comes
 * from the CIDATA drive (the up config, STATE LUKS2 with `nodeid` slot 0 and
 * `static` slot 1, a canary, and two extra services: `crashy` ignores SIGTERM,
 * exits after 2 s and restarts, a crash loop; `marker` logs which boots left a
 * marker in /var/reset-markers, then writes its own boot's) and then lives on
 * STATE. In sequence:
 * 0. board A formats STATE LUKS2 and keeps the config there; powered off, the
 *    host finds neither the canary nor the passphrase in the image and both
 *    tokens in `cryptsetup luksDump`; booted as board B (another `-uuid`) the
 *    node waits in maintenance saying `locked`, STATE unchanged, a wrong
 *    passphrase refused, and `machinectl unlock STATE --insecure` opens it: the
 *    same boot goes on with the config read from STATE (e2e/reset_locked_state.ts);
 * 1. on that boot, still under way, a forced reset completes (close, erase the
 *    LUKS2 header, wipe) and the node comes back from CIDATA, healthy;
 * 2. a reset without the challenge (a made-up one) is FailedPrecondition and
 *    `machinectl reset` without --yes changes nothing;
 * 3. a graceful reset with crashy crash-looping completes within its
 *    deadline: the node comes back with new STATE/EPHEMERAL GUIDs, created
 *    that boot, and no marker from the boot before (the /var it wrote is gone);
 * 4. `machinectl shutdown --wait`; the ESP's and the data disk's sha256 are
 *    what they were before the first boot, and no header on STATE carries the
 *    UUID of step 0's (the crypto-erase left no openable header).
 * Times go to bench/results/reset.json.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { ensureNodeBundle, isRunning, UP_PAYLOAD_ID } from "../imager/mod.ts";
import { connectToNode } from "../machinectl/mod.ts";
import { sha256Range } from "./cidata.ts";
import { freePort, machinectl, parseDocs, removeScratch } from "./helpers.ts";
import { fileContains, luksDumpAt, partitionRange } from "./luks_host.ts";
import { lockedStateStep } from "./reset_locked_state.ts";
import { BOARD_B, poll, resetConfig, secondsSince, startResetNode } from "./reset_node.ts";

const hasQemu = await Deno.stat("/usr/bin/qemu-system-x86_64").then(() => true, () => false);
const MiB = 1024 * 1024;

Deno.test({
  name: "reset in QEMU: a config on an encrypted STATE locked on another board and unlocked by " +
    "passphrase; forced during that boot, refused without the challenge, graceful with a crash " +
    "loop, re-provisioned with /var emptied, ESP and a data disk unchanged, no old LUKS2 header " +
    "(needs qemu-system-x86_64)",
  ignore: !hasQemu,
  sanitizeOps: false,
  sanitizeResources: false,
}, async () => {
  const tCase = performance.now();
  const work = "build/e2e/reset";
  await Deno.remove(work, { recursive: true }).catch(() => {});
  await Deno.mkdir(work, { recursive: true });
  const port = freePort();
  const bundle = await ensureNodeBundle(join(work, "node"), { name: "reset-node", port });
  const cc = bundle.paths.clientConfig;
  const dataDisk = join(work, "data.img");
  const pattern = new Uint8Array(16 * MiB);
  crypto.getRandomValues(pattern.subarray(0, 65536));
  for (let i = 65536; i < pattern.length; i++) pattern[i] = pattern[i % 65536];
  await Deno.writeFile(dataDisk, pattern);
  const dataBefore = await sha256Range(dataDisk, 0, pattern.length);

  const canary = `canary-${crypto.randomUUID()}`;
  const configText = resetConfig(await Deno.readTextFile(bundle.paths.machineConfig), canary);
  const node = await startResetNode({ work, port, clientConfig: cc, configText, dataDisk });
  let { vm } = node;
  const image = node.image.out;
  const esp = await partitionRange(image, "EFI");
  const espBefore = await sha256Range(image, esp.offset, esp.length);
  const mc = (...args: string[]) => machinectl(cc, port, ...args);
  const docs = async (...args: string[]) => {
    const r = await mc("get", ...args, "-o", "json");
    if (r.code !== 0) throw new Error(r.err);
    return parseDocs(r.out);
  };
  const volumes = () =>
    poll("STATE and EPHEMERAL ready", async () => {
      const d = await docs("volumestatus");
      const ready = d.filter((v) => v.spec.phase === "ready");
      return ready.length === 2 ? ready : undefined;
    });
  const markerLine = (bootId: string) =>
    poll(`the marker service's line for boot ${bootId}`, async () => {
      const r = await mc("logs", "marker");
      return r.out.split("\n").find((l) => l.includes(`boot ${bootId}`));
    });
  const healthy = () =>
    poll("MachineStatus running, the payload running", async () => {
      const [ms] = await docs("machinestatus");
      const [svc] = await docs("services", UP_PAYLOAD_ID);
      return ms?.spec.stage === "running" && svc?.spec.state === "running" ? true : undefined;
    });
  const bootId = async () => {
    using conn = await connectToNode({ config: cc, endpoints: [`127.0.0.1:${port}`] });
    return (await conn.client.version({})).bootId;
  };
  const figures: Record<string, number | string> = {
    accel: vm.state.accel,
    firstBootApiS: node.apiS,
  };
  try {
    // 0. The config on an encrypted STATE: locked on board B, unlocked by passphrase.
    const header = await lockedStateStep(vm, {
      work,
      cc,
      image,
      port,
      canary,
      docs,
      figures,
      boot: () => node.boot("qemu-b", BOARD_B),
      setVm: (v) => (vm = v),
      beforeOff: async () => markerLine(await bootId()),
    });
    // The same boot goes on with the config read from STATE: the API under its CA, and the
    // provisioner opens STATE with the config's static key (its nodeid key is board A's).
    const unlockedBoot = await poll("the API with mutual TLS after the unlock", bootId);
    figures.unlockToApiS = secondsSince(header.unlockedAt);
    const [cs] = await docs("configstatus");
    assert.equal(cs.spec.state, "valid");
    assert.match(String(cs.spec.source), /^STATE /, "the config was read from STATE");
    const [st] = await poll("STATE ready on board B", async () => {
      const d = (await docs("volumestatus", "STATE")).filter((v) => v.spec.phase === "ready");
      return d.length === 1 ? d : undefined;
    });
    figures.unlockToStateReadyS = secondsSince(header.unlockedAt);
    assert.deepEqual(st.spec.unlockedBy, { slot: 1, kind: "static" }, JSON.stringify(st));
    assert.deepEqual(st.spec.keySlots, [
      { slot: 0, kind: "nodeid", proven: false },
      { slot: 1, kind: "static", proven: true },
    ]);

    // 1. A forced reset while that boot is still under way (no reboot spent on it).
    let t0 = performance.now();
    const forced = await mc("reset", "--yes", "--graceful=false", "--timeout", "8m");
    assert.equal(forced.code, 0, forced.out + forced.err);
    assert.match(forced.out, /reset accepted \(forced\)/);
    figures.forcedDuringBootBackS = secondsSince(t0);
    await healthy();
    figures.forcedDuringBootHealthyS = secondsSince(t0);
    const vols1 = await volumes();
    const boot1 = await bootId();
    assert.notEqual(boot1, unlockedBoot);
    assert.match(await markerLine(boot1), /markers: none/);
    await poll("crashy restarting", async () => {
      const [s] = await docs("services", "crashy");
      return Number(s?.spec.restarts ?? 0) >= 1 ? true : undefined;
    });

    // 2. Refused without the challenge; without --yes nothing happens either.
    {
      using conn = await connectToNode({ config: cc, endpoints: [`127.0.0.1:${port}`] });
      const preview = await conn.client.reset({});
      assert.deepEqual(preview.partitions.map((p) => p.label).sort(), ["EPHEMERAL", "STATE"]);
      assert.ok(preview.partitions.every((p) => p.disk === "/dev/vda"));
      assert.equal(preview.bootId, boot1);
      await assert.rejects(
        conn.client.reset({ challenge: "mdr1.e30.AAAA" }),
        (e) => e instanceof ConnectError && e.code === Code.FailedPrecondition,
      );
    }
    const noYes = await mc("reset");
    assert.equal(noYes.code, 1, noYes.out + noYes.err);
    assert.match(noYes.err, /needs --yes/);
    assert.equal(await bootId(), boot1, "nothing happened");

    // 3. Graceful reset with a crash-looping service.
    t0 = performance.now();
    const graceful = await mc("reset", "--yes", "--timeout", "8m");
    assert.equal(graceful.code, 0, graceful.out + graceful.err);
    figures.gracefulBackS = secondsSince(t0);
    assert.match(graceful.out, /node back at .* \(boot /);
    assert.match(graceful.out, /re-provisioned: /);
    await healthy();
    figures.gracefulHealthyS = secondsSince(t0);
    const boot2 = await bootId();
    assert.notEqual(boot2, boot1);
    const vols2 = await volumes();
    const guids1 = new Set(vols1.map((v) => v.spec.partitionUuid));
    assert.ok(vols2.every((v) => !guids1.has(v.spec.partitionUuid)), "new partitions");
    // Created this boot (the decision was `complete`; later cycles read the new layout: `leave`).
    assert.ok(vols2.every((v) => v.spec.created !== null), JSON.stringify(vols2));
    assert.match(await markerLine(boot2), /markers: none/, "the marker of the boot before is gone");

    // 4. Shutdown --wait; then the ESP and the data disk are as they were, step 0's header gone.
    const shutdown = await mc("shutdown", "--wait", "--timeout", "4m");
    assert.equal(shutdown.code, 0, shutdown.out + shutdown.err);
    await poll(
      "QEMU to exit",
      async () => (await isRunning(vm.state.pid)) ? undefined : true,
      60_000,
    );
    assert.equal(await sha256Range(image, esp.offset, esp.length), espBefore, "ESP");
    assert.equal(await sha256Range(dataDisk, 0, pattern.length), dataBefore, "data disk");
    const state = await partitionRange(image, "STATE");
    const oldUuid = new TextEncoder().encode(header.uuid);
    assert.equal(await fileContains(image, oldUuid, state), false, "step 0's header");
    assert.notEqual((await luksDumpAt(image, state.offset, work)).uuid, header.uuid);
    figures.caseS = secondsSince(tCase);
    console.log(JSON.stringify({ suite: "reset", ...figures }));
    await Deno.mkdir("bench/results", { recursive: true });
    await Deno.writeTextFile(
      "bench/results/reset.json",
      JSON.stringify({ at: new Date().toISOString(), ...figures }, null, 2) + "\n",
    );
  } catch (e) {
    const log = await Deno.readTextFile(vm.state.consoleLog).catch(() => "");
    console.error(`figures so far: ${JSON.stringify(figures)}\nconsole tail:\n${log.slice(-6000)}`);
    throw e;
  } finally {
    if (await isRunning(vm.state.pid)) await vm.stop({ gracefulMs: 1000 });
  }
  await removeScratch(work);
});
