/**
 * `fsck.fat -n` on the ESP of a VM's disk image, read from the host, for the
 * QEMU power-cut cases (e2e/upgrade_power_cut_step.ts). A power cut while
 * the ESP is mounted read-write leaves Linux's dirty bit set in the primary
 * boot sector (so it also differs from its backup at offset 65): fsck.fat
 * then exits 1 with only those two findings. A cut also leaves FSInfo's free
 * cluster count stale (Linux writes that hint back only when it syncs the
 * superblock, and the FAT specification makes it advisory: the FAT itself
 * is the truth). Those are what a cut is expected to leave. Anything else
 * (lost clusters, a broken directory entry, FATs that differ) is damage.
 */
import { join } from "node:path";
import { PARTITION_TYPE, readImageGpt } from "../layout/mod.ts";

/** What `fsck.fat -n` said of a filesystem, the dirty bit set apart. */
export interface FatFindings {
  /** The dirty bit was set (the volume was mounted read-write when it was cut). */
  dirty: boolean;
  /** FSInfo's free cluster count was stale (an advisory hint). */
  staleFreeCount: boolean;
  /** Every other finding: empty for a clean filesystem. */
  damage: string[];
}

/** The lines fsck.fat 4.2 prints about the dirty bit and nothing else. */
const DIRTY_ONLY = [
  /^There are differences between boot sector and its backup\.$/,
  /^This is mostly harmless\. Differences: \(offset:original\/backup\)$/,
  /^\s*65:0[0-9a-f]\/0[0-9a-f]$/,
  /^\s*Not automatically fixing this\.$/,
  /^Dirty bit is set\. Fs was not properly unmounted and some data may be corrupt\.$/,
  /^\s*Automatically removing dirty bit\.$/,
  /^Leaving filesystem unchanged\.$/,
];
/** fsck.fat's line about a stale FSInfo free count, and the one after it. */
const STALE_FREE_COUNT = /^Free cluster summary wrong \(\d+ vs\. really \d+\)$/;
const AUTO_CORRECTING = /^\s*Auto-correcting\.$/;

/** Sorts `fsck.fat -n`'s output into the dirty bit and damage. Pure. */
export function fatFindings(output: string): FatFindings {
  const lines = output.split("\n").map((l) => l.trimEnd()).filter((l) => l.trim() !== "");
  const body = lines.filter((l) =>
    !/^fsck\.fat \d/.test(l) && !/: \d+ files, \d+\/\d+ clusters$/.test(l)
  );
  const staleFreeCount = body.some((l) => STALE_FREE_COUNT.test(l));
  const damage: string[] = [];
  body.forEach((l, i) => {
    if (DIRTY_ONLY.some((re) => re.test(l)) || STALE_FREE_COUNT.test(l)) return;
    if (AUTO_CORRECTING.test(l) && STALE_FREE_COUNT.test(body[i - 1] ?? "")) return;
    damage.push(l);
  });
  return { dirty: body.some((l) => l.startsWith("Dirty bit is set")), staleFreeCount, damage };
}

/**
 * Copies the ESP out of `image` (found by its GPT type) into `workDir` and
 * runs `fsck.fat -n` on the copy, so the image is only read.
 */
export async function checkEsp(image: string, workDir: string): Promise<FatFindings> {
  const { table } = await readImageGpt(image);
  const esp = table.partitions.find((p) => p.type === PARTITION_TYPE.EFI_SYSTEM);
  if (!esp) throw new Error(`${image} has no EFI System partition`);
  const copy = join(workDir, "esp-check.img");
  const sectors = esp.lastLba - esp.firstLba + 1;
  const dd = await new Deno.Command("dd", {
    args: [
      `if=${image}`,
      `of=${copy}`,
      "bs=512",
      `skip=${esp.firstLba}`,
      `count=${sectors}`,
      "conv=sparse",
      "status=none",
    ],
  }).output();
  if (!dd.success) throw new Error(`dd: ${new TextDecoder().decode(dd.stderr)}`);
  try {
    return await checkFat(copy);
  } finally {
    await Deno.remove(copy).catch(() => {});
  }
}

/** `fsck.fat -n` of a file holding a FAT file system (only read), sorted by {@link fatFindings}. */
export async function checkFat(fsImage: string): Promise<FatFindings> {
  const out = await new Deno.Command("fsck.fat", { args: ["-n", fsImage] }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  const findings = fatFindings(text);
  if (
    !out.success && findings.damage.length === 0 && !findings.dirty && !findings.staleFreeCount
  ) {
    findings.damage.push(`fsck.fat exited ${out.code}: ${text.trim()}`);
  }
  return findings;
}
