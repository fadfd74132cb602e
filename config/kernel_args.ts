/**
 * Operator kernel arguments (`machine.kernel.args {add, remove}`, issue 32)
 * and the words they may never touch. The node owns every `machined.*` word
 * (the booted slot, its root and verity tree: issue 28), the words that make
 * machined PID 1 (`rdinit=`, `init=`, `root=`, the `DENO_*` environment
 * machined-init passes on), `panic=` (a panicking trial slot must reboot so
 * boot counting can fall back) and `--` (after it come init's arguments). A
 * `console=` may be added, never removed: the image's serial console is how a
 * failed boot is read. Pure; shared by config validation, the install and
 * upgrade planners (upgrade/slot_cmdline.ts) and the image build.
 * @module
 */

/** The kernel's COMMAND_LINE_SIZE on x86 (arm64's is 2048 too): a longer line is cut. */
export const COMMAND_LINE_SIZE = 2048;
/** At most this many words in `add` and in `remove`. */
export const MAX_KERNEL_ARGS = 64;
/** At most this many bytes in one word. */
export const MAX_KERNEL_ARG_BYTES = 256;

/** `machine.kernel.args`: words added before `--`, and words (or keys) taken out. */
export interface KernelArgs {
  readonly add: readonly string[];
  readonly remove: readonly string[];
}

/** A kernel argument that cannot be applied (config error or an overlong line). */
export class KernelArgsError extends Error {
  override name = "KernelArgsError";
}

const WORD = /^[\x21-\x7e]+$/;

/** The key of a word: what comes before its first `=`. Pure. */
export function argKey(word: string): string {
  return word.split("=", 1)[0];
}

/** True for a key only the node writes (see the module doc). Pure. */
export function isNodeKernelKey(key: string): boolean {
  return key.startsWith("machined.") || key === "machined" || key === "--" ||
    ["root", "init", "rdinit", "panic"].includes(key) || key.startsWith("DENO_");
}

/**
 * Why `word` cannot be in `add` (or `remove` when `removing`), or undefined
 * when it can. Pure.
 */
export function kernelArgProblem(word: string, removing = false): string | undefined {
  if (!WORD.test(word)) {
    return "a kernel argument is one word of printable ASCII: no space, tab, newline or " +
      "control character";
  }
  if (word.length > MAX_KERNEL_ARG_BYTES) {
    return `a kernel argument is at most ${MAX_KERNEL_ARG_BYTES} bytes (${word.length} given)`;
  }
  const key = argKey(word);
  if (isNodeKernelKey(key)) {
    return `${key} is the node's to write (its slot, root and PID 1), never config's`;
  }
  if (removing && key === "console") {
    return "the image's console= cannot be removed (add another console instead)";
  }
  return undefined;
}

/**
 * `cmdline` with `args` applied before `--`: every word equal to a `remove`
 * entry, or whose key is a `remove` entry that has no `=`, taken out; then the
 * `add` words not already present appended in order. Node words are left as
 * they are. Pure.
 * @throws KernelArgsError when an entry is refused ({@link kernelArgProblem}).
 */
export function applyKernelArgs(cmdline: string, args: KernelArgs | undefined): string {
  if (!args || (args.add.length === 0 && args.remove.length === 0)) return cmdline;
  for (const [list, removing] of [[args.add, false], [args.remove, true]] as const) {
    for (const w of list) {
      const problem = kernelArgProblem(w, removing);
      if (problem) throw new KernelArgsError(`kernel argument ${JSON.stringify(w)}: ${problem}`);
    }
  }
  const words = cmdline.split(" ").filter((w) => w !== "");
  const end = words.indexOf("--");
  const head = end < 0 ? words : words.slice(0, end);
  const tail = end < 0 ? [] : words.slice(end);
  const removed = (w: string) =>
    args.remove.some((r) => r === w || (!r.includes("=") && r === argKey(w)));
  const kept = head.filter((w) => isNodeKernelKey(argKey(w)) || !removed(w));
  for (const a of args.add) if (!kept.includes(a)) kept.push(a);
  return [...kept, ...tail].join(" ");
}

/**
 * Refuse a command line the kernel would cut (its terminating NUL counts).
 * @throws KernelArgsError naming the length and the limit.
 */
export function checkCmdlineSize(cmdline: string): string {
  const bytes = new TextEncoder().encode(cmdline).length;
  if (bytes + 1 > COMMAND_LINE_SIZE) {
    throw new KernelArgsError(
      `the kernel command line is ${bytes} bytes with machine.kernel.args; the kernel keeps ` +
        `${COMMAND_LINE_SIZE - 1} (COMMAND_LINE_SIZE) and would cut the rest`,
    );
  }
  return cmdline;
}

/** What KernelCmdlineStatus shows: the configured words and whether the booted line has them. */
export interface KernelArgsState {
  /** `add` words the booted line lacks, or `remove` words it still has. */
  pending: string[];
  /** The booted line's words before `--` (/proc/cmdline). */
  booted: string[];
  /** True when a reboot into a slot written since would apply `pending`. */
  rebootRequired: boolean;
}

/** Compare the configured args with the booted line (/proc/cmdline). Pure. */
export function kernelArgsState(args: KernelArgs, procCmdline: string): KernelArgsState {
  const words = procCmdline.trim().split(/\s+/).filter((w) => w !== "");
  const end = words.indexOf("--");
  const booted = end < 0 ? words : words.slice(0, end);
  const pending = [
    ...args.add.filter((a) => !booted.includes(a)),
    ...args.remove.filter((r) =>
      booted.some((w) => w === r || (!r.includes("=") && argKey(w) === r))
    )
      .map((r) => `-${r}`),
  ];
  return { pending, booted, rebootRequired: pending.length > 0 };
}

/**
 * The node word that records what `machine.kernel.args` changed on a line machined wrote
 * (`machined.args=` and base64url of `{"add":[…],"remove":[…]}`: the words it added and the
 * words it took out), so a later config can undo them: a word dropped from `add` leaves the
 * line, a word dropped from `remove` comes back. The kernel ignores it (a dotted word, as
 * every `machined.*` one).
 */
export const KERNEL_ARGS_RECORD_KEY = "machined.args";

/** What a line's record says machined changed on it. */
export interface KernelArgsRecord {
  readonly add: readonly string[];
  readonly remove: readonly string[];
}

/** The record word of `cmdline` decoded; undefined when it has none (or an unreadable one). Pure. */
export function readKernelArgsRecord(cmdline: string): KernelArgsRecord | undefined {
  const word = headWords(cmdline).head.find((w) => argKey(w) === KERNEL_ARGS_RECORD_KEY);
  if (!word) return undefined;
  try {
    const b64 = word.slice(KERNEL_ARGS_RECORD_KEY.length + 1).replaceAll("-", "+")
      .replaceAll("_", "/");
    const json = JSON.parse(
      new TextDecoder().decode(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))),
    );
    const list = (x: unknown) =>
      Array.isArray(x) && x.every((w) => typeof w === "string" && WORD.test(w));
    return list(json.add) && list(json.remove) ? { add: json.add, remove: json.remove } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `cmdline` with its previous record undone (the words it added taken out, the words it
 * removed put back before `--`), then `args` applied ({@link applyKernelArgs}), and a new
 * record of what that changed appended (none when nothing changed). Applying the same args
 * twice gives the same line. Pure.
 * @throws KernelArgsError when an entry is refused.
 */
export function applyRecordedKernelArgs(cmdline: string, args: KernelArgs): string {
  const record = readKernelArgsRecord(cmdline);
  const { head, tail } = headWords(cmdline);
  let base = head.filter((w) => argKey(w) !== KERNEL_ARGS_RECORD_KEY);
  if (record) {
    base = base.filter((w) => !record.add.includes(w));
    for (const w of record.remove) if (!base.includes(w)) base.push(w);
  }
  const applied = headWords(applyKernelArgs([...base, ...tail].join(" "), args)).head;
  const added = applied.filter((w) => !base.includes(w));
  const removed = base.filter((w) => !applied.includes(w));
  const words = [...applied];
  if (added.length + removed.length > 0) {
    const json = JSON.stringify({ add: added, remove: removed });
    const b64 = btoa(String.fromCharCode(...new TextEncoder().encode(json)))
      .replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
    words.push(`${KERNEL_ARGS_RECORD_KEY}=${b64}`);
  }
  return [...words, ...tail].join(" ");
}

function headWords(cmdline: string): { head: string[]; tail: string[] } {
  const words = cmdline.split(" ").filter((w) => w !== "");
  const end = words.indexOf("--");
  return end < 0
    ? { head: words, tail: [] }
    : { head: words.slice(0, end), tail: words.slice(end) };
}
