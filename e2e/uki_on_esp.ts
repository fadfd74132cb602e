/**
 * A signed UKI on a disk image, from the host (mtools): read it back, change
 * one byte of its `.cmdline` section (so the signature no longer covers the
 * file), and compute the PCR 11 a TPM reaches booting it, with systemd's own
 * calculator (systemd-measure), for the Secure Boot case.
 * @module
 */
import { join } from "node:path";
import { run } from "../imager/mod.ts";
import { peSection } from "../bundle/authenticode/mod.ts";

const MTOOLS = { MTOOLS_SKIP_CHECK: "1" };

/** The UKI at `path` on the ESP at `espOffset` of `image`. */
export async function readUkiFromImage(
  image: string,
  espOffset: bigint,
  path: string,
): Promise<Uint8Array> {
  const tmp = await Deno.makeTempFile({ suffix: ".efi" });
  try {
    await run("mcopy", ["-o", "-i", `${image}@@${espOffset}`, `::${path}`, tmp], { env: MTOOLS });
    return await Deno.readFile(tmp);
  } finally {
    await Deno.remove(tmp);
  }
}

/** Flip one byte in the `.cmdline` section of the UKI at `path` on the ESP at `espOffset`. */
export async function flipUkiCmdlineByte(
  image: string,
  espOffset: bigint,
  path: string,
): Promise<void> {
  const uki = await readUkiFromImage(image, espOffset, path);
  const cmdline = peSection(uki, ".cmdline"); // a view into `uki`
  if (!cmdline) throw new Error(`${path} has no .cmdline section`);
  cmdline[0] ^= 0x01;
  const tmp = await Deno.makeTempFile({ suffix: ".efi" });
  try {
    await Deno.writeFile(tmp, uki);
    await run("mcopy", ["-o", "-i", `${image}@@${espOffset}`, tmp, `::${path}`], { env: MTOOLS });
  } finally {
    await Deno.remove(tmp);
  }
}

/** The sections systemd-stub 252 measures, as systemd-measure names their options. */
const MEASURED = ["linux", "osrel", "cmdline", "initrd", "splash", "dtb", "pcrpkey"];

/**
 * PCR 11 (SHA-256 bank) after systemd-stub measured `uki` and the boot went
 * through `phases` (`enter-initrd:leave-initrd`), as `systemd-measure
 * calculate` computes it from the UKI's sections (as `peSection` cuts them:
 * the bytes the stub hashes in memory).
 */
export async function expectedPcr11(uki: Uint8Array, phases: string): Promise<string> {
  const dir = await Deno.makeTempDir();
  try {
    const args = ["calculate", "--bank=SHA256", `--phase=${phases}`, "--json=short"];
    for (const name of MEASURED) {
      const bytes = peSection(uki, `.${name}`);
      if (!bytes) continue;
      const file = join(dir, name);
      await Deno.writeFile(file, bytes);
      args.push(`--${name}=${file}`);
    }
    const out = await run("/lib/systemd/systemd-measure", args);
    const doc = JSON.parse(out) as { sha256: { phase: string; pcr: number; hash: string }[] };
    const hit = doc.sha256.find((v) => v.pcr === 11 && v.phase === phases);
    if (!hit) throw new Error(`systemd-measure gave no PCR 11 for ${phases}: ${out}`);
    return hit.hash;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
