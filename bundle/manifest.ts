/**
 * The signed manifest of an upgrade bundle: what the slot's files are (name,
 * size, SHA-256), which machines may run them (`compatible`), the image
 * version, the kernel command line and the system extensions its root image
 * carries. Signed as a JWS (compact form) with an
 * Ed25519 key; verification allows EdDSA only, so `alg: none` or an HMAC
 * keyed with the public key can never pass.
 */
import * as v from "valibot";
import { CompactSign, compactVerify, decodeProtectedHeader } from "jose";
import { BundleError } from "./errors.ts";
import { checkBundleCmdline } from "./bundle_cmdline.ts";
import type { SigningKey, TrustedKey } from "./signing_key.ts";

/** The only JWS algorithm a bundle may use. */
export const ALLOWED_ALGORITHMS = ["EdDSA"] as const;

/** The files of a slot, in the order the bundle carries them. */
export const SLOT_FILES = ["vmlinuz", "initramfs.img", "root.img"] as const;
export type SlotFileName = typeof SLOT_FILES[number];

/**
 * The files of a Secure Boot bundle (`boot: "uki"`), in order: each slot's
 * Unified Kernel Image, signed with the owner's db key (its command line,
 * slot word and root hash included, is inside the signature), then the root
 * image. The node installs the target slot's UKI and checks both against the
 * enrolled db before it writes a byte.
 */
export const UKI_SLOT_FILES = ["machined-a.efi", "machined-b.efi", "root.img"] as const;
export type UkiSlotFileName = typeof UKI_SLOT_FILES[number];

/**
 * The largest UKI a Secure Boot bundle may carry (today's are 16 MiB: kernel,
 * initramfs, stub). The node holds a UKI in memory to check its signature
 * before writing it, so the manifest's promise is refused past this at the head.
 */
export const MAX_UKI_BYTES = 64 << 20;

/** How a bundle's slot boots: loose kernel and initramfs, or a signed UKI per slot. */
export type BundleBoot = "linux" | "uki";

/** The file names a bundle of `boot` carries, in order. */
export function bundleFileNames(boot: BundleBoot | undefined): readonly string[] {
  return boot === "uki" ? UKI_SLOT_FILES : SLOT_FILES;
}

/** What a machine is: a bundle runs only where both fields match. */
export interface Compatible {
  arch: string;
  board: string;
}

/** The board of a UEFI image (a PC, QEMU's q35 and virt included): systemd-boot's slots. */
export const UEFI_BOARD = "uefi-pc";

/** The board of a Raspberry Pi 3 image (`image --board rpi3`): config.txt's slots. */
export const RPI3_BOARD = "rpi3";

/** This machine's {@link Compatible}. */
export function hostCompatible(): Compatible {
  return { arch: Deno.build.arch, board: UEFI_BOARD };
}

const Hex64 = v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, "a lowercase hex SHA-256"));

/** At most this many system extensions in a slot (machined-init's cap). */
export const MAX_BUNDLE_EXTENSIONS = 16;

/**
 * A system extension the slot's root image carries (imager/extensions.ts):
 * listed in the signed manifest so a node can see, before writing a byte,
 * which extensions the bundle keeps. Its bytes are inside root.img, whose
 * hash is in `files`.
 */
const ExtensionSchema = v.strictObject({
  name: v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9_-]{0,31}$/, "an extension name")),
  version: v.pipe(v.string(), v.regex(/^[A-Za-z0-9][\w.+~-]{0,63}$/, "an extension version")),
  sha256: Hex64,
  size: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(2 ** 40)),
});

/** One entry of a manifest's `extensions`. */
export type ManifestExtension = v.InferOutput<typeof ExtensionSchema>;

const ManifestSchema = v.pipe(
  v.strictObject({
    format: v.literal(1),
    compatible: v.strictObject({ arch: v.string(), board: v.string() }),
    version: v.pipe(v.string(), v.minLength(1), v.maxLength(64), v.regex(/^[\w.+~-]+$/)),
    /** Absent on a plain bundle (older nodes refuse the field, and so any UKI bundle). */
    boot: v.optional(v.literal("uki")),
    cmdline: v.pipe(v.string(), v.maxLength(4096)),
    /** Absent when the slot has none (older nodes refuse the field). */
    extensions: v.optional(
      v.pipe(v.array(ExtensionSchema), v.minLength(1), v.maxLength(MAX_BUNDLE_EXTENSIONS)),
    ),
    files: v.array(v.strictObject({
      name: v.picklist([...SLOT_FILES, ...UKI_SLOT_FILES]),
      size: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(2 ** 40)),
      sha256: Hex64,
    })),
  }),
  v.check((m) => {
    const names = bundleFileNames(m.boot);
    return m.files.length === names.length && m.files.every((x, i) => x.name === names[i]);
  }, (i) => `files must be exactly ${bundleFileNames(i.input.boot).join(", ")} in that order`),
  v.check(
    (m) => new Set(m.extensions?.map((e) => e.name)).size === (m.extensions?.length ?? 0),
    "extensions must have unique names",
  ),
  v.check(
    (m) => m.boot !== "uki" || m.cmdline === "",
    "a UKI bundle's cmdline must be empty: the command line is inside each signed UKI",
  ),
  v.check(
    (m) => m.files.every((f) => !f.name.endsWith(".efi") || f.size <= MAX_UKI_BYTES),
    `a UKI is at most ${MAX_UKI_BYTES} bytes (the node holds it in memory to check it)`,
  ),
);

/** A bundle's manifest (its JWS payload). */
export type Manifest = v.InferOutput<typeof ManifestSchema>;

/** Sign `manifest` with `key`: the JWS compact string a bundle carries. */
export async function signManifest(manifest: Manifest, key: SigningKey): Promise<string> {
  const checked = v.parse(ManifestSchema, manifest);
  checkBundleCmdline(checked.cmdline); // refused at build, as the node would refuse it
  return await new CompactSign(new TextEncoder().encode(JSON.stringify(checked)))
    .setProtectedHeader({ alg: "EdDSA", kid: key.kid, typ: "machined-bundle+jws" })
    .sign(key.privateKey);
}

/**
 * Verify a bundle's JWS against the trusted keys and this machine: the
 * algorithm first (before any key is looked at), then the key id, the
 * signature, the payload's shape and `compatible`.
 * @throws BundleError wrong-algorithm, unknown-key, bad-signature,
 *   bad-manifest or wrong-compatible.
 */
export async function verifyManifest(
  jws: string,
  trusted: readonly TrustedKey[],
  machine: Compatible,
): Promise<{ manifest: Manifest; kid: string }> {
  let header: { alg?: string; kid?: unknown };
  try {
    header = decodeProtectedHeader(jws);
  } catch (e) {
    throw new BundleError("bad-manifest", `the signature header is unreadable: ${msg(e)}`);
  }
  if (!(ALLOWED_ALGORITHMS as readonly (string | undefined)[]).includes(header.alg)) {
    throw new BundleError(
      "wrong-algorithm",
      `alg ${JSON.stringify(header.alg ?? null)} is not one of ${ALLOWED_ALGORITHMS.join(", ")}`,
    );
  }
  if (typeof header.kid !== "string") {
    const got = header.kid === undefined ? "no kid" : `a kid of type ${typeof header.kid}`;
    throw new BundleError(
      "unknown-key",
      `the signature header has ${got} (a key id string is required)`,
    );
  }
  const key = trusted.find((k) => k.kid === header.kid);
  if (!key) {
    throw new BundleError(
      "unknown-key",
      `key ${header.kid ?? "(no kid)"} is not among the ${trusted.length} trusted keys` +
        " (machine.upgrade.trusted_keys)",
    );
  }
  let payload: Uint8Array;
  try {
    payload = (await compactVerify(jws, key.publicKey, { algorithms: [...ALLOWED_ALGORITHMS] }))
      .payload;
  } catch (e) {
    throw new BundleError(
      "bad-signature",
      `the signature does not verify with ${key.kid}: ${msg(e)}`,
    );
  }
  const manifest = parseManifest(payload);
  const c = manifest.compatible;
  if (c.arch !== machine.arch || c.board !== machine.board) {
    throw new BundleError(
      "wrong-compatible",
      `built for ${c.arch}/${c.board}, this machine is ${machine.arch}/${machine.board}`,
    );
  }
  return { manifest, kid: key.kid };
}

function parseManifest(payload: Uint8Array): Manifest {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(payload));
  } catch (e) {
    throw new BundleError("bad-manifest", `the manifest is not JSON: ${msg(e)}`);
  }
  const r = v.safeParse(ManifestSchema, json);
  if (!r.success) {
    const issue = r.issues[0];
    const path = issue.path?.map((p) => String(p.key)).join(".") ?? "";
    throw new BundleError("bad-manifest", `${path || "manifest"}: ${issue.message}`);
  }
  checkBundleCmdline(r.output.cmdline);
  return r.output;
}

function msg(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
