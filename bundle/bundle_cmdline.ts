/**
 * What a bundle's kernel command line may carry. The node writes the loader
 * entry from it (upgrade/slot_plan.ts) and owns the entry's structure and the
 * words that say which slot booted and which root it mounts: a bundle
 * supplies data, never syntax (issue 28, holes 1 and 2).
 *
 * - Printable ASCII only: a newline, tab or any control character would add
 *   lines to the loader entry (a second `linux` line, the slot words pushed
 *   onto a `version` line).
 * - Before `--` (the words the kernel and machined-init read), none of
 *   `machined.slot`, `machined.root.sha256`, `machined.root.fstype` or any
 *   other `machined.root.*` key: with a second `machined.slot=`, machined and
 *   machined-init could disagree on the booted slot and an upgrade would be
 *   written into the running one.
 * - One exception, `machined.root.verity=<root hash>,<salt>,<data blocks>`
 *   (the bundle's own root image's dm-verity tree): it is parsed, checked and
 *   taken out here, and the node writes it back itself.
 *
 * After `--` come init's arguments (the program machined-init runs), which
 * nothing parses for machined words; they get the character rule only.
 * @module
 */
import { BundleError } from "./errors.ts";

/** The dm-verity parameters a bundle names for its root image. */
export interface BundleVerity {
  rootHash: string;
  salt: string;
  dataBlocks: number;
}

/** A bundle's command line, checked: the words it supplies and its verity tree. */
export interface BundleCmdline {
  /** The command line without the verity word (the node adds its own words). */
  words: string;
  verity?: BundleVerity;
}

/** The key of the one node word a bundle may carry. */
export const VERITY_KEY = "machined.root.verity";

/** Keys only the node writes: a bundle carrying one is refused. */
export function isNodeOwnedKey(key: string): boolean {
  return key === "machined.slot" || key === "machined.root" || key.startsWith("machined.root.");
}

const PRINTABLE = /^[\x20-\x7e]*$/;
const HEX64 = /^[0-9a-f]{64}$/;
/** machined-init's salt: 1 to 256 bytes, as lowercase hex. */
const SALT = /^(?:[0-9a-f]{2}){1,256}$/;

/**
 * Check a bundle's command line and take its verity word out. Pure.
 * @throws BundleError bad-cmdline naming the offending character or word.
 */
export function checkBundleCmdline(cmdline: string): BundleCmdline {
  if (!PRINTABLE.test(cmdline)) {
    const at = [...cmdline].findIndex((c) => !PRINTABLE.test(c));
    const code = cmdline.codePointAt(at)!.toString(16).padStart(2, "0");
    throw new BundleError(
      "bad-cmdline",
      `the command line holds U+${code.toUpperCase()} at ${at}: only printable ASCII may be ` +
        "written into a loader entry",
    );
  }
  const words = cmdline.split(" ").filter((w) => w !== "");
  const end = words.indexOf("--");
  const kernelWords = end < 0 ? words : words.slice(0, end);
  let verity: BundleVerity | undefined;
  const kept: string[] = [];
  for (const w of kernelWords) {
    const key = w.split("=", 1)[0];
    if (key === VERITY_KEY) {
      if (verity) throw new BundleError("bad-cmdline", `${VERITY_KEY}= appears twice`);
      verity = parseVerityValue(w.slice(key.length + 1));
      continue;
    }
    if (isNodeOwnedKey(key)) {
      throw new BundleError(
        "bad-cmdline",
        `the command line carries ${JSON.stringify(w)}: ${key} is the node's to write ` +
          "(the booted slot and its root), never a bundle's",
      );
    }
    kept.push(w);
  }
  const rest = end < 0 ? [] : words.slice(end);
  const out = [...kept, ...rest].join(" ");
  return verity ? { words: out, verity } : { words: out };
}

/**
 * `<root hash>,<salt>,<data blocks>`: a lowercase SHA-256 in hex, a salt of
 * 1 to 256 bytes in lowercase hex and a positive block count (what
 * machined-init's parser accepts, native-ops/init/src/bootargs.rs).
 * @throws BundleError bad-cmdline when it is anything else.
 */
export function parseVerityValue(value: string): BundleVerity {
  const [rootHash, salt, blocks, ...more] = value.split(",");
  const dataBlocks = Number(blocks);
  if (
    more.length > 0 || !HEX64.test(rootHash ?? "") || !SALT.test(salt ?? "") ||
    !/^[1-9]\d{0,11}$/.test(blocks ?? "") || !Number.isSafeInteger(dataBlocks)
  ) {
    throw new BundleError(
      "bad-cmdline",
      `${VERITY_KEY}=${value.slice(0, 80)} is not <root hash>,<salt>,<data blocks> ` +
        "(64 hex digits, 2 to 512 hex digits, a positive count)",
    );
  }
  return { rootHash, salt, dataBlocks };
}
