/**
 * Test helpers: small in-memory bundles signed with a fresh key, a stream
 * of them in chunks of a chosen size, and fake boot partitions (an ESP, a
 * Pi 3's FAT) with the boot each one's firmware and machined-init would do.
 */
import { createHash } from "node:crypto";
import { CompactSign } from "jose";
import { loaderConf, loaderEntry, slotCmdline, ukiLoaderEntry } from "../layout/mod.ts";
import { FakeEspBackend } from "../platform/esp/mod.ts";
import {
  parseOsPrefix,
  PI_BOOT_FILES,
  piCmdlineTxt,
  piConfigTxt,
  piSlotPaths,
  piSlotTxt,
  piTrialTxt,
} from "../layout/mod.ts";
import { piTriedTxt } from "./pi_slot_plan.ts";
import {
  bootChoice,
  ENTRIES_DIR,
  type Entry,
  entryGeneration,
  parseEntryName,
  type Slot,
} from "./entries.ts";
import { bundleFileNames, encodeBundleHead } from "../bundle/mod.ts";
import {
  type Compatible,
  hostCompatible,
  type Manifest,
  signManifest,
  SLOT_FILES,
} from "../bundle/mod.ts";
import {
  generateSigningKey,
  loadSigningKey,
  loadTrustedKey,
  type SigningKey,
  type TrustedKey,
} from "../bundle/mod.ts";

/** A signing key and the trusted key a node would list for it. */
export async function testKeys(): Promise<
  { signing: SigningKey; trusted: TrustedKey; publicPem: string }
> {
  const g = await generateSigningKey();
  return {
    signing: await loadSigningKey(g.privatePem),
    trusted: await loadTrustedKey(g.publicPem),
    publicPem: g.publicPem,
  };
}

/** Three small slot files whose bytes depend on `version`. */
export function testFiles(version: string): Uint8Array[] {
  return SLOT_FILES.map((n, i) =>
    new TextEncoder().encode(`${n} of ${version} `.repeat(50 + i * 7))
  );
}

/** A whole bundle in memory, and its manifest. */
export async function testBundle(o: {
  key: SigningKey;
  version?: string;
  compatible?: Compatible;
  cmdline?: string;
  files?: Uint8Array[];
  /** Change the manifest after hashing (to lie about a file). */
  edit?: (m: Manifest) => void;
  /** Sign the manifest as is, skipping the builder's checks (a hostile signer's bundle). */
  unchecked?: boolean;
  /** A Secure Boot bundle: `files` are the two UKIs and the root image. */
  boot?: "uki";
}): Promise<{ bytes: Uint8Array; manifest: Manifest; files: Uint8Array[] }> {
  const version = o.version ?? "2.0.0";
  const files = o.files ?? testFiles(version);
  const manifest: Manifest = {
    format: 1,
    compatible: o.compatible ?? hostCompatible(),
    version,
    ...(o.boot ? { boot: o.boot } : {}),
    cmdline: o.cmdline ?? (o.boot ? "" : "console=ttyS0 panic=5"),
    files: (bundleFileNames(o.boot) as Manifest["files"][number]["name"][]).map((name, i) => ({
      name,
      size: files[i].length,
      sha256: createHash("sha256").update(files[i]).digest("hex"),
    })),
  };
  o.edit?.(manifest);
  const jws = o.unchecked
    ? await signUnchecked(manifest, o.key)
    : await signManifest(manifest, o.key);
  return { bytes: concat([encodeBundleHead(jws), ...files]), manifest, files };
}

/** A JWS over `manifest` exactly as given, as a signer that skips signManifest's checks makes it. */
async function signUnchecked(manifest: Manifest, key: SigningKey): Promise<string> {
  return await new CompactSign(new TextEncoder().encode(JSON.stringify(manifest)))
    .setProtectedHeader({ alg: "EdDSA", kid: key.kid, typ: "machined-bundle+jws" })
    .sign(key.privateKey);
}

/** `bytes` as a stream of `size`-byte chunks. */
export async function* chunked(bytes: Uint8Array, size = 1000): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.slice(at, at + size);
}

/** Concatenate byte arrays. */
export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * An ESP as the imager writes it: slot A (generation 1) and its copy B (0),
 * both blessed; `titled: false` leaves the version out of the entries' titles,
 * as the imager does.
 */
export function imagedEsp(version = "1.0.0", titled = true): FakeEspBackend {
  const files = testFiles(version);
  const init: Record<string, Uint8Array | string> = { "/loader/loader.conf": loaderConf() };
  for (const slot of ["A", "B"] as const) {
    SLOT_FILES.forEach((n, i) => (init[`/${slot}/${n}`] = files[i]));
    const sha256 = createHash("sha256").update(files[2]).digest("hex");
    init[`/loader/entries/machined-${slot.toLowerCase()}.conf`] = loaderEntry(
      slot,
      slotCmdline("console=ttyS0", slot, { sha256, fstype: "squashfs" }),
      { generation: slot === "A" ? 1 : 0, version: titled ? version : undefined },
    );
  }
  return new FakeEspBackend(init);
}

/** An ESP as a Secure Boot image has it: a UKI and root image per slot, A booted. */
export function ukiEsp(): FakeEspBackend {
  const init: Record<string, string> = { "/loader/loader.conf": loaderConf() };
  for (const slot of ["A", "B"] as const) {
    init[`/${slot}/machined.efi`] = `UKI of 1.0.0 in ${slot}`;
    init[`/${slot}/root.img`] = `root of 1.0.0 in ${slot}`;
    init[`/loader/entries/machined-${slot.toLowerCase()}.conf`] = ukiLoaderEntry(slot, {
      generation: slot === "A" ? 1 : 0,
      version: "1.0.0",
    });
  }
  return new FakeEspBackend(init);
}

/**
 * One boot of a fake ESP, as systemd-boot and machined-init do it: choose
 * the entry, do the loader's counter rename, and check the slot's root image
 * against the entry's `machined.root.sha256=` (machined-init's refusal).
 * Returns the slot and whether its root verified.
 */
export function bootFake(
  esp: FakeEspBackend,
): { slot: Slot; entry: string; rootOk: boolean } | undefined {
  const entries: Entry[] = [];
  for (const [path] of esp.files) {
    if (!path.startsWith(`${ENTRIES_DIR}/`)) continue;
    const file = path.slice(ENTRIES_DIR.length + 1);
    const name = parseEntryName(file);
    if (name) entries.push({ file, name, generation: entryGeneration(esp.text(path)!) });
  }
  const choice = bootChoice(entries);
  if (!choice) return undefined;
  const from = `${ENTRIES_DIR}/${choice.entry.file}`;
  const text = esp.text(from)!;
  esp.files.delete(from);
  esp.files.set(`${ENTRIES_DIR}/${choice.renamedTo}`, new TextEncoder().encode(text));
  const slot = choice.entry.name.slot;
  const want = /machined\.root\.sha256=([0-9a-f]{64})/.exec(text)?.[1];
  const root = esp.files.get(`/${slot}/root.img`);
  const rootOk = !!root && createHash("sha256").update(root).digest("hex") === want;
  return { slot, entry: choice.renamedTo, rootOk };
}

/**
 * A Raspberry Pi 3 boot FAT as the imager writes it (imager/rpi/pi_disk.ts):
 * config.txt, slot.txt naming A (B its fallback), no trial, both slots complete with their
 * cmdline.txt and a device tree.
 */
export function imagedPiFat(version = "1.0.0"): FakeEspBackend {
  const files = testFiles(version);
  const sha256 = createHash("sha256").update(files[2]).digest("hex");
  const init: Record<string, Uint8Array | string> = {
    [PI_BOOT_FILES.config]: piConfigTxt(),
    [PI_BOOT_FILES.slot]: piSlotTxt("A", "B"),
    [PI_BOOT_FILES.trial]: piTrialTxt(),
  };
  for (const slot of ["A", "B"] as const) {
    SLOT_FILES.forEach((n, i) => (init[`/${slot}/${n}`] = files[i]));
    init[`/${slot}/bcm2837-rpi-3-b.dtb`] = "dtb";
    init[piSlotPaths(slot).cmdline] = piCmdlineTxt(
      slotCmdline("console=ttyS1,115200", slot, { sha256, fstype: "squashfs" }),
    );
  }
  return new FakeEspBackend(init);
}

/**
 * One boot of a fake Pi FAT, as the firmware and machined-init do it:
 * trial.txt's os_prefix wins over slot.txt's (a prefix without a kernel is
 * ignored), machined-init consumes an armed try, then checks the root image
 * against the slot's cmdline.txt. Returns the slot and whether its root verified.
 */
export function bootPiFake(esp: FakeEspBackend): { slot: Slot; rootOk: boolean } | undefined {
  const trial = parseOsPrefix(esp.text(PI_BOOT_FILES.trial) ?? "");
  const usable = (s?: Slot) => s && esp.files.has(piSlotPaths(s).kernel) ? s : undefined;
  const slot = usable(trial) ?? usable(parseOsPrefix(esp.text(PI_BOOT_FILES.slot) ?? ""));
  if (!slot) return undefined;
  if (trial === slot) {
    esp.files.set(PI_BOOT_FILES.trial, new TextEncoder().encode(piTriedTxt(slot)));
  }
  const want = /machined\.root\.sha256=([0-9a-f]{64})/.exec(
    esp.text(piSlotPaths(slot).cmdline) ?? "",
  )?.[1];
  const root = esp.files.get(piSlotPaths(slot).rootImage);
  const rootOk = !!root && createHash("sha256").update(root).digest("hex") === want;
  return { slot, rootOk };
}
