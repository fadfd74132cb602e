import assert from "node:assert/strict";
import { parseMachineConfig, renderConfigTemplate } from "../config/mod.ts";
import { createCertificateAuthority } from "../pki/mod.ts";
import { outdatedUpConfig, renderUpConfig, UP_INSTALL_DISK, UP_PAYLOAD_ID } from "./up_config.ts";
import { ensureNodeBundle } from "./node_bundle.ts";
import { planDisk } from "./disk_image.ts";
import { DEFAULT_DISK_SIZE, DEFAULT_ESP_SIZE } from "./build_image.ts";
import { decideProvisioning, type ProvisioningPlan } from "../controllers/block/mod.ts";
import { diskFacts } from "../controllers/block/testing.ts";
import { DEFAULT_LAYOUT, PARTITION_NAME } from "../layout/mod.ts";
import { LAYOUT } from "./initramfs/initramfs.ts";

const ca = await createCertificateAuthority();
const pem = { certPem: ca.certPem, keyPem: ca.keyPem };

function parse(text: string) {
  const r = parseMachineConfig(text, "up.yaml");
  assert.ok(r.ok, r.ok ? "" : r.errors.map((e) => e.format()).join("\n"));
  return r.config;
}

Deno.test("the up config installs to the image's own disk and runs a payload after containerd", () => {
  const m = parse(renderUpConfig({ name: "machined-node", ca: pem })).machine;
  assert.deepEqual(m.install, { disk: UP_INSTALL_DISK, wipe: false, system: false });
  assert.equal(m.runtime.containerd.enabled, true);
  assert.deepEqual(m.api.cert_sans, ["127.0.0.1"]);
  const [payload] = m.services;
  assert.equal(payload.id, UP_PAYLOAD_ID);
  assert.deepEqual(payload.depends_on, ["containerd"]);
  assert.equal(payload.restart, "always");
  // The image has no shell: the payload runs on the Deno binary the image ships.
  assert.equal(payload.command[0], LAYOUT.deno);
  assert.equal(payload.command[1], "eval");
  assert.equal(payload.env.DENO_DIR, "/var/cache/deno");
  new Function(payload.command[2]); // the script is valid JavaScript
  assert.equal(outdatedUpConfig(parse(renderUpConfig({ name: "n", ca: pem }))), undefined);
});

Deno.test("the image's disk leaves room for STATE and EPHEMERAL after the ESP, which is kept", () => {
  const { table } = planDisk({
    size: DEFAULT_DISK_SIZE,
    espSize: DEFAULT_ESP_SIZE,
    diskGuid: "11111111-2222-4333-8444-555555555555",
    espGuid: "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee",
  });
  const [esp] = table.partitions;
  const facts = diskFacts({
    path: UP_INSTALL_DISK,
    size: Number(DEFAULT_DISK_SIZE),
    diskGuid: table.diskGuid,
    gpt: [{ ...esp, fs: { type: "vfat", label: "EFI", uuid: "x" }, blank: false }],
  });
  const d = decideProvisioning(facts, DEFAULT_LAYOUT, { disk: UP_INSTALL_DISK, wipe: false });
  assert.equal(d.action, "complete", JSON.stringify(d, (_k, v) => typeof v === "bigint" ? 0 : v));
  const plan = d as ProvisioningPlan;
  assert.deepEqual(plan.kept, [esp]);
  assert.deepEqual(plan.table.partitions.find((p) => p.number === esp.number), esp);
  assert.deepEqual(plan.removed, []);
  const espBytes = [esp.firstLba * 512, (esp.lastLba + 1) * 512];
  for (const z of plan.zero) {
    assert.ok(z.offset + z.length <= espBytes[0] || z.offset >= espBytes[1], "zeroes the ESP");
  }
  assert.equal(plan.created.state.name, PARTITION_NAME.STATE);
  assert.ok(plan.created.state.firstLba > esp.lastLba);
  const ephemeralBytes = (plan.created.ephemeral.lastLba - plan.created.ephemeral.firstLba + 1) *
    512;
  assert.ok(ephemeralBytes > 1 << 30, `EPHEMERAL of ${ephemeralBytes} bytes`);
});

Deno.test("a bundle an older up generated is reused and reported as outdated", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const fresh = await ensureNodeBundle(`${dir}/new`, { name: "n1", port: 50000 });
    assert.equal(fresh.created, true);
    assert.equal(fresh.outdated, undefined);
    const m = parse(await Deno.readTextFile(fresh.paths.machineConfig)).machine;
    assert.equal(m.install?.disk, UP_INSTALL_DISK);

    const old = `${dir}/old`;
    await ensureNodeBundle(old, { name: "n2", port: 50000 });
    const oldConfig = renderConfigTemplate({ hostname: "n2", ca: pem, certSans: ["127.0.0.1"] });
    await Deno.writeTextFile(`${old}/machine.yaml`, oldConfig);
    const reused = await ensureNodeBundle(old, { name: "n2", port: 50000 });
    assert.equal(reused.created, false);
    assert.match(reused.outdated ?? "", /machine\.install\.disk \/dev\/vda/);
    assert.match(reused.outdated ?? "", /"hello" payload depending on containerd/);
    assert.equal(await Deno.readTextFile(reused.paths.machineConfig), oldConfig, "not rewritten");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
