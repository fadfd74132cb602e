/**
 * The upgrade steps of the Raspberry Pi 3 QEMU tier (issue 16), run by
 * e2e/node_rpi3_test.ts on the VM it booted. The SD card was prepared as an
 * upgrade from B to A leaves it (slot.txt `os_prefix=B/`, trial.txt
 * `os_prefix=A/`), and QEMU booted A, as the firmware would (trial.txt wins).
 * Through the API, as an operator would:
 *   1. the trial A becomes ready and is blessed: slot.txt names A with B as
 *      its fallback (UpgradeStatus: A blessed and booted, B blessed);
 *   2. a bundle signed by the trusted key but built for a UEFI arm64 machine
 *      is refused FailedPrecondition by `compatible` (board uefi-pc, not rpi3);
 *   3. a Pi bundle (board rpi3), staged: streamed over the USB NIC into slot
 *      B, re-read, and armed as trial.txt (UpgradeStatus: B trial). Its three
 *      files are small (a few KiB, made here): the model's USB and SD card
 *      under TCG moved the image's own 107 MiB slot in 893 s (about
 *      125 KiB/s). `E2E_PI_FULL_BUNDLE=1` stages the image's slot instead;
 *   4. a rollback to the armed B is refused FailedPrecondition.
 * After the VM stops, {@link checkPiFat} reads the SD card's FAT with mtools:
 * the booted A's files are unchanged, B holds the bundle's files, keeps its
 * device trees, and its cmdline.txt carries the bundle's command line,
 * slot.txt names A without a fallback, and trial.txt arms B, so the firmware
 * would start B next.
 * Booting B itself needs the firmware's os_prefix (hardware-only).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { ImageResult } from "../imager/mod.ts";
import { bundleCompatible, run } from "../imager/mod.ts";
import { parseOsPrefix, piSlotTxt, piTrialTxt } from "../layout/mod.ts";
import { hashFile, RPI3_BOARD, type SlotFileName, UEFI_BOARD, writeBundle } from "../bundle/mod.ts";
import type { SigningKey } from "../bundle/mod.ts";
import { machinectl } from "./helpers.ts";
import { findUpgradeEvent, smallSlotFiles } from "./upgrade_helpers.ts";
import { upgradeStatus } from "./upgrade_status_checks.ts";

/** The versions: the image's (X) and the staged bundle's (Y). */
export const PI_X = "1.0.0-e2e";
export const PI_Y = "2.0.0-e2e";
/** A word the bundle's command line carries, so B's cmdline.txt shows it was written. */
const MARK = "machined.e2e=pi-upgrade";
const MTOOLS = { env: { MTOOLS_SKIP_CHECK: "1" } };

/** mtools' image argument for the Pi image's boot FAT (partition 1 at sector 2048). */
export function piFat(image: string): string {
  return `${image}@@${2048 * 512}`;
}

/** Write `text` to the FAT at `path` from the host (before the VM runs). */
export async function writeFatText(image: string, work: string, path: string, text: string) {
  const tmp = join(work, `fat-${path.replaceAll("/", "_")}`);
  await Deno.writeTextFile(tmp, text);
  await run("mcopy", ["-o", "-i", piFat(image), tmp, `::${path}`], MTOOLS);
}

/** A FAT file's text. */
export function readFatText(image: string, path: string): Promise<string> {
  return run("mtype", ["-i", piFat(image), `::${path}`], MTOOLS);
}

/** A FAT file's SHA-256, copied out to `work`. */
async function fatSha256(image: string, work: string, path: string): Promise<string> {
  const out = join(work, `sha-${path.replaceAll("/", "_")}`);
  await run("mcopy", ["-o", "-i", piFat(image), `::${path}`, out], MTOOLS);
  const { sha256 } = await hashFile(out);
  await Deno.remove(out);
  return sha256;
}

const sha256Of = async (path: string) => (await hashFile(path)).sha256;

/**
 * Before the boot: the SD card as an install of A from B leaves it (B
 * blessed, A armed). Returns A's cmdline.txt as imaged.
 */
export async function armTrialOfA(image: string, work: string): Promise<string> {
  await writeFatText(image, work, "/slot.txt", piSlotTxt("B"));
  await writeFatText(image, work, "/trial.txt", piTrialTxt("A"));
  return await readFatText(image, "/A/cmdline.txt");
}

/** What {@link upgradePi} works on. */
export interface PiUpgradeContext {
  work: string;
  image: ImageResult;
  client: string;
  port: number;
  key: SigningKey;
}

/** The files of the staged bundle, by slot file name. */
export type PiBundleFiles = Record<SlotFileName, string>;

/** The staged bundle's files: small ones made in `work`, or the image's slot (module doc). */
async function piBundleFiles(c: PiUpgradeContext): Promise<PiBundleFiles> {
  if (Deno.env.get("E2E_PI_FULL_BUNDLE") === "1") {
    return {
      "vmlinuz": c.image.kernelPath,
      "initramfs.img": c.image.initramfsPath,
      "root.img": c.image.rootImagePath,
    };
  }
  return await smallSlotFiles(join(c.work, "y-files"), `Pi bundle ${PI_Y}`);
}

const secondsSince = (t: number) => +((performance.now() - t) / 1000).toFixed(1);

/** Steps 1–4 of the module doc; returns the staged files and figures for the boot JSON line. */
export async function upgradePi(
  c: PiUpgradeContext,
): Promise<{ files: PiBundleFiles; figures: Record<string, number> }> {
  const { client, port } = c;
  const figures: Record<string, number> = {};
  const slot = (s: Awaited<ReturnType<typeof upgradeStatus>>, n: "A" | "B") =>
    s.slots.find((x) => x.slot === n)!;

  // 1. The trial A, once ready, is blessed; B (complete, blessed before) is its fallback.
  let s = await upgradeStatus(client, port, (s) => slot(s, "A").state === "blessed", 180_000);
  assert.deepEqual(
    [s.booted, slot(s, "A").state, slot(s, "B").state, s.floor],
    ["A", "blessed", "blessed", PI_X],
    JSON.stringify(s),
  );

  // 2. A UEFI arm64 bundle signed by the trusted key: refused on its manifest.
  const uefi = await tinyBundle(c.work, c.key, bundleCompatible("arm64"));
  let r = await machinectl(client, port, "upgrade", "-f", uefi, "--stage");
  assert.equal(r.code, 1, r.out + r.err);
  assert.match(r.err, /FailedPrecondition/);
  assert.match(r.err, /built for aarch64\/uefi-pc, this machine is aarch64\/rpi3/);

  // 3. The Pi's bundle, staged.
  const compatible = bundleCompatible("arm64", "rpi3");
  assert.deepEqual(compatible, { arch: "aarch64", board: RPI3_BOARD });
  const bundlePath = join(c.work, "y.bundle");
  const files = await piBundleFiles(c);
  const b = await writeBundle(bundlePath, {
    files,
    version: PI_Y,
    cmdline: `${MARK} ${c.image.cmdline}`,
    compatible,
    key: c.key,
  });
  figures.piBundleBytes = b.bytes;
  const t = performance.now();
  r = await machinectl(client, port, "upgrade", "-f", bundlePath, "--stage", "--timeout", "30m");
  assert.equal(r.code, 0, r.out + r.err);
  assert.match(r.out, /slot B armed as trial\.txt: version 2\.0\.0-e2e/);
  figures.piStagedUpgradeS = secondsSince(t);
  s = await upgradeStatus(client, port, (s) => slot(s, "B").state === "trial");
  assert.deepEqual(
    [s.booted, slot(s, "A").state, slot(s, "B").state, slot(s, "B").triesLeft, s.last.outcome],
    ["A", "blessed", "trial", 1, "armed"],
    JSON.stringify(s),
  );
  const armed = await findUpgradeEvent(client, port, (e) => e.action === "armed", { tail: 50 });
  assert.ok(armed, "an `upgrade armed` event");

  // 4. Rolling back to the armed (never blessed) B is refused.
  r = await machinectl(client, port, "rollback", "--stage");
  assert.equal(r.code, 1, r.out + r.err);
  assert.match(r.err, /FailedPrecondition/);
  return { files, figures };
}

/**
 * After the VM stopped: the FAT as the staged upgrade left it (module doc),
 * read from the SD card image.
 */
export async function checkPiFat(
  c: Pick<PiUpgradeContext, "work" | "image">,
  imagedCmdlineA: string,
  staged: PiBundleFiles,
): Promise<void> {
  const img = c.image.out;
  assert.equal(await readFatText(img, "/slot.txt"), piSlotTxt("A"), "A blessed, B no fallback");
  assert.equal(await readFatText(img, "/trial.txt"), piTrialTxt("B"), "B armed");
  const firmwareChoice = parseOsPrefix(await readFatText(img, "/trial.txt")) ??
    parseOsPrefix(await readFatText(img, "/slot.txt"));
  assert.equal(firmwareChoice, "B", "the firmware would boot B next");
  assert.equal(await readFatText(img, "/A/cmdline.txt"), imagedCmdlineA, "A's cmdline.txt kept");
  const rootA = await sha256Of(c.image.rootImagePath);
  assert.equal(await fatSha256(img, c.work, "/A/root.img"), rootA, "A's root image kept");
  assert.equal(
    await fatSha256(img, c.work, "/A/vmlinuz"),
    await sha256Of(c.image.kernelPath),
    "A's kernel kept",
  );
  for (const [name, path] of Object.entries(staged)) {
    assert.equal(await fatSha256(img, c.work, `/B/${name}`), await sha256Of(path), `B/${name}`);
  }
  const root = await sha256Of(staged["root.img"]);
  const cmdlineB = await readFatText(img, "/B/cmdline.txt");
  assert.ok(cmdlineB.startsWith(`${MARK} `), `B's cmdline.txt is the bundle's: ${cmdlineB}`);
  assert.match(cmdlineB, /machined\.slot=B machined\.root\.sha256=[0-9a-f]{64}/);
  assert.ok(cmdlineB.includes(`machined.root.sha256=${root}`), cmdlineB);
  const listing = await run("mdir", ["-b", "-i", piFat(img), "::/B"], MTOOLS);
  assert.ok(!/\.new|\.tmp/.test(listing), `no leftovers in B: ${listing}`);
  assert.match(listing, /bcm2837-rpi-3-b\.dtb/, "B keeps its device trees");
}

/** A bundle of three small files signed by `key` for `compatible`. */
async function tinyBundle(
  work: string,
  key: SigningKey,
  compatible: { arch: string; board: string },
): Promise<string> {
  assert.equal(compatible.board, UEFI_BOARD);
  const files = await smallSlotFiles(join(work, "uefi"), "UEFI arm64 image");
  const out = join(work, "uefi.bundle");
  await writeBundle(out, { files, version: "3.0.0-e2e-uefi", cmdline: "", compatible, key });
  return out;
}
