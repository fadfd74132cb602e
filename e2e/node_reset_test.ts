/**
 * The QEMU tier of Reset, on one boot of the up node (snapshot off, so the
 * image file is the node's disk) plus a data disk (/dev/vdb), with two extra
 * services: `crashy` (ignores SIGTERM, exits after 2 s, restarts: a crash
 * loop) and `marker` (logs which boots left a marker in /var/reset-markers,
 * then writes its own boot's). In sequence:
 * 1. a reset without the challenge (a made-up one) is FailedPrecondition and
 *    `machinectl reset` without --yes changes nothing;
 * 2. a graceful reset with crashy crash-looping completes within its
 *    deadline: the node comes back with new STATE/EPHEMERAL GUIDs, created
 *    that boot, and no marker from the boot before (the /var it wrote is gone);
 * 3. `machinectl reboot --wait`, and right as the API answers (the boot still
 *    under way) a forced reset, which also completes;
 * 4. `machinectl shutdown --wait`; the ESP's and the data disk's sha256 are
 *    what they were before the first boot.
 * With MACHINED_E2E_RESET_LOCKED_STATE=1 (opt-in until it has run to the end
 * once, e2e/reset_locked_state.ts) the image carries no config: it comes from
 * a CIDATA drive and lives on STATE, LUKS2 with nodeid and static keys; step 0
 * powers off, checks the disk from the host, boots as another board (the node
 * waits in maintenance saying `locked`, STATE unchanged) and unlocks STATE with
 * `machinectl unlock --insecure`; at the end no header on STATE has the old UUID.
 * Times (request → back, and → healthy) go to bench/results/reset.json.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { Code, ConnectError } from "@connectrpc/connect";
import { ensureNodeBundle, isRunning, UP_PAYLOAD_ID, upNode } from "../imager/mod.ts";
import { readGpt } from "../platform/block/mod.ts";
import { connectToNode } from "../machinectl/mod.ts";
import { freePort, machinectl, parseDocs, removeScratch } from "./helpers.ts";
import { fileContains, luksDumpAt, partitionRange } from "./luks_host.ts";
import { BOARD_B, LOCKED_STATE, lockedStateStep, startFromCidata } from "./reset_locked_state.ts";

const hasQemu = await Deno.stat("/usr/bin/qemu-system-x86_64").then(() => true, () => false);
const MiB = 1024 * 1024;

async function sha256Range(path: string, offset: number, length: number): Promise<string> {
  using f = await Deno.open(path, { read: true });
  await f.seek(offset, Deno.SeekMode.Start);
  const buf = new Uint8Array(length);
  for (let got = 0; got < length;) {
    const n = await f.read(buf.subarray(got));
    if (n === null) break;
    got += n;
  }
  const d = await crypto.subtle.digest("SHA-256", buf);
  return Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The ESP's byte range in a disk image file. */
async function espRange(image: string): Promise<{ offset: number; length: number }> {
  const size = (await Deno.stat(image)).size;
  using f = await Deno.open(image, { read: true });
  const read = async (offset: number, length: number) => {
    await f.seek(offset, Deno.SeekMode.Start);
    const b = new Uint8Array(length);
    for (let got = 0; got < length;) got += (await f.read(b.subarray(got))) ?? length;
    return b;
  };
  const gpt = await readGpt(read, size, 512);
  const esp = gpt?.table.partitions.find((p) => p.name === "EFI");
  assert.ok(esp, "the image has an ESP");
  return { offset: esp.firstLba * 512, length: (esp.lastLba - esp.firstLba + 1) * 512 };
}

const MARKER_SCRIPT = [
  `const d = "/var/reset-markers"; Deno.mkdirSync(d, { recursive: true });`,
  `const id = Deno.readTextFileSync("/proc/sys/kernel/random/boot_id").trim();`,
  `const old = [...Deno.readDirSync(d)].map((e) => e.name).sort();`,
  `console.log("markers: " + (old.join(",") || "none") + " boot " + id);`,
  `Deno.writeTextFileSync(d + "/" + id, "x\\n"); setInterval(() => {}, 1e9);`,
].join(" ");
const CRASHY_SCRIPT =
  `Deno.addSignalListener("SIGTERM", () => console.log("crashy: ignoring SIGTERM"));` +
  ` setTimeout(() => Deno.exit(3), 2000);`;

/** The up config plus the two services. */
async function resetConfig(machineConfig: string, out: string): Promise<string> {
  const doc = parse(await Deno.readTextFile(machineConfig));
  const env = { DENO_DIR: "/var/cache/deno", NO_COLOR: "1" };
  doc.machine.services.push(
    {
      id: "crashy",
      command: ["/usr/bin/deno", "eval", CRASHY_SCRIPT],
      env,
      restart: "always",
      stop_grace_period: "5s",
    },
    { id: "marker", command: ["/usr/bin/deno", "eval", MARKER_SCRIPT], env, restart: "always" },
  );
  await Deno.writeTextFile(out, stringify(doc));
  return out;
}

async function poll<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 400_000) {
  const deadline = performance.now() + timeoutMs;
  let last: unknown;
  while (performance.now() < deadline) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`timed out waiting for ${what}: ${String(last ?? "")}`);
}

Deno.test({
  name: "reset in QEMU: refused without the challenge, graceful with a crash loop, forced during " +
    "boot, re-provisioned with /var emptied, ESP and a data disk unchanged " +
    "(needs qemu-system-x86_64)",
  ignore: !hasQemu,
  sanitizeOps: false,
  sanitizeResources: false,
}, async () => {
  const work = "build/e2e/reset";
  await Deno.remove(work, { recursive: true }).catch(() => {});
  await Deno.mkdir(work, { recursive: true });
  const port = freePort();
  const nodeDir = join(work, "node");
  const bundle = await ensureNodeBundle(nodeDir, { name: "reset-node", port });
  const config = await resetConfig(bundle.paths.machineConfig, join(work, "config.yaml"));
  const dataDisk = join(work, "data.img");
  const pattern = new Uint8Array(16 * MiB);
  crypto.getRandomValues(pattern.subarray(0, 65536));
  for (let i = 65536; i < pattern.length; i++) pattern[i] = pattern[i % 65536];
  await Deno.writeFile(dataDisk, pattern);
  const dataBefore = await sha256Range(dataDisk, 0, pattern.length);

  const canary = `canary-${crypto.randomUUID()}`;
  const cidataNode = LOCKED_STATE
    ? await startFromCidata({
      work,
      port,
      clientConfig: bundle.paths.clientConfig,
      config,
      canary,
      dataDisk,
    })
    : undefined;
  const node = cidataNode ? { ...cidataNode, bundle } : await upNode({
    nodeDir,
    name: "reset-node",
    port,
    image: {
      program: new URL("../main.ts", import.meta.url).pathname,
      out: join(work, "node.img"),
      quietConsole: true,
      force: true,
      config,
    },
    vm: { runDir: join(work, "qemu"), accel: "auto", snapshot: false, extraDisks: [dataDisk] },
    timeoutMs: 400_000,
  });
  let { vm } = node;
  const cc = node.bundle.paths.clientConfig;
  const esp = await espRange(node.image.out);
  const espBefore = await sha256Range(node.image.out, esp.offset, esp.length);
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
  const figures: Record<string, number | string> = { accel: vm.state.accel };
  try {
    const header = cidataNode
      ? await lockedStateStep(vm, {
        work,
        cc,
        image: node.image.out,
        port,
        canary,
        docs,
        figures,
        boot: () => cidataNode.boot("qemu-b", BOARD_B),
        setVm: (v) => (vm = v),
        beforeOff: async () => markerLine(await bootId()),
      })
      : undefined;
    if (header) {
      figures.firstBootApiS = cidataNode!.apiS;
      await healthy();
      figures.unlockToHealthyS = +((performance.now() - header.unlockedAt) / 1000).toFixed(1);
      const [st] = await docs("volumestatus", "STATE");
      assert.deepEqual(st.spec.unlockedBy, { slot: 1, kind: "static" }, JSON.stringify(st));
      assert.deepEqual(st.spec.keySlots, [
        { slot: 0, kind: "nodeid", proven: false },
        { slot: 1, kind: "static", proven: true },
      ]);
    }
    const vols1 = await volumes();
    const boot1 = await bootId();
    // With step 0, EPHEMERAL (plain) kept board A's marker across the change of board.
    assert.match(await markerLine(boot1), header ? /markers: (?!none)/ : /markers: none/);
    await poll("crashy restarting", async () => {
      const [s] = await docs("services", "crashy");
      return Number(s?.spec.restarts ?? 0) >= 1 ? true : undefined;
    });

    // 1. Refused without the challenge; without --yes nothing happens either.
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

    // 2. Graceful reset with a crash-looping service.
    let t0 = performance.now();
    const graceful = await mc("reset", "--yes", "--timeout", "8m");
    assert.equal(graceful.code, 0, graceful.out + graceful.err);
    figures.gracefulBackS = +((performance.now() - t0) / 1000).toFixed(1);
    assert.match(graceful.out, /node back at .* \(boot /);
    assert.match(graceful.out, /re-provisioned: /);
    await healthy();
    figures.gracefulHealthyS = +((performance.now() - t0) / 1000).toFixed(1);
    const boot2 = await bootId();
    assert.notEqual(boot2, boot1);
    const vols2 = await volumes();
    const guids1 = new Set(vols1.map((v) => v.spec.partitionUuid));
    assert.ok(vols2.every((v) => !guids1.has(v.spec.partitionUuid)), "new partitions");
    // Created this boot (the decision was `complete`; later cycles read the new layout: `leave`).
    assert.ok(vols2.every((v) => v.spec.created !== null), JSON.stringify(vols2));
    assert.match(await markerLine(boot2), /markers: none/, "the marker of the boot before is gone");

    // 3. Reboot --wait, then a forced reset while the new boot is still under way.
    const reboot = await mc("reboot", "--wait", "--timeout", "8m");
    assert.equal(reboot.code, 0, reboot.out + reboot.err);
    assert.match(reboot.out, /node back at .* after [\d.]+ s \(boot /);
    t0 = performance.now();
    const forced = await mc("reset", "--yes", "--graceful=false", "--timeout", "8m");
    assert.equal(forced.code, 0, forced.out + forced.err);
    assert.match(forced.out, /reset accepted \(forced\)/);
    figures.forcedDuringBootBackS = +((performance.now() - t0) / 1000).toFixed(1);
    await healthy();
    figures.forcedDuringBootHealthyS = +((performance.now() - t0) / 1000).toFixed(1);
    const boot4 = await bootId();
    assert.match(await markerLine(boot4), /markers: none/);

    // 4. Shutdown --wait; then the ESP and the data disk are as they were.
    const shutdown = await mc("shutdown", "--wait", "--timeout", "4m");
    assert.equal(shutdown.code, 0, shutdown.out + shutdown.err);
    await poll(
      "QEMU to exit",
      async () => (await isRunning(vm.state.pid)) ? undefined : true,
      60_000,
    );
    assert.equal(await sha256Range(node.image.out, esp.offset, esp.length), espBefore, "ESP");
    assert.equal(await sha256Range(dataDisk, 0, pattern.length), dataBefore, "data disk");
    if (header) {
      // The header of step 0 is gone: no header on STATE carries its UUID; STATE has a new one.
      const state = await partitionRange(node.image.out, "STATE");
      const oldUuid = new TextEncoder().encode(header.uuid);
      assert.equal(await fileContains(node.image.out, oldUuid, state), false, "the old header");
      assert.notEqual((await luksDumpAt(node.image.out, state.offset, work)).uuid, header.uuid);
    }
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
