/**
 * The upgrade steps of the arm64 QEMU tier (issue 16), run by
 * e2e/node_boot_arm64_test.ts on the VM it booted (an emulated arm64 boot
 * takes minutes, so one VM serves both): with the node on slot A at
 * version X, whose config trusts `key`,
 *   1. build the same node at version Y for arm64 and bundle it (compatible
 *      from the image's arch, imager/image_bundle.ts); `machinectl upgrade
 *      -f` it: back on slot B reporting Y, ready, and B blessed;
 *   2. a bundle signed by the same trusted key but compatible with x86_64 is
 *      refused FailedPrecondition before any file byte is read (the
 *      manifest's `compatible` is checked first), and the node stays on B
 *      with its ESP unchanged (files, sizes, times and entries, read from
 *      the host's image file);
 *   3. `machinectl rollback`: back on slot A reporting X.
 * Times and sizes go to bench/results/upgrade-arm64.json.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildImage, bundleCompatible, type ImageResult } from "../imager/mod.ts";
import { UEFI_BOARD, writeBundle } from "../bundle/mod.ts";
import type { SigningKey } from "../bundle/mod.ts";
import { machinectl } from "./helpers.ts";
import {
  espFingerprint,
  findUpgradeEvent,
  hasEvent,
  nodeVersion,
  smallSlotFiles,
  type UpgradeEvent,
} from "./upgrade_helpers.ts";

/** The versions the tier boots (X, in the image) and upgrades to (Y). */
export const ARM64_X = "1.0.0-e2e";
export const ARM64_Y = "2.0.0-e2e";
/** Version of the refused x86_64 bundle (above Y: only `compatible` refuses it). */
const X86 = "3.0.0-e2e-x86";

/** What {@link upgradeArm64} works on. */
export interface Arm64UpgradeContext {
  work: string;
  /** machined's main.ts and the machine config the X image was built from. */
  program: string;
  config: string;
  /** The booted X image (its ESP offset, its file: the VM runs it without snapshot). */
  image: ImageResult;
  client: string;
  port: number;
  key: SigningKey;
}

const secondsSince = (t: number) => +((performance.now() - t) / 1000).toFixed(1);

/** Steps 1–3 of the module doc; the figures go to bench/results/upgrade-arm64.json. */
export async function upgradeArm64(c: Arm64UpgradeContext): Promise<void> {
  const { client, port } = c;
  const figures: Record<string, unknown> = { at: new Date().toISOString(), arch: "arm64" };
  let v = await nodeVersion(client, port);
  assert.deepEqual([v.slot, v.imageVersion, v.arch], ["A", ARM64_X, "aarch64"]);

  // 1. Y for arm64, bundled and installed.
  let t = performance.now();
  const y = await buildImage({
    arch: "arm64",
    program: c.program,
    out: join(c.work, "y.img"),
    config: c.config,
    quietConsole: true,
    imageVersion: ARM64_Y,
    force: true,
  });
  figures.bundleImageBuildS = secondsSince(t);
  const files = {
    "vmlinuz": y.kernelPath,
    "initramfs.img": y.initramfsPath,
    "root.img": y.rootImagePath,
  };
  const compatible = bundleCompatible(y.arch);
  assert.deepEqual(compatible, { arch: "aarch64", board: UEFI_BOARD });
  const yBundle = join(c.work, "y.bundle");
  const yb = await writeBundle(yBundle, {
    files,
    version: ARM64_Y,
    cmdline: y.cmdline,
    compatible,
    key: c.key,
  });
  assert.match(y.cmdline, /console=ttyAMA0/);
  figures.bundleBytes = yb.bytes;
  t = performance.now();
  let r = await machinectl(client, port, "upgrade", "-f", yBundle, "--timeout", "45m");
  assert.equal(r.code, 0, r.out + r.err);
  assert.match(r.out, /slot B armed as machined-b\+3\.conf: version 2\.0\.0-e2e/);
  assert.match(r.out, /node back on slot B, version 2\.0\.0-e2e and ready/);
  figures.upgradeToReadyS = secondsSince(t);
  const armed = /armed as \S+: version \S+, \d+ bytes in ([\d.]+) s/.exec(r.out);
  if (armed) figures.streamAndArmS = Number(armed[1]);
  v = await nodeVersion(client, port);
  assert.deepEqual([v.slot, v.imageVersion, v.arch], ["B", ARM64_Y, "aarch64"]);
  assert.ok(await hasEvent(client, port, "slot B", "blessed"), "B is blessed once ready");

  // 2. An x86_64 bundle, signed by the trusted key: refused on its manifest, nothing written.
  const before = await espFingerprint(c.image.out, c.image.layout!.espOffset);
  assert.ok(before.entries.includes("machined-b.conf"), before.entries.join(" "));
  const x86 = await x86Bundle(c.work, c.key);
  t = performance.now();
  r = await machinectl(client, port, "upgrade", "-f", x86, "--wait=false");
  figures.x86RefusedMs = Math.round(performance.now() - t);
  assert.equal(r.code, 1, r.out + r.err);
  assert.match(r.err, /FailedPrecondition/);
  assert.match(r.err, /built for x86_64\/uefi-pc, this machine is aarch64\/uefi-pc/);
  const seen: UpgradeEvent[] = [];
  const refused = await findUpgradeEvent(
    client,
    port,
    (e) => e.action === "refused" && /x86_64/.test(e.message),
    { all: seen },
  );
  assert.ok(refused, "an `upgrade refused` event names the architecture");
  assert.ok(
    !seen.some((e) => e.fields.version === X86),
    "the x86_64 bundle was never verified",
  );
  v = await nodeVersion(client, port);
  assert.deepEqual([v.slot, v.imageVersion], ["B", ARM64_Y]);
  assert.deepEqual(await espFingerprint(c.image.out, c.image.layout!.espOffset), before);

  // 3. Rollback to A, reporting X.
  t = performance.now();
  r = await machinectl(client, port, "rollback", "--timeout", "30m");
  assert.equal(r.code, 0, r.out + r.err);
  assert.match(r.out, /node back on slot A, version 1\.0\.0-e2e and ready/);
  figures.rollbackToReadyS = secondsSince(t);
  v = await nodeVersion(client, port);
  assert.deepEqual([v.slot, v.imageVersion], ["A", ARM64_X]);

  console.log(JSON.stringify({ suite: "upgrade-arm64", ...figures }));
  await Deno.mkdir("bench/results", { recursive: true });
  await Deno.writeTextFile(
    "bench/results/upgrade-arm64.json",
    JSON.stringify(figures, null, 2) + "\n",
  );
}

/** A bundle of three small files, signed by `key`, for x86_64 machines. */
async function x86Bundle(work: string, key: SigningKey): Promise<string> {
  const files = await smallSlotFiles(join(work, "x86"), "x86_64 image, not an arm64 one");
  const out = join(work, "x86.bundle");
  await writeBundle(out, {
    files,
    version: X86,
    cmdline: "console=ttyS0,115200 panic=10",
    compatible: { arch: "x86_64", board: UEFI_BOARD },
    key,
  });
  return out;
}
