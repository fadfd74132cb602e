/**
 * What a kexec reboot boots, as pure functions of the ESP's loader entries:
 * the entry systemd-boot would boot next ({@link bootChoice}: the armed trial
 * `machined-b+3.conf` first, else the newest good one), its `linux`,
 * `initrd` and `options` lines, and the boot-counter rename the loader would
 * have done before starting it (`+3` → `+2-1`). kexec bypasses the firmware
 * and the loader, so machined does that rename itself; without it a trial
 * that kexecs into a panic would never run out of tries.
 */
import { bootChoice, ENTRIES_DIR, type Entry } from "./entries.ts";
import type { PlanStep } from "./slot_plan.ts";

/** Why no kexec plan could be made (the node then reboots cold). */
export class KexecPlanError extends Error {
  override name = "KexecPlanError";
  constructor(readonly reason: "no-entry" | "bad-entry", message: string) {
    super(message);
  }
}

/** The boot lines of a Type #1 loader entry. */
export interface EntryBoot {
  /** `linux`: the kernel, as an absolute ESP path (`/B/vmlinuz`). */
  linux?: string;
  /** Every `initrd` line, in order. */
  initrds: string[];
  /** The `options` lines joined by a space, as systemd-boot joins them. */
  options: string;
}

/** An ESP path as a loader entry may spell it (`\B\vmlinuz`, `B/vmlinuz`), made absolute. Pure. */
export function espPath(p: string): string {
  const slashed = p.replaceAll("\\", "/");
  return slashed.startsWith("/") ? slashed : `/${slashed}`;
}

/**
 * The `linux`, `initrd` and `options` lines of an entry's text (keys are
 * separated from values by whitespace; `#` starts a comment line). Pure.
 */
export function parseEntryBoot(text: string): EntryBoot {
  const out: EntryBoot = { initrds: [], options: "" };
  const options: string[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const m = /^(\S+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const [, key, value] = m;
    if (key === "linux") out.linux = espPath(value.trim());
    else if (key === "initrd") out.initrds.push(espPath(value.trim()));
    else if (key === "options") options.push(value.trim());
  }
  out.options = options.join(" ");
  return out;
}

/** What to kexec and which rename to do first. */
export interface KexecPlan {
  /** The entry file the loader would boot (`machined-b+3.conf`). */
  entry: string;
  /** Its name after the loader's counter rename (the same name when not counting). */
  renamedTo: string;
  kernel: string;
  initramfs?: string;
  cmdline: string;
  /** The rename and the directory sync; empty for an entry without a counter. */
  steps: PlanStep[];
}

/**
 * Plan a kexec into the entry the loader would boot next. `text` gives each
 * entry's file contents.
 * @throws KexecPlanError no-entry without an entry; bad-entry for one without
 *   `linux`, or with more than one `initrd` (kexec_file_load takes one).
 */
export function planKexec(entries: readonly Entry[], text: (e: Entry) => string): KexecPlan {
  const choice = bootChoice(entries);
  if (!choice) throw new KexecPlanError("no-entry", `no loader entry in ${ENTRIES_DIR}`);
  const { entry, renamedTo } = choice;
  const boot = parseEntryBoot(text(entry));
  if (!boot.linux) {
    throw new KexecPlanError("bad-entry", `${entry.file} has no linux line`);
  }
  if (boot.initrds.length > 1) {
    throw new KexecPlanError(
      "bad-entry",
      `${entry.file} has ${boot.initrds.length} initrd lines; kexec_file_load takes one`,
    );
  }
  const steps: PlanStep[] = renamedTo === entry.file ? [] : [
    { op: "rename", from: `${ENTRIES_DIR}/${entry.file}`, to: `${ENTRIES_DIR}/${renamedTo}` },
    { op: "syncDir", dir: ENTRIES_DIR },
  ];
  return {
    entry: entry.file,
    renamedTo,
    kernel: boot.linux,
    ...(boot.initrds[0] ? { initramfs: boot.initrds[0] } : {}),
    cmdline: boot.options,
    steps,
  };
}
